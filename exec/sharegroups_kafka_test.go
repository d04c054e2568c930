package exec

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

const shareGroupCommand = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"

// shareTool runs kafka-share-groups.sh (ShareGroupCommand) on r and returns
// its non-empty lines after the header line that starts with header.
func shareTool(t *testing.T, r *kafkatest.Real, header string, args ...string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := r.RunTool(ctx, shareGroupCommand, append([]string{"--bootstrap-server", strings.Join(r.Bootstrap(), ",")}, args...)...)
	require.NoError(t, err)
	var rows [][]string
	seen := header == ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !seen && f[0] == header:
			seen = true
		case seen:
			rows = append(rows, f)
		}
	}
	require.True(t, seen, "no %s header in the output of %v:\n%s", header, args, out)
	return rows
}

var coordinatorID = regexp.MustCompile(`\((\d+)\)`)

// The same cluster, asked by kql and by Kafka's own ShareGroupCommand, with
// a share group read by Kafka's own ConsoleShareConsumer: the list, the
// state, the members and every partition's start offset and lag agree,
// while the consumer reads, after it left and after a RESET ... EXECUTE.
func TestShareGroupsEqualKafkasShareGroupCommand(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic, _ := spreadTopic(t, r, 10)
	group := kafkatest.GroupName(t)
	shareFromEarliest(t, r, group)
	consumer, err := r.StartTool(t, "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
		"--bootstrap-server", strings.Join(r.Bootstrap(), ","), "--topic", topic, "--group", group)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Count(consumer.Output(), "\n") >= 60 }, 90*time.Second, 500*time.Millisecond,
		"the console share consumer read 60 records; it printed:\n%s", consumer.Output())

	// compare asks both until they agree (acknowledgements reach the share
	// coordinator a moment after the records are printed), and fails with
	// both answers if they never do.
	compare := func(t *testing.T, wantMembers int64) {
		t.Helper()
		var kqlRows, toolRows []string
		require.Eventually(t, func() bool {
			rows, _ := mustRun(t, s, &lang.DescribeShareGroup{Group: group})
			kqlRows = kqlRows[:0]
			for _, row := range rows {
				if row[2] == nil {
					continue // no share state: kafka-share-groups.sh does not list it
				}
				kqlRows = append(kqlRows, fmt.Sprintf("%s %d %d %v", row[0], row[1], row[2], row[4]))
			}
			toolRows = toolRows[:0]
			for _, f := range shareTool(t, r, "GROUP", "--describe", "--group", group) {
				require.Len(t, f, 5, "GROUP TOPIC PARTITION START-OFFSET LAG: %v", f)
				lag := f[4]
				if lag == "-" {
					lag = "<nil>"
				}
				toolRows = append(toolRows, fmt.Sprintf("%s %s %s %s", f[1], f[2], f[3], lag))
			}
			slices.Sort(toolRows)
			return len(kqlRows) == 6 && slices.Equal(kqlRows, toolRows)
		}, 60*time.Second, time.Second, "DESCRIBE SHARE GROUP (topic partition start_offset lag)\n%s\nShareGroupCommand --describe\n%s",
			strings.Join(kqlRows, "\n"), strings.Join(toolRows, "\n"))

		state := shareTool(t, r, "GROUP", "--describe", "--group", group, "--state")
		require.Len(t, state, 1)
		f := state[0]
		m := coordinatorID.FindStringSubmatch(strings.Join(f, " "))
		require.NotNil(t, m, "a COORDINATOR (ID) in %v", f)
		coord, _ := strconv.ParseInt(m[1], 10, 32)
		members, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		rows, _ := mustRun(t, s, &lang.ShowShareGroups{Like: &group})
		require.Len(t, rows, 1)
		require.Equal(t, []any{f[len(f)-2], coord, members}, []any{rows[0][1], rows[0][2], rows[0][3]}, "state, coordinator, members: SHOW SHARE GROUPS and --describe --state")
		require.Equal(t, wantMembers, members)

		if wantMembers > 0 {
			mem := shareTool(t, r, "GROUP", "--describe", "--group", group, "--members")
			require.Len(t, mem, int(wantMembers))
			rows, _ := mustRun(t, s, &lang.DescribeShareGroup{Group: group})
			for _, f := range mem {
				n := 0
				for _, row := range rows {
					if row[6] != nil && strings.Contains(row[6].(string), f[1]) {
						n++
						require.Equal(t, f[3], row[7], "CLIENT-ID of %s", f[1])
					}
				}
				require.Equal(t, f[4], strconv.Itoa(n), "#PARTITIONS of member %s: DESCRIBE SHARE GROUP assigns it %d", f[1], n)
			}
		}
	}

	t.Run("while the consumer reads", func(t *testing.T) {
		compare(t, 1)
		var listed []string
		for _, f := range shareTool(t, r, "", "--list") {
			listed = append(listed, f[0])
		}
		rows, _ := mustRun(t, s, &lang.ShowShareGroups{})
		var ours []string
		for _, row := range rows {
			ours = append(ours, row[0].(string))
		}
		slices.Sort(listed)
		require.Equal(t, listed, ours, "SHOW SHARE GROUPS and ShareGroupCommand --list")
		require.Contains(t, ours, group)
	})

	consumer.Stop()
	require.Eventually(t, func() bool {
		rows, _ := mustRun(t, s, &lang.ShowShareGroups{Like: &group})
		return len(rows) == 1 && rows[0][3] == int64(0)
	}, 60*time.Second, 500*time.Millisecond, "the group empties once the killed consumer's session times out")
	prod := kafkatest.Client(t, r, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := int32(0); p < 6; p++ {
		for i := 0; i < 5; i++ {
			require.NoError(t, prod.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte("more")}).FirstErr())
		}
	}

	t.Run("after the consumer left, with records to read", func(t *testing.T) { compare(t, 0) })

	t.Run("after RESET SHARE GROUP ... TO EARLIEST EXECUTE", func(t *testing.T) {
		mustRun(t, s, &lang.ResetShareGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: true})
		compare(t, 0)
		for _, f := range shareTool(t, r, "GROUP", "--describe", "--group", group) {
			require.Equal(t, []string{"0", "15"}, f[3:5], "START-OFFSET and LAG after the reset, as Kafka's tool reads them")
		}
	})
}
