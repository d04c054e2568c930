package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
)

// A broker that hangs right after kql connected must not stall
// statements that do not need it. franz-go learns where brokers are with a
// Metadata request of its own to a random seed, so a hung seed used to
// stall the first request to any other broker (one time in three here);
// brokers that are seeds are now asked over the seed connections Dial
// opened, and franz-go never has to look.
func TestHungSeedRightAfterDialDoesNotStallOtherBrokers(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f, freezers := newFreezableFake(t)
			_, err := f.adm.CreateTopic(ctxT(t), 4, 3, nil, "t")
			require.NoError(t, err)
			for p := int32(0); p < 4; p++ {
				require.NoError(t, f.MoveTopicPartition("t", p, p%2)) // brokers 0 and 1 lead
			}
			f.produce(t, "t", 4, 5)
			brokers, _ := mustRun(t, f.sess, &lang.ShowBrokers{})
			hung := freezers[fmt.Sprintf("%s:%d", brokers[2][1], brokers[2][2])]
			require.NotNil(t, hung)
			hung.frozen.Store(true)
			t.Cleanup(func() { hung.frozen.Store(false) })

			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			start := time.Now()
			limit := int64(100)
			res, err := f.sess.Execute(ctx, &lang.Consume{Topic: "t", Limit: &limit})
			require.NoError(t, err)
			n := 0
			for {
				if _, ok := res.Next(); !ok {
					break
				}
				n++
			}
			require.NoError(t, res.Err())
			require.Equal(t, 20, n)
			require.Less(t, time.Since(start), 3*time.Second)
		})
	}
}
