package exec

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// An INSERT ... WHERE timestamp >= 10h AGO cancelled before it committed
// gives a resume whose WHERE holds the absolute time 10h AGO meant when
// the INSERT started, not "10h AGO": run after the clock moved on, the
// resume copies exactly the records the INSERT was to copy (with AGO kept
// it would measure from the later time and copy fewer).
func TestInsertResumeFixesRelativeTimesAtTheStatementStart(t *testing.T) {
	f := kafkatest.NewFake(t)
	src, dst, _, base := skipSource(t, f)
	s, _ := session(t, f)
	now := base.Add(10*time.Hour + 20*time.Millisecond) // 10h AGO: base+20ms
	s.Now = func() time.Time { return now }
	err := cancelInsertAtItsFirstFetch(t, f, s, fmt.Sprintf("INSERT INTO %q SELECT * FROM %q WHERE timestamp >= 10h AGO EXECUTE", dst, src))
	require.Error(t, err)
	resume := resumeIfNotCommitted(t, err.Error())
	require.NotContains(t, resume, " AGO")
	require.Contains(t, resume, "timestamp >= TIMESTAMP "+strconv.FormatInt(base.Add(20*time.Millisecond).UnixMilli(), 10))

	now = now.Add(time.Hour) // the resume runs later: 10h AGO would now be base+1h20ms
	_, _, err = run(t, s, parse(t, resume))
	require.NoError(t, err)
	var want []string
	for o := 5; o < 10; o++ {
		want = append(want, fmt.Sprintf("0-%d", o), fmt.Sprintf("1-%d", o)) // timestamps base+20ms on
	}
	requireCopiedOnce(t, s, dst, append(want, "2-3", "2-4", "2-5"))
}
