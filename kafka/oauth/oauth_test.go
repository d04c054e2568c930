package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + ".sig"
}

// endpoint is a token endpoint that wants id:secret as Basic, byte for byte.
func endpoint(t *testing.T, id, secret string, lifetime time.Duration, fetched *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID, gotSecret, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.FormValue("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		if !ok || gotID != id || gotSecret != secret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s"}`, gotSecret)
			return
		}
		n := fetched.Add(1)
		now := time.Now()
		tok := jwt(t, map[string]any{"sub": id, "aud": "kafka", "scope": r.FormValue("scope"), "iat": now.Unix(), "exp": now.Add(lifetime).Unix(), "n": n})
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, tok, int(lifetime.Seconds()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSourceBasicAuthAsKafka: the id and secret go as HTTP Basic without URL
// encoding (as Kafka's client sends them), the scope in the form.
func TestSourceBasicAuthAsKafka(t *testing.T) {
	var n atomic.Int32
	id, secret := "kql client", "s3cr+t:%/=" // characters URL encoding would change
	srv := endpoint(t, id, secret, time.Hour, &n)
	s := New(Config{TokenURL: srv.URL, ClientID: id, ClientSecret: secret, Scope: "kafka"})
	tok, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok.Claims["scope"] != "kafka" || tok.Claims["sub"] != id {
		t.Errorf("claims %v, want scope kafka and sub %q", tok.Claims, id)
	}
	enc := New(Config{TokenURL: srv.URL, ClientID: id, ClientSecret: secret, URLEncode: true})
	if _, err := enc.Token(context.Background()); AsError(err) == nil || AsError(err).Kind != Rejected {
		t.Errorf("with URL encoding the endpoint must see other bytes and refuse: %v", err)
	}
}

// TestSourceRenews: a token is reused until 80% of its lifetime, then a new
// one is fetched at the next authentication.
func TestSourceRenews(t *testing.T) {
	var n atomic.Int32
	srv := endpoint(t, "kql", "pw", 100*time.Second, &n)
	s := New(Config{TokenURL: srv.URL, ClientID: "kql", ClientSecret: "pw"})
	now := time.Now()
	s.now = func() time.Time { return now }
	first, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(70 * time.Second)
	again, _ := s.Token(context.Background())
	if again != first || n.Load() != 1 {
		t.Fatalf("at 70%% of its lifetime the token was not reused (%d fetched)", n.Load())
	}
	now = now.Add(15 * time.Second)
	renewed, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if renewed == first || n.Load() != 2 || s.Fetched() != 2 {
		t.Fatalf("at 85%% of its lifetime no new token was fetched (%d fetched)", n.Load())
	}
}

// TestSourceErrors: a wrong secret, an unreachable endpoint and a refusal
// are each their own error, and none holds the secret, even echoed back.
func TestSourceErrors(t *testing.T) {
	var n atomic.Int32
	srv := endpoint(t, "kql", "right", time.Hour, &n)
	_, err := New(Config{TokenURL: srv.URL, ClientID: "kql", ClientSecret: "wrong-secret-123", SecretSource: "sasl.jaas.config in c.properties"}).Token(context.Background())
	e := AsError(err)
	if e == nil || e.Kind != Rejected || e.Status != 401 {
		t.Fatalf("wrong secret: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"rejected client id \"kql\"", "HTTP 401", "invalid_client", "wrong client secret", "sasl.jaas.config in c.properties"} {
		if !strings.Contains(msg, want) {
			t.Errorf("wrong secret: %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "wrong-secret-123") {
		t.Errorf("the error shows the secret: %s", msg)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = New(Config{TokenURL: "http://" + addr + "/token", ClientID: "kql", ClientSecret: "x"}).Token(context.Background())
	if e := AsError(err); e == nil || e.Kind != Unreachable || !strings.Contains(err.Error(), "cannot reach the OAuth token endpoint http://"+addr+"/token") ||
		!strings.Contains(err.Error(), "refused") {
		t.Errorf("unreachable: %v", err)
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_scope","error_description":"no such scope"}`)
	}))
	defer bad.Close()
	_, err = New(Config{TokenURL: bad.URL, ClientID: "kql", ClientSecret: "x", Scope: "nope"}).Token(context.Background())
	if e := AsError(err); e == nil || e.Kind != Refused || !strings.Contains(err.Error(), "invalid_scope no such scope") {
		t.Errorf("refused: %v", err)
	}
}

// TestDiagnose: the claims that look wrong are named; the audience is
// shown for comparison with the broker's expected audience.
func TestDiagnose(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := New(Config{TokenURL: "http://127.0.0.1:1/default/token", Scope: "kafka"})
	s.now = func() time.Time { return now }
	mk := func(c map[string]any) *Token {
		raw := jwt(t, c)
		cl, err := Claims(raw)
		if err != nil {
			t.Fatal(err)
		}
		return &Token{Raw: raw, Claims: cl}
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		want   []string
		not    []string
	}{
		{"wrong audience", map[string]any{"sub": "kql", "aud": []string{"elsewhere"}, "scope": "kafka", "exp": now.Add(time.Minute).Unix(), "iss": "http://127.0.0.1:1/default"},
			[]string{"invalid_token", "broker's log", "nothing kql can check looks wrong", "aud [elsewhere]", "expected.audience", `iss "http://127.0.0.1:1/default"`}, nil},
		{"expired", map[string]any{"sub": "kql", "aud": "kafka", "scope": "kafka", "exp": now.Add(-time.Hour).Unix()},
			[]string{"what looks wrong: it expired at", "1h0m0s ago"}, []string{"nothing kql can check"}},
		{"no sub, other scope", map[string]any{"aud": "kafka", "scope": "read write", "exp": now.Add(time.Minute).Unix()},
			[]string{`no "sub" claim`, `lacks the scope kql asked for (kafka)`, "[read write]"}, nil},
	} {
		got := s.Diagnose(mk(tc.claims))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", tc.name, got, w)
			}
		}
	}
}

// TestDiagnoseNoScopeClaim: a token without a scope claim is not called
// wrong for it (many providers put none in, and brokers need none).
func TestDiagnoseNoScopeClaim(t *testing.T) {
	s := New(Config{TokenURL: "http://127.0.0.1:1/token", Scope: "kafka"})
	raw := jwt(t, map[string]any{"sub": "kql", "aud": "x", "exp": time.Now().Add(time.Minute).Unix()})
	c, _ := Claims(raw)
	got := s.Diagnose(&Token{Raw: raw, Claims: c})
	if !strings.Contains(got, "nothing kql can check looks wrong") || !strings.Contains(got, `no "scope" claim`) {
		t.Errorf("%s", got)
	}
}

// TestSourceKeepsAValidTokenWhenRenewalFails: a renewal that fails while
// the token is still valid keeps the token (a blip of the token endpoint
// at 80% of the lifetime must not fail every broker's re-authentication),
// asks again only after renewRetry, and once the token has expired the
// failure is returned, saying so.
func TestSourceKeepsAValidTokenWhenRenewalFails(t *testing.T) {
	var down atomic.Bool
	var asked atomic.Int32
	var n atomic.Int32
	good := endpoint(t, "kql", "pw", 100*time.Second, &n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":"temporarily_unavailable"}`)
			return
		}
		good.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	s := New(Config{TokenURL: srv.URL, ClientID: "kql", ClientSecret: "pw"})
	now := time.Now()
	s.now = func() time.Time { return now }
	first, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	now = now.Add(85 * time.Second)
	kept, err := s.Token(context.Background())
	if err != nil || kept != first || asked.Load() != 2 {
		t.Fatalf("a failed renewal at 85%%: got %v (the same token: %v, %d requests), want the valid token kept after one request", err, kept == first, asked.Load())
	}
	if e := AsError(s.RenewError()); e == nil || e.Kind != Refused {
		t.Errorf("RenewError %v, want the endpoint's refusal", s.RenewError())
	}
	now = now.Add(renewRetry / 2)
	if again, err := s.Token(context.Background()); err != nil || again != first || asked.Load() != 2 {
		t.Errorf("within renewRetry: %v, %d requests; want the kept token without asking", err, asked.Load())
	}
	now = first.Expires.Add(time.Second)
	_, err = s.Token(context.Background())
	if e := AsError(err); e == nil || e.Kind != Refused || !strings.Contains(err.Error(), "kql's OAuth token expired at ") ||
		!strings.Contains(err.Error(), "could not be renewed: the OAuth token endpoint "+srv.URL) {
		t.Fatalf("renewal failing after expiry: %v", err)
	}
	down.Store(false)
	renewed, err := s.Token(context.Background())
	if err != nil || renewed == first || s.RenewError() != nil {
		t.Fatalf("the endpoint back: %v, renew error %v", err, s.RenewError())
	}
}
