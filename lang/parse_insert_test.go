package lang

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseInsert(t *testing.T) {
	for _, src := range []string{
		"INSERT INTO copy SELECT * FROM orders",
		"INSERT INTO copy SELECT * FROM orders WHERE value.amount > 10 LIMIT 5 EXECUTE",
		`INSERT INTO TOPIC header('dlq.original.topic') SELECT * FROM "orders.dlq" FROM OLDEST PARTITION 2 EXECUTE`,
		"insert into copy keep partition timestamp now select key, upper(value) as value from orders from anchor (0:5, 1:7)",
		"EXPLAIN INSERT INTO copy SELECT key, value, partition FROM orders",
	} {
		st, err := Parse(src)
		require.NoError(t, err, src)
		again, err := Parse(Format(st))
		require.NoError(t, err, Format(st))
		require.Equal(t, st, again, "%s formats as %s", src, Format(st))
	}
	st, err := Parse(`INSERT INTO TOPIC header('t') KEEP PARTITION SELECT * FROM src WHERE key = 'a' EXECUTE`)
	require.NoError(t, err)
	in := st.(*Insert)
	require.True(t, in.Execute)
	require.True(t, in.KeepPartition)
	require.Equal(t, "src", in.Select.Topic)
	require.NotNil(t, in.Select.Where)
	require.Equal(t, "header('t')", FormatExpr(in.TopicExpr))
}
