package schema

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// fakeRegistry is srfake with a count of the requests it was asked, by
// path, so a test can say "asked once".
type fakeRegistry struct {
	*srfake.Registry
	mu       sync.Mutex
	requests map[string]int
	total    atomic.Int64
}

func newFake(t *testing.T, opts ...srfake.Option) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{Registry: srfake.New(opts...), requests: map[string]int{}}
	f.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		f.mu.Lock()
		f.requests[r.Method+" "+r.URL.Path]++
		f.mu.Unlock()
		f.total.Add(1)
		return false
	})
	t.Cleanup(f.Close)
	return f
}

// asked is how many requests went to path ("GET /schemas/ids/3").
func (f *fakeRegistry) asked(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[path]
}

func (f *fakeRegistry) register(t *testing.T, subject string, s sr.Schema) int {
	t.Helper()
	id, _, err := f.RegisterSchema(subject, s)
	require.NoError(t, err)
	return id
}

func (f *fakeRegistry) open(t *testing.T) *Registry {
	t.Helper()
	reg, err := Open(Config{URLs: []string{f.URL()}})
	require.NoError(t, err)
	return reg
}

// registryError answers a request as the registry answers an error: its
// content type, the status and the JSON body ({"error_code":..,"message":..}).
func registryError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// wire is the Confluent wire format: magic byte, id, then body.
func wire(id int, body []byte) []byte {
	b := []byte{0, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	return append(b, body...)
}

// canonical parses JSON text with exact numbers and rewrites every number
// as its exact rational value, so 9.50 and 9.5, or 1e2 and 100, compare
// equal while 0.1 and 0.10000001 do not.
func canonical(t *testing.T, text []byte) any {
	t.Helper()
	require.Truef(t, json.Valid(text), "not valid JSON: %s", text)
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return canonicalValue(v)
}

func canonicalValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return "bad number " + string(v)
		}
		return "number " + r.RatString()
	case map[string]any:
		for k, x := range v {
			v[k] = canonicalValue(x)
		}
	case []any:
		for i, x := range v {
			v[i] = canonicalValue(x)
		}
	}
	return v
}

// requireSameJSON compares two JSON texts semantically (numbers exactly).
func requireSameJSON(t *testing.T, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, canonical(t, want), canonical(t, got), msgAndArgs...)
}

// avroCodecFor compiles an Avro schema text with no references.
func avroCodecFor(t testing.TB, schema string) *avroCodec {
	t.Helper()
	c, err := compileAvro(sr.Schema{Schema: schema, Type: sr.TypeAvro}, nil)
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return c.(*avroCodec)
}
