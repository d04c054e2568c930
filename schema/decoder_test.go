package schema

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const userAvro = `{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`

func encodeWith(t *testing.T, reg *Registry, subject, text string) []byte {
	t.Helper()
	enc, err := reg.Encode(t.Context(), Ref{Subject: subject}, []byte(text))
	require.NoError(t, err)
	return enc.Bytes
}

func TestDecodeWithoutHeader(t *testing.T) {
	f := newFake(t)
	reg := f.open(t)
	dec := reg.NewDecoder(t.Context())
	for _, b := range [][]byte{nil, {}, []byte(`{"plain":"json"}`), {1, 0, 0, 0, 1, 2}, {0, 0, 0, 1}} {
		out, id, ok, err := dec.Decode([]byte("dst"), b)
		require.NoError(t, err)
		require.False(t, ok)
		require.Zero(t, id)
		require.Equal(t, "dst", string(out))
	}
	require.Zero(t, f.total.Load(), "nothing asked of the registry")
}

// An id the registry does not know fails every record that carries it,
// after one request, with a DecodeError that says so.
func TestDecodeUnknownIDAskedOnce(t *testing.T) {
	f := newFake(t)
	reg := f.open(t)
	dec := reg.NewDecoder(t.Context())
	payload := wire(4242, []byte{2, 4})
	for i := range 1000 {
		out, id, ok, err := dec.Decode([]byte("dst"), payload)
		require.True(t, ok)
		require.EqualValues(t, 4242, id)
		require.Equal(t, "dst", string(out))
		var de *DecodeError
		require.ErrorAs(t, err, &de, "record %d", i)
		require.False(t, de.Unreachable)
		require.EqualValues(t, 4242, de.ID)
		require.Contains(t, err.Error(), "schema id 4242")
		require.Contains(t, err.Error(), "does not know this schema id")
	}
	require.Equal(t, 1, f.asked("GET /schemas/ids/4242"))
	require.EqualValues(t, 1, f.total.Load())
}

// Two Decoders of one Registry (two statements of a session, or two at
// once) fetch each schema id once in all.
func TestDecodeSessionCache(t *testing.T) {
	f := newFake(t)
	f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	reg := f.open(t)
	payload := encodeWith(t, reg, "users-value", `{"id":1,"name":"a"}`)
	id, _ := HeaderID(payload)
	before := f.asked("GET /schemas/ids/" + itoa(int(id)))

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := reg.NewDecoder(context.Background())
			for range 500 {
				out, _, _, err := dec.Decode(nil, payload)
				if err != nil || string(out) != `{"id":1,"name":"a"}` {
					t.Errorf("%s %v", out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	dec := reg.NewDecoder(t.Context())
	_, _, _, err := dec.Decode(nil, payload)
	require.NoError(t, err)
	require.Equal(t, before, f.asked("GET /schemas/ids/"+itoa(int(id))), "Encode fetched it; no Decoder asked again")
	require.LessOrEqual(t, before, 1)
}

// A registry on a closed port: the first record says the registry is
// unreachable; the rest of the statement does not try again.
func TestDecodeRegistryDown(t *testing.T) {
	// Port 1 (tcpmux) is privileged and never served here: a port closed
	// after a bind to 0 could be handed to another test meanwhile.
	reg, err := Open(Config{URLs: []string{"http://127.0.0.1:1"}, Timeout: 2 * time.Second})
	require.NoError(t, err)
	dec := reg.NewDecoder(t.Context())

	start := time.Now()
	_, _, ok, err := dec.Decode(nil, wire(1, []byte{2}))
	require.True(t, ok)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.True(t, de.Unreachable)
	require.True(t, IsUnreachable(err))
	require.Contains(t, err.Error(), "could not be reached")
	require.Contains(t, err.Error(), "127.0.0.1:1")
	require.Less(t, time.Since(start), 2*time.Second)

	start = time.Now()
	for i := range 1000 {
		_, _, _, err := dec.Decode(nil, wire(1+i%3, []byte{2}))
		require.ErrorAs(t, err, &de)
		require.True(t, de.Unreachable)
	}
	require.Less(t, time.Since(start), 250*time.Millisecond, "no connection attempts")
}

// A registry that accepts connections and never answers: the first record
// waits for the timeout, once; the next statement asks again.
func TestDecodeRegistryHangs(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var accepted atomic.Int64
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	reg, err := Open(Config{URLs: []string{"http://" + l.Addr().String()}, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)

	dec := reg.NewDecoder(t.Context())
	start := time.Now()
	_, _, _, err = dec.Decode(nil, wire(1, []byte{2}))
	require.True(t, IsUnreachable(err), "%v", err)
	require.Less(t, time.Since(start), 3*time.Second)
	start = time.Now()
	for range 1000 {
		_, _, _, err = dec.Decode(nil, wire(1, []byte{2}))
		require.True(t, IsUnreachable(err))
	}
	require.Less(t, time.Since(start), 250*time.Millisecond, "no waiting for the registry")
	require.EqualValues(t, 1, accepted.Load())

	// The next statement asks again: the registry may be back.
	_, _, _, err = reg.NewDecoder(t.Context()).Decode(nil, wire(1, []byte{2}))
	require.True(t, IsUnreachable(err))
	require.EqualValues(t, 2, accepted.Load())
}

// A registry that refuses our credentials is statement-wide, like one that
// does not answer: one request, then every record says so at once. srfake
// answers 401 without credentials and 403 with wrong ones.
func TestDecodeUnauthorized(t *testing.T) {
	for _, tc := range []struct {
		token, status string
	}{{"", "HTTP 401 Unauthorized"}, {"wrong", "HTTP 403 Forbidden"}} {
		t.Run(tc.status, func(t *testing.T) {
			f := newFake(t, srfake.WithAuth("Bearer right"))
			reg, err := Open(Config{URLs: []string{f.URL()}, BearerToken: tc.token})
			require.NoError(t, err)
			dec := reg.NewDecoder(t.Context())
			for i := range 1000 {
				_, _, ok, err := dec.Decode(nil, wire(1+i%5, []byte{2}))
				require.True(t, ok)
				var de *DecodeError
				require.ErrorAs(t, err, &de)
				require.True(t, de.Unreachable, "%v", err)
				require.Contains(t, err.Error(), "refused kql's credentials ("+tc.status+")")
				require.Contains(t, err.Error(), f.URL())
			}
			require.EqualValues(t, 1, f.total.Load())

			// Like an unreachable registry, a refusal is not the schema's:
			// the next statement asks again (an ACL may have been granted).
			_, _, _, err = reg.NewDecoder(t.Context()).Decode(nil, wire(1, []byte{2}))
			require.Error(t, err)
			require.EqualValues(t, 2, f.total.Load())
		})
	}
}

// Records of an id compiled before the registry went away still decode in
// a statement that found the registry down for another id.
func TestDecodeCachedIDsWhileRegistryDown(t *testing.T) {
	f := newFake(t)
	f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	reg := f.open(t)
	known := encodeWith(t, reg, "users-value", `{"id":1,"name":"a"}`)
	out, _, _, err := reg.NewDecoder(t.Context()).Decode(nil, known)
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"name":"a"}`, string(out))

	f.Close()
	dec := reg.NewDecoder(t.Context())
	_, _, _, err = dec.Decode(nil, wire(99, []byte{2}))
	require.True(t, IsUnreachable(err), "%v", err)
	out, _, _, err = dec.Decode(nil, known)
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"name":"a"}`, string(out))
}

// A statement cancelled while its schema was being fetched does not leave
// "context canceled" behind for the rest of the session.
func TestDecodeCancelledFetchIsForgotten(t *testing.T) {
	f := newFake(t)
	f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	reg := f.open(t)
	payload := wire(1, []byte{2, 2, 'a'})

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, _, err := reg.NewDecoder(ctx).Decode(nil, payload)
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled), "%v", err)

	out, _, _, err := reg.NewDecoder(t.Context()).Decode(nil, payload)
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"name":"a"}`, string(out))
	_, err = reg.Encode(t.Context(), Ref{ID: 1}, []byte(`{"id":1,"name":"a"}`))
	require.NoError(t, err)
}

// A bad payload of a known id is that record's error only: the next record
// of the id decodes.
func TestDecodeBadPayloadIsOneRecords(t *testing.T) {
	f := newFake(t)
	f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	reg := f.open(t)
	dec := reg.NewDecoder(t.Context())
	_, _, _, err := dec.Decode([]byte("dst"), wire(1, []byte{2}))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.False(t, de.Unreachable)
	require.Contains(t, err.Error(), "AVRO payload does not decode")
	require.Contains(t, err.Error(), "field name")
	out, _, _, err := dec.Decode(nil, wire(1, []byte{2, 2, 'a'}))
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"name":"a"}`, string(out))
}

func TestDecodeSchemaThatDoesNotCompile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_, _ = w.Write([]byte(`{"schema":"{\"type\":\"record\",\"name\":\"X\",\"fields\":[{\"name\":\"a\",\"type\":\"Nope\"}]}"}`))
	}))
	defer srv.Close()
	reg, err := Open(Config{URLs: []string{srv.URL}})
	require.NoError(t, err)
	dec := reg.NewDecoder(t.Context())
	_, _, _, err = dec.Decode(nil, wire(3, []byte{0}))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.False(t, de.Unreachable)
	require.Contains(t, err.Error(), "Nope")
	require.Equal(t, 1, countOf(err.Error(), "schema id 3"), "said once: %v", err)
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}

// A schema whose reference is gone is not "an id the registry does not
// know": the message names the reference.
func TestDecodeMissingReference(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}`})
	id := f.register(t, "people-value", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"P","fields":[{"name":"a","type":"Address"}]}`,
		References: []sr.SchemaReference{{Name: "Address", Subject: "address", Version: 1}}})
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/subjects/address/versions/1" {
			registryError(w, http.StatusNotFound, `{"error_code":40401,"message":"Subject 'address' not found."}`)
			return true
		}
		return false
	})
	reg := f.open(t)
	_, _, _, err := reg.NewDecoder(t.Context()).Decode(nil, wire(id, []byte{2, 'x'}))
	require.Error(t, err)
	require.Contains(t, err.Error(), `reference "Address"`)
	require.NotContains(t, err.Error(), "does not know this schema id")
	_, err = reg.Encode(t.Context(), Ref{ID: id}, []byte(`{"a":{"city":"x"}}`))
	require.Error(t, err)
	require.Contains(t, err.Error(), `reference "Address"`)
	require.NotContains(t, err.Error(), "does not know it")
}

// An id the registry did not know when one statement asked is asked again
// by the next: it may be registered since (schemas imported with their ids
// from the registry the records were written against, or a registry node
// that had not caught up). Within one statement it is asked once.
func TestDecodeUnknownIDAskedAgainByTheNextStatement(t *testing.T) {
	f := newFake(t)
	reg := f.open(t)
	payload := wire(4242, []byte{2, 2, 'a'}) // {"id":1,"name":"a"}
	dec := reg.NewDecoder(t.Context())
	for range 3 {
		_, _, _, err := dec.Decode(nil, payload)
		require.ErrorContains(t, err, "does not know this schema id")
	}
	require.Equal(t, 1, f.asked("GET /schemas/ids/4242"))

	f.SeedSchema("users-value", 1, 4242, sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	dec = reg.NewDecoder(t.Context())
	out, _, _, err := dec.Decode(nil, payload)
	require.NoError(t, err, "the next statement still failed the id without asking")
	require.Equal(t, `{"id":1,"name":"a"}`, string(out))
	require.Equal(t, 2, f.asked("GET /schemas/ids/4242"))
}

// A registry that stopped answering is left alone for RetryDownAfter, then
// asked again: a FOLLOW running for hours decodes again once it is back.
func TestDecoderAsksAgainAfterTheRegistryCameBack(t *testing.T) {
	old := RetryDownAfter
	RetryDownAfter = 50 * time.Millisecond
	defer func() { RetryDownAfter = old }()

	fake := srfake.New()
	defer fake.Close()
	id, _, err := fake.RegisterSchema("s", sr.Schema{Schema: `"long"`})
	require.NoError(t, err)
	var down atomic.Bool
	var asked atomic.Int64
	down.Store(true)
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		asked.Add(1)
		if !down.Load() {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // no answer at all
		}
		return true
	})
	reg, err := Open(Config{URLs: []string{fake.URL()}})
	require.NoError(t, err)
	dec := reg.NewDecoder(t.Context())
	payload := wire(id, []byte{0x54}) // zigzag 42

	_, _, _, err = dec.Decode(nil, payload)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.True(t, de.Unreachable)
	before := asked.Load()
	for range 100 {
		_, _, _, err = dec.Decode(nil, payload)
		require.Error(t, err)
	}
	require.Equal(t, before, asked.Load(), "while down, records do not each ask the registry")

	down.Store(false)
	time.Sleep(60 * time.Millisecond)
	out, _, _, err := dec.Decode(nil, payload)
	require.NoError(t, err)
	require.Equal(t, "42", string(out))
}
