package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// aclSettle bounds the wait for every broker's authorizer to apply a
// GRANT, DENY or REVOKE.
const aclSettle = 10 * time.Second

var aclBindingCols = []result.Column{
	col("principal", result.String), col("host", result.String), col("operation", result.String),
	col("permission", result.String), col("resource_type", result.String), col("resource_name", result.String),
	col("pattern_type", result.String),
}

// showACLCols are SHOW ACLS's columns (lang.MetaColumns).
var showACLCols = append(slices.Clone(aclBindingCols), col("matched_by", result.String))

// aclChangeCols are GRANT's, DENY's and REVOKE's: each binding and what
// happened to it.
var aclChangeCols = append(slices.Clone(aclBindingCols), col("result", result.String))

func bindingRow(b kafka.ACLBinding, extra any) result.Row {
	return result.Row{b.Principal, b.Host, b.Operation, b.Permission, b.ResourceType, b.ResourceName, b.PatternType, extra}
}

// How a binding applies to a named resource, in SHOW ACLS's matched_by.
const (
	matchLiteral  = "LITERAL"
	matchWildcard = "WILDCARD"
	matchPrefixed = "PREFIXED"
)

// aclMatch says how binding b applies to resource r, "" if it does not:
// as Kafka's authorizer finds a resource's bindings (the LITERAL name, the
// LITERAL '*' of the resource type, and every PREFIXED pattern that starts
// the name).
func aclMatch(b kafka.ACLBinding, r lang.ACLResource) string {
	if b.ResourceType != r.Kind.String() {
		return ""
	}
	switch {
	case b.PatternType == "LITERAL" && b.ResourceName == "*":
		return matchWildcard
	case b.PatternType == "LITERAL" && b.ResourceName == r.Name:
		return matchLiteral
	case b.PatternType == "PREFIXED" && strings.HasPrefix(r.Name, b.ResourceName):
		return matchPrefixed
	}
	return ""
}

// resourceFilter asks for every binding of r's resource type (and of
// principal, if given): which of them apply to r is decided here, with
// aclMatch, so the answer is the same on every broker version.
func resourceFilter(r *lang.ACLResource, principal *string) kafka.ACLFilter {
	f := kafka.ACLFilter{Principal: principal}
	if r != nil {
		f.ResourceType = r.Kind.String()
	}
	return f
}

func (s *Session) showACLs(ctx context.Context, st *lang.ShowACLs) (result.Result, error) {
	bindings, _, err := s.cl.DescribeACLs(ctx, resourceFilter(st.On, st.Principal))
	if err != nil {
		return nil, err
	}
	rows := []result.Row{}
	for _, b := range bindings {
		if st.On == nil {
			rows = append(rows, bindingRow(b, nil))
			continue
		}
		if m := aclMatch(b, *st.On); m != "" {
			rows = append(rows, bindingRow(b, m))
		}
	}
	return result.NewSlice(showACLCols, rows), nil
}

// grantBindings are the bindings a GRANT or DENY creates: one per
// operation.
func grantBindings(st *lang.Grant) []kafka.ACLBinding {
	perm, host, pattern := "ALLOW", "*", "LITERAL"
	if st.Deny {
		perm = "DENY"
	}
	if st.Host != nil {
		host = *st.Host
	}
	if st.Resource.Prefixed {
		pattern = "PREFIXED"
	}
	out := make([]kafka.ACLBinding, len(st.Operations))
	for i, op := range st.Operations {
		out[i] = kafka.ACLBinding{Principal: st.Principal, Host: host, Operation: op, Permission: perm,
			ResourceType: st.Resource.Kind.String(), ResourceName: st.Resource.Name, PatternType: pattern}
	}
	return out
}

func grantVerb(st *lang.Grant) string {
	if st.Deny {
		return "DENY"
	}
	return "GRANT"
}

func (s *Session) grant(ctx context.Context, st *lang.Grant) (result.Result, error) {
	verb := grantVerb(st)
	results, _, err := s.cl.CreateACLs(ctx, grantBindings(st))
	if err != nil {
		return nil, err
	}
	var rows []result.Row
	var created []kafka.ACLBinding
	var failed []error
	for _, r := range results {
		if r.Err != nil {
			rows = append(rows, bindingRow(r.Binding, "error: "+r.Err.Error()))
			failed = append(failed, r.Err)
			continue
		}
		rows = append(rows, bindingRow(r.Binding, "created"))
		created = append(created, r.Binding)
	}
	if len(created) == 0 {
		// Nothing was created: the refusal is the answer (an authorization
		// failure then names the principal kql is).
		return nil, oneCause(failed)
	}
	res := result.NewSlice(aclChangeCols, rows)
	if failed != nil {
		res.Failure = &result.PartialError{What: verb + " (some bindings were not created)", Missing: failed}
	}
	if !s.cl.WaitACLs(ctx, created, nil, aclSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: the bindings were created, but not every broker had applied them after %s; a request right now may still be decided without them", aclSettle))
	}
	return res, nil
}

// revokeFilters are REVOKE's DeleteAcls filters, one per operation: that
// exact pattern, the principal, the host (any without HOST) and either
// permission.
func revokeFilters(st *lang.Revoke) []kafka.ACLFilter {
	pattern := "LITERAL"
	if st.Resource.Prefixed {
		pattern = "PREFIXED"
	}
	name, principal := st.Resource.Name, st.Principal
	out := make([]kafka.ACLFilter, len(st.Operations))
	for i, op := range st.Operations {
		out[i] = kafka.ACLFilter{ResourceType: st.Resource.Kind.String(), ResourceName: &name, PatternType: pattern,
			Principal: &principal, Host: st.Host, Operation: op}
	}
	return out
}

// revokeMatches lists what REVOKE's filters match now, by asking
// DescribeAcls with exactly the filters DeleteAcls would get.
func (s *Session) revokeMatches(ctx context.Context, st *lang.Revoke) ([]kafka.ACLBinding, error) {
	seen := map[kafka.ACLBinding]bool{}
	var out []kafka.ACLBinding
	for _, f := range revokeFilters(st) {
		bs, _, err := s.cl.DescribeACLs(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, kafka.CompareACLs)
	return out, nil
}

func (s *Session) revoke(ctx context.Context, st *lang.Revoke) (result.Result, error) {
	if !st.Execute {
		bs, err := s.revokeMatches(ctx, st)
		if err != nil {
			return nil, err
		}
		rows := make([]result.Row, len(bs))
		for i, b := range bs {
			rows[i] = bindingRow(b, "would be removed")
		}
		res := result.NewSlice(aclChangeCols, rows)
		if len(bs) == 0 {
			res.Notes = append(res.Notes, "notice: no binding matches: REVOKE ... EXECUTE would remove nothing")
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("notice: a dry run: add EXECUTE to remove %s", countBindings(len(bs))))
		}
		return res, nil
	}
	dels, _, err := s.cl.DeleteACLs(ctx, revokeFilters(st))
	if err != nil {
		return nil, err
	}
	var rows []result.Row
	var removed []kafka.ACLBinding
	var failed []error
	for _, d := range dels {
		if d.Err != nil {
			failed = append(failed, d.Err)
			continue
		}
		for _, r := range d.Deleted {
			if r.Err != nil {
				rows = append(rows, bindingRow(r.Binding, "error: "+r.Err.Error()))
				failed = append(failed, r.Err)
				continue
			}
			rows = append(rows, bindingRow(r.Binding, "removed"))
			removed = append(removed, r.Binding)
		}
	}
	if len(rows) == 0 && failed != nil {
		return nil, oneCause(failed)
	}
	slices.SortStableFunc(rows, func(a, b result.Row) int { return compareRows(a, b) })
	res := result.NewSlice(aclChangeCols, rows)
	if failed != nil {
		res.Failure = &result.PartialError{What: "REVOKE (some filters or bindings failed)", Missing: failed}
	}
	if len(rows) == 0 {
		res.Notes = append(res.Notes, "notice: no binding matched: nothing was removed")
	}
	if len(removed) > 0 && !s.cl.WaitACLs(ctx, nil, removed, aclSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: the bindings were removed, but not every broker had applied it after %s", aclSettle))
	}
	return res, nil
}

// compareRows orders binding rows as kafka.CompareACLs does.
func compareRows(a, b result.Row) int {
	bind := func(r result.Row) kafka.ACLBinding {
		return kafka.ACLBinding{Principal: r[0].(string), Host: r[1].(string), Operation: r[2].(string), Permission: r[3].(string),
			ResourceType: r[4].(string), ResourceName: r[5].(string), PatternType: r[6].(string)}
	}
	return kafka.CompareACLs(bind(a), bind(b))
}

func countBindings(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "binding", "bindings")) }

// aclConfirmation is the question before a GRANT, DENY or REVOKE EXECUTE:
// what changes, for whom, and for REVOKE how many bindings go (from the
// dry run's DescribeAcls; without it, the question is asked without the
// count).
func (s *Session) aclConfirmation(ctx context.Context, stmt lang.Statement) string {
	switch st := stmt.(type) {
	case *lang.Grant:
		verb := "grant"
		if st.Deny {
			verb = "deny"
		}
		host := "from every host"
		if st.Host != nil {
			host = "from host " + *st.Host
		}
		return fmt.Sprintf("%s %s on %s to %s, %s?", verb, strings.Join(st.Operations, ", "),
			aclResourceText(st.Resource), st.Principal, host)
	case *lang.Revoke:
		q := fmt.Sprintf("revoke %s on %s from %s", strings.Join(st.Operations, ", "), aclResourceText(st.Resource), st.Principal)
		bs, err := s.revokeMatches(ctx, st)
		if err != nil {
			return q + "?"
		}
		return q + fmt.Sprintf(": removes %s (REVOKE without EXECUTE lists them)?", countBindings(len(bs)))
	}
	return ""
}

// oneCause is the error of a statement none of whose items succeeded: the
// first refusal when the authorizer refused them all (one cause, said
// once), else every error.
func oneCause(errs []error) error {
	for _, err := range errs {
		if !kafka.IsAuthorization(err) {
			return errors.Join(errs...)
		}
	}
	return errs[0]
}
