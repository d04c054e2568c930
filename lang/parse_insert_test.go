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
		"INSERT INTO copy KEEP TIMESTAMP SELECT key, value FROM orders LIMIT 2 EXECUTE",
		"INSERT INTO copy KEEP PARTITION KEEP TIMESTAMP SELECT key, value, timestamp FROM orders",
		"INSERT INTO copy TIMESTAMP NOW SELECT * FROM orders",
		"INSERT INTO copy SELECT key, count(*) AS value, max(timestamp) AS timestamp FROM orders GROUP BY key",
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

// KEEP TIMESTAMP is kept in the statement, so a resume statement (Format)
// says it too; TIMESTAMP NOW or KEEP TIMESTAMP with a timestamp column
// that says otherwise is refused where the column is (the golden files
// insert-timestamp-now-with-column, insert-keep-timestamp-computed and
// insert-keep-timestamp-aggregate pin the messages).
func TestParseInsertTimestampOptions(t *testing.T) {
	st, err := Parse("INSERT INTO copy KEEP TIMESTAMP SELECT key, value FROM orders")
	require.NoError(t, err)
	require.True(t, st.(*Insert).KeepTimestamp)
	require.False(t, st.(*Insert).StampNow)
	require.Equal(t, "INSERT INTO copy KEEP TIMESTAMP SELECT key, value FROM orders", Format(st))

	for src, where := range map[string]string{
		"INSERT INTO copy TIMESTAMP NOW SELECT key, value, timestamp FROM orders":                "1:51",
		"INSERT INTO copy TIMESTAMP NOW SELECT key, 0 AS timestamp FROM orders":                  "1:44",
		"INSERT INTO copy KEEP TIMESTAMP SELECT key, timestamp - 1 AS timestamp FROM orders":     "1:45",
		"INSERT INTO copy KEEP PARTITION SELECT key, count(*) AS value FROM orders GROUP BY key": "1:18",
	} {
		_, err := Parse(src)
		require.Error(t, err, src)
		require.Contains(t, err.Error(), where+": ", src)
	}
}
