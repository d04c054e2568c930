package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// A broker SIGKILLed in the middle of an INSERT ... EXECUTE (RF 3): the
// statement rides out the leader change, or says where it stopped and
// how to resume; either way, once resumed, every source record is in the
// destination exactly once. The kill comes after the first commit, seen
// in the trace, not after a sleep.
func TestInsertSurvivesABrokerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a broker of the real cluster and waits for it to come back")
	}
	r := kafkatest.Shared(t)
	s, tr := session(t, r)
	src, cl, _ := createSpreadTopic(t, r)
	dst := kafkatest.TopicName(t) + "-dst"
	spreadDest(t, r, dst, 6)
	const n = 60000
	value := []byte(strings.Repeat("v", 100))
	var batch []*kgo.Record
	for i := 0; i < n; i++ {
		batch = append(batch, &kgo.Record{Topic: src, Partition: int32(i % 6), Key: []byte(fmt.Sprintf("k%06d", i)), Value: value})
		if len(batch) == 5000 {
			require.NoError(t, cl.ProduceSync(ctxSetup(t), batch...).FirstErr())
			batch = batch[:0]
		}
	}
	old := insertTxnRecords
	insertTxnRecords = 3000
	t.Cleanup(func() { insertTxnRecords = old })

	rows, _ := mustRun(t, s, parse(t, "DESCRIBE TOPIC "+dst))
	victim := int32(rows[0][1].(int64)) // the leader of the destination's partition 0
	tr.reset()
	stmt := fmt.Sprintf("INSERT INTO %q SELECT * FROM %q EXECUTE", dst, src)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(s.Execute(ctx, parse(t, stmt))) }()
	killed := false
	for !killed {
		select {
		case err := <-done:
			t.Fatalf("the INSERT ended (%v) before its first commit was seen", err)
		default:
		}
		if len(tr.count("EndTxn")) > 0 {
			require.NoError(t, r.StopBroker(victim, true))
			killed = true
			t.Cleanup(func() { require.NoError(t, r.StartBroker(victim)) })
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	err := <-done
	for attempt := 0; err != nil; attempt++ {
		t.Logf("INSERT stopped after the kill of broker %d: %v", victim, err)
		require.Less(t, attempt, 5, "resumed five times and still failing")
		i := strings.Index(err.Error(), "to copy the rest: ")
		require.Positive(t, i, "a failed INSERT names the statement that copies the rest: %v", err)
		resume := err.Error()[i+len("to copy the rest: "):]
		time.Sleep(2 * time.Second) // let the controller fence the dead broker before trying again
		_, _, err = run(t, s, parse(t, resume))
	}
	got := committedEventually(t, s, dst, n)
	seen := make(map[string]bool, n)
	for _, row := range got {
		k := string(row[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		seen[k] = true
	}
	require.Len(t, seen, n, "every source record exactly once")
}
