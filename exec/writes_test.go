package exec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kql-dev/kql/lang"
)

// TestStatementAccess classifies one value of every statement type lang
// declares, both forms of those with EXECUTE. The list of types is read
// from lang's source (every type with a statement() method), so a new
// statement fails this test until StatementAccess and this table name it:
// a writing statement cannot slip past the read-only guard unclassified.
func TestStatementAccess(t *testing.T) {
	cases := []struct {
		stmt lang.Statement
		want Access
	}{
		{&lang.ShowTopics{}, Reads},
		{&lang.ShowBrokers{}, Reads},
		{&lang.ShowCluster{}, Reads},
		{&lang.ShowGroups{}, Reads},
		{&lang.ShowPartitions{}, Reads},
		{&lang.DescribeTopic{}, Reads},
		{&lang.DescribeGroup{}, Reads},
		{&lang.Consume{}, Reads},
		{&lang.Consume{Follow: true}, Reads},
		{&lang.ShowSubjects{}, Reads},
		{&lang.DescribeSubject{}, Reads},
		{&lang.ShowSchemas{}, Reads},
		{&lang.ShowConfigs{}, Reads},
		{&lang.ShowACLs{}, Reads},
		{&lang.ExplainAccess{}, Reads},
		{&lang.ShowLogDirs{}, Reads},
		{&lang.ShowReassignments{}, Reads},
		{&lang.ShowQuorum{}, Reads},
		{&lang.ShowFeatures{}, Reads},
		{&lang.ShowShareGroups{}, Reads},
		{&lang.DescribeShareGroup{}, Reads},
		{&lang.ShowTransactions{}, Reads},
		{&lang.DescribeTransaction{}, Reads},
		{&lang.ShowHangingTransactions{}, Reads},
		{&lang.ShowUsers{}, Reads},
		{&lang.ShowQuotas{}, Reads},
		// EXPLAIN plans; it never runs what it explains.
		{&lang.Explain{Stmt: &lang.DropTopic{Topic: "t"}}, Reads},

		{&lang.Produce{}, Writes},
		{&lang.CreateTopic{}, Writes},
		{&lang.DropTopic{}, Writes},
		{&lang.AlterConfigs{}, Writes},
		{&lang.AlterPartitions{}, Writes},
		{&lang.DeleteGroup{}, Writes},
		{&lang.DeleteShareGroup{}, Writes},
		{&lang.Grant{}, Writes},
		{&lang.Grant{Deny: true}, Writes},
		{&lang.CreateUser{}, Writes},
		{&lang.AlterUser{}, Writes},
		{&lang.DropUser{}, Writes},
		{&lang.AlterQuota{}, Writes},

		{&lang.Insert{}, Reads},
		{&lang.Insert{Execute: true}, Writes},
		{&lang.Produce{From: &lang.ImportSource{Stdin: true}}, Writes},
		{&lang.ResetGroup{}, Reads},
		{&lang.ResetGroup{Execute: true}, Writes},
		{&lang.ResetShareGroup{}, Reads},
		{&lang.ResetShareGroup{Execute: true}, Writes},
		{&lang.DeleteRecords{}, Reads},
		{&lang.DeleteRecords{Execute: true}, Writes},
		{&lang.Revoke{}, Reads},
		{&lang.Revoke{Execute: true}, Writes},
		{&lang.AbortTransaction{}, Reads},
		{&lang.AbortTransaction{Execute: true}, Writes},
		{&lang.AlterReplicas{}, Reads},
		{&lang.AlterReplicas{Execute: true}, Writes},
		{&lang.CancelReassignment{}, Reads},
		{&lang.CancelReassignment{Execute: true}, Writes},
		{&lang.ElectLeaders{}, Reads},
		{&lang.ElectLeaders{Execute: true}, Writes},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		name := reflect.TypeOf(c.stmt).Elem().Name()
		covered[name] = true
		got := StatementAccess(c.stmt)
		if got == AccessUnknown {
			t.Errorf("%s is not classified: add it to StatementAccess (Reads or Writes)", name)
			continue
		}
		if got != c.want {
			t.Errorf("StatementAccess(%s %+v) = %v, want %v", name, c.stmt, got, c.want)
		}
		if WritesToCluster(c.stmt) != (c.want == Writes) {
			t.Errorf("WritesToCluster(%s %+v) = %v", name, c.stmt, !(c.want == Writes))
		}
	}
	declared := statementTypes(t)
	if len(declared) < 40 {
		t.Fatalf("found only %d statement types in lang's source: %v", len(declared), declared)
	}
	for _, name := range declared {
		if !covered[name] {
			t.Errorf("lang.%s is a statement this test does not classify: add it to StatementAccess and to this table", name)
		}
	}
}

// A statement the table does not know is refused, not let through.
func TestUnknownStatementCountsAsWriting(t *testing.T) {
	if !WritesToCluster(nil) {
		t.Fatal("an unclassified statement must count as writing")
	}
}

// statementTypes lists the types in package lang's non-test source that
// have a statement() method: every statement the parser can return.
func statementTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../lang", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Name.Name != "statement" || len(fn.Recv.List) != 1 {
					continue
				}
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				// Only exported types: the parser's own state has a
				// statement() helper too.
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					names = append(names, id.Name)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}
