package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// No client kql makes pushes KIP-714 client metrics: franz-go's pushes are
// requests kql neither routes nor shows in \trace. The metadata client,
// PRODUCE's producer and the transactional writer of INSERT and imports
// are each their own kgo client, with their own options.
func TestNoClientPushesClientMetrics(t *testing.T) {
	f := newTracedFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := f.cl.producer()
	require.NoError(t, err)
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: "kql-metrics-test"})
	require.NoError(t, err)
	defer w.Close()
	for name, cl := range map[string]*kgo.Client{"metadata": f.cl.cl, "producer": p, "writer": w.p} {
		if v, _ := cl.OptValue(kgo.DisableClientMetrics).(bool); !v {
			t.Errorf("the %s client sends KIP-714 client metrics", name)
		}
	}
}
