package lang

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseLocalSchemaClauses(t *testing.T) {
	st, err := Parse(`SELECT value.total.units FROM orders WHERE value.id = 7 VALUE AS PROTOBUF 'acme.Order' key as avro 'key.avsc' LIMIT 5`)
	require.NoError(t, err)
	c := st.(*Consume)
	require.Equal(t, &LocalSchema{Format: "PROTOBUF", Name: "acme.Order"}, c.ValueAs)
	require.Equal(t, &LocalSchema{Format: "AVRO", Name: "key.avsc"}, c.KeyAs)
	require.NotNil(t, c.Where)
	require.Equal(t, int64(5), *c.Limit)

	// A bare name works where a name does; PAYLOAD is VALUE.
	st, err = Parse(`CONSUME orders PAYLOAD AS PROTOBUF Order FOLLOW`)
	require.NoError(t, err)
	require.Equal(t, &LocalSchema{Format: "PROTOBUF", Name: "Order"}, st.(*Consume).ValueAs)

	st, err = Parse(`PRODUCE INTO orders KEY 'cust-7' KEY AS AVRO 'key.avsc' VALUE '{"id": 7}' VALUE AS PROTOBUF 'acme.Order'`)
	require.NoError(t, err)
	p := st.(*Produce)
	require.Equal(t, &LocalSchema{Format: "AVRO", Name: "key.avsc"}, p.KeyAs)
	require.Equal(t, &LocalSchema{Format: "PROTOBUF", Name: "acme.Order"}, p.ValueAs)
	require.Equal(t, `{"id": 7}`, string(p.Value.Bytes))

	// Format writes what Parse reads back.
	for _, src := range []string{
		`CONSUME orders FOLLOW KEY AS AVRO 'key.avsc' VALUE AS PROTOBUF 'acme.Order'`,
		`PRODUCE INTO orders KEY 'k' VALUE '{}' KEY AS AVRO 'k.avsc' VALUE AS PROTOBUF 'acme.Order'`,
	} {
		st, err := Parse(src)
		require.NoError(t, err)
		require.Equal(t, src, Format(st))
	}
}
