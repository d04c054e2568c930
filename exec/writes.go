package exec

import "github.com/kql-dev/kql/lang"

// Access is what running a statement does to the cluster (or its schema
// registry): the read-only guard (kql.readonly=true, --read-only) refuses
// every statement that is not Reads.
type Access int

const (
	// AccessUnknown is a statement this table does not name: the guard
	// treats it as writing, so a new statement is refused on a read-only
	// connection until someone classifies it here (TestStatementAccess
	// fails for it too).
	AccessUnknown Access = iota
	// Reads: sends only requests that read (a dry run is a read).
	Reads
	// Writes: creates, changes or deletes something on the cluster.
	Writes
)

// StatementAccess classifies stmt. It is the one place that knows which
// statements write; keep it next to Session.execute's dispatch when a
// statement is added. The EXECUTE forms write and their dry runs read;
// EXPLAIN only plans, whatever it explains.
func StatementAccess(stmt lang.Statement) Access {
	switch st := stmt.(type) {
	case *lang.ShowTopics, *lang.ShowBrokers, *lang.ShowCluster, *lang.ShowGroups, *lang.ShowPartitions,
		*lang.DescribeTopic, *lang.DescribeGroup, *lang.Consume,
		*lang.ShowSubjects, *lang.DescribeSubject, *lang.ShowSchemas,
		*lang.ShowConfigs, *lang.ShowACLs, *lang.ExplainAccess,
		*lang.ShowLogDirs, *lang.ShowReassignments, *lang.ShowQuorum, *lang.ShowFeatures,
		*lang.ShowShareGroups, *lang.DescribeShareGroup,
		*lang.ShowTransactions, *lang.DescribeTransaction, *lang.ShowHangingTransactions,
		*lang.ShowUsers, *lang.ShowQuotas,
		*lang.Explain:
		return Reads

	// Writing statements that have no dry run (PRODUCE ... FROM FILE and
	// FROM STDIN are PRODUCE too).
	case *lang.Produce,
		*lang.CreateTopic, *lang.DropTopic, *lang.AlterConfigs, *lang.AlterPartitions,
		*lang.DeleteGroup, *lang.DeleteShareGroup,
		*lang.Grant, // GRANT and DENY write at once
		*lang.CreateUser, *lang.AlterUser, *lang.DropUser, *lang.AlterQuota:
		return Writes

	// Statements that write only with EXECUTE; without it they are a dry run.
	case *lang.ResetGroup:
		return executeForm(st.Execute)
	case *lang.ResetShareGroup:
		return executeForm(st.Execute)
	case *lang.DeleteRecords:
		return executeForm(st.Execute)
	case *lang.Revoke:
		return executeForm(st.Execute)
	case *lang.AbortTransaction:
		return executeForm(st.Execute)
	case *lang.AlterReplicas:
		return executeForm(st.Execute)
	case *lang.CancelReassignment:
		return executeForm(st.Execute)
	case *lang.ElectLeaders:
		return executeForm(st.Execute)
	case *lang.Insert: // without EXECUTE it only reads the source
		return executeForm(st.Execute)
	}
	return AccessUnknown
}

// WritesToCluster reports whether the read-only guard must refuse stmt: it
// writes, or it is not classified (failing closed).
func WritesToCluster(stmt lang.Statement) bool {
	return StatementAccess(stmt) != Reads
}

func executeForm(execute bool) Access {
	if execute {
		return Writes
	}
	return Reads
}
