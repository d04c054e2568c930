package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// bindingTexts renders binding rows (the first seven columns) and the
// eighth column, one string each, for comparisons that read like the table.
func bindingTexts(rows []result.Row) []string {
	var out []string
	for _, r := range rows {
		var parts []string
		for _, v := range r {
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// TestACLStatementsOnBothBackends: GRANT, DENY, SHOW ACLS, REVOKE as a dry
// run and with EXECUTE, on kfake and on the real cluster (as its PLAINTEXT
// super user). Each test uses principals of its own: the real cluster is
// shared.
func TestACLStatementsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic := kafkatest.TopicName(t)
		prefix := topic[:len(topic)-2]
		who := "User:" + kafkatest.GroupName(t) // a principal no other test uses
		show := func(src string) []string {
			t.Helper()
			rows, _ := mustRun(t, s, parse(t, src))
			return bindingTexts(rows)
		}

		tr.reset()
		rows, res := mustRun(t, s, parse(t, "GRANT READ, DESCRIBE ON TOPIC "+lang.QuoteName(topic)+" TO '"+who+"'"))
		require.Equal(t, []string{
			who + " * READ ALLOW TOPIC " + topic + " LITERAL created",
			who + " * DESCRIBE ALLOW TOPIC " + topic + " LITERAL created",
		}, bindingTexts(rows))
		require.Empty(t, res.(*result.Slice).Notes, "every broker applied the bindings within the settle bound")
		require.Equal(t, 1, sum(tr.count(kafka.APICreateACLs)), "one CreateAcls for both bindings")
		require.Len(t, tr.count(kafka.APIDescribeACLs), len(b.Brokers()), "the grant waits until every broker's own DescribeAcls lists it")

		mustRun(t, s, parse(t, "GRANT WRITE ON TOPIC "+lang.QuoteName(prefix)+" PREFIXED TO '"+who+"' HOST '127.0.0.1'"))
		mustRun(t, s, parse(t, "DENY DESCRIBE ON TOPIC * TO '"+who+"'"))
		mustRun(t, s, parse(t, "GRANT READ ON GROUP g TO '"+who+"'"))

		t.Run("show acls for the principal lists every binding, sorted", func(t *testing.T) {
			require.Equal(t, []string{
				who + " * READ ALLOW GROUP g LITERAL <nil>",
				who + " * DESCRIBE DENY TOPIC * LITERAL <nil>",
				who + " 127.0.0.1 WRITE ALLOW TOPIC " + prefix + " PREFIXED <nil>",
				who + " * DESCRIBE ALLOW TOPIC " + topic + " LITERAL <nil>",
				who + " * READ ALLOW TOPIC " + topic + " LITERAL <nil>",
			}, show("SHOW ACLS FOR '"+who+"'"))
		})
		t.Run("show acls on a topic marks how each binding applies", func(t *testing.T) {
			require.Equal(t, []string{
				who + " * DESCRIBE DENY TOPIC * LITERAL WILDCARD",
				who + " 127.0.0.1 WRITE ALLOW TOPIC " + prefix + " PREFIXED PREFIXED",
				who + " * DESCRIBE ALLOW TOPIC " + topic + " LITERAL LITERAL",
				who + " * READ ALLOW TOPIC " + topic + " LITERAL LITERAL",
			}, show("SHOW ACLS ON TOPIC "+lang.QuoteName(topic)+" FOR '"+who+"'"))
			// Another topic under the prefix sees the prefix and the
			// wildcard, not the literal bindings.
			require.Equal(t, []string{
				who + " * DESCRIBE DENY TOPIC * LITERAL WILDCARD",
				who + " 127.0.0.1 WRITE ALLOW TOPIC " + prefix + " PREFIXED PREFIXED",
			}, show("SHOW ACLS ON TOPIC "+lang.QuoteName(prefix+"zz")+" FOR '"+who+"' ORDER BY matched_by DESC"))
			require.Equal(t, []string{who + " * READ ALLOW GROUP g LITERAL LITERAL"}, show("SHOW ACLS ON GROUP g FOR '"+who+"'"))
			require.Empty(t, show("SHOW ACLS ON CLUSTER FOR '"+who+"'"))
			require.Equal(t, []string{who + " * DESCRIBE DENY TOPIC * LITERAL WILDCARD"},
				show("SHOW ACLS ON TOPIC other FOR '"+who+"' WHERE permission = 'DENY'"))
		})
		t.Run("revoke dry run lists exactly what execute removes, and changes nothing", func(t *testing.T) {
			before := show("SHOW ACLS FOR '" + who + "'")
			tr.reset()
			dry, res := mustRun(t, s, parse(t, "REVOKE READ, DESCRIBE ON TOPIC "+lang.QuoteName(topic)+" FROM '"+who+"'"))
			require.Equal(t, []string{
				who + " * DESCRIBE ALLOW TOPIC " + topic + " LITERAL would be removed",
				who + " * READ ALLOW TOPIC " + topic + " LITERAL would be removed",
			}, bindingTexts(dry))
			require.Contains(t, res.(*result.Slice).Notes[0], "add EXECUTE to remove 2 bindings")
			require.Zero(t, sum(tr.count(kafka.APIDeleteACLs)), "a dry run sends no DeleteAcls")
			require.Equal(t, 2, sum(tr.count(kafka.APIDescribeACLs)), "one DescribeAcls per filter DeleteAcls would get")
			require.Equal(t, before, show("SHOW ACLS FOR '"+who+"'"))

			done, _ := mustRun(t, s, parse(t, "REVOKE READ, DESCRIBE ON TOPIC "+lang.QuoteName(topic)+" FROM '"+who+"' EXECUTE"))
			require.Equal(t, strings.ReplaceAll(strings.Join(bindingTexts(dry), "\n"), "would be removed", "removed"), strings.Join(bindingTexts(done), "\n"))
			require.Equal(t, []string{
				who + " * READ ALLOW GROUP g LITERAL <nil>",
				who + " * DESCRIBE DENY TOPIC * LITERAL <nil>",
				who + " 127.0.0.1 WRITE ALLOW TOPIC " + prefix + " PREFIXED <nil>",
			}, show("SHOW ACLS FOR '"+who+"'"))
		})
		t.Run("revoke of the prefix needs PREFIXED, and the wildcard is its own literal", func(t *testing.T) {
			none, res := mustRun(t, s, parse(t, "REVOKE WRITE ON TOPIC "+lang.QuoteName(prefix)+" FROM '"+who+"'"))
			require.Empty(t, none)
			require.Contains(t, res.(*result.Slice).Notes[0], "no binding matches")
			rows, _ := mustRun(t, s, parse(t, "REVOKE WRITE ON TOPIC "+lang.QuoteName(prefix)+" PREFIXED FROM '"+who+"' HOST '127.0.0.1' EXECUTE"))
			require.Len(t, rows, 1)
			rows, _ = mustRun(t, s, parse(t, "REVOKE DESCRIBE ON TOPIC * FROM '"+who+"' EXECUTE"))
			require.Equal(t, []string{who + " * DESCRIBE DENY TOPIC * LITERAL removed"}, bindingTexts(rows))
			rows, _ = mustRun(t, s, parse(t, "REVOKE READ ON GROUP g FROM '"+who+"' EXECUTE"))
			require.Len(t, rows, 1)
			require.Empty(t, show("SHOW ACLS FOR '"+who+"'"))
		})
		t.Run("explain routes every ACL request to any broker", func(t *testing.T) {
			plan := func(src string) []string {
				rows, _ := mustRun(t, s, parse(t, "EXPLAIN "+src))
				return bindingTexts(rows)
			}
			got := plan("GRANT READ ON TOPIC t TO 'User:x'")
			require.Equal(t, "1 CreateAcls <nil> any broker ALLOW READ on topic t to User:x (a KRaft broker forwards it to the active controller)", got[0])
			require.Len(t, got, 1+len(b.Brokers()), "then DescribeAcls to every broker, one row each")
			require.Contains(t, got[1], "2 DescribeAcls")
			got = plan("REVOKE READ ON TOPIC t FROM 'User:x'")
			require.Equal(t, []string{"1 DescribeAcls <nil> any broker READ on topic t of User:x (the filter DeleteAcls would get)"}, got)
			got = plan("REVOKE READ ON TOPIC t FROM 'User:x' EXECUTE")
			require.Contains(t, got[0], "1 DeleteAcls <nil> any broker READ on topic t of User:x (a KRaft broker forwards it")
			require.Equal(t, []string{"1 DescribeAcls <nil> any broker every TOPIC binding (those that apply to t are kept) of User:x"},
				plan("SHOW ACLS ON TOPIC t FOR 'User:x'"))
		})
	})
}

// TestRevokeTwoPhaseCommitAsksKafkasOperation: the dry run of a REVOKE of
// TWO_PHASE_COMMIT asks DescribeAcls for Kafka's operation 15; sent as
// UNKNOWN, every broker refuses the filter as malformed.
func TestRevokeTwoPhaseCommitAsksKafkasOperation(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		who := "User:" + kafkatest.GroupName(t)
		rows, res := mustRun(t, s, parse(t, "REVOKE TWO_PHASE_COMMIT ON TRANSACTIONAL ID 'tx-2pc' FROM '"+who+"'"))
		require.Empty(t, rows)
		require.Contains(t, res.(*result.Slice).Notes[0], "no binding matches")
	})
}
