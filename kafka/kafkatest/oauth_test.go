package kafkatest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestOAuthServer proves the OAUTHBEARER test bed's provider is what the
// kql tests assume: its proxy refuses a wrong secret (the provider itself
// would not), a right one gets a JWT with sub = the client id, the proxy's
// issuer, the configured lifetime and the audience chosen by the scope, and
// every issued token is counted.
func TestOAuthServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := kafkatest.StartOAuthServer(ctx, kafkatest.OAuthServerConfig{TokenLifetime: 15 * time.Second, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	token := func(id, secret, scope string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.TokenURL(),
			strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(id, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var tr struct {
			AccessToken string `json:"access_token"`
		}
		json.Unmarshal(body, &tr)
		parts := strings.Split(tr.AccessToken, ".")
		if len(parts) != 3 {
			return resp.StatusCode, nil
		}
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		json.Unmarshal(payload, &claims)
		return resp.StatusCode, claims
	}
	if code, _ := token(kafkatest.OAuthClientID, "wrong", kafkatest.OAuthScope); code != http.StatusUnauthorized || srv.Rejected() != 1 || srv.TokensIssued() != 0 {
		t.Errorf("wrong secret: HTTP %d, %d rejected, %d issued; want 401, 1, 0", code, srv.Rejected(), srv.TokensIssued())
	}
	code, c := token(kafkatest.OAuthClientID, srv.Secret(kafkatest.OAuthClientID), kafkatest.OAuthScope)
	if code != http.StatusOK || c["sub"] != kafkatest.OAuthClientID || c["iss"] != srv.Issuer() || !audIs(c["aud"], kafkatest.OAuthAudience) {
		t.Fatalf("token for scope %s: HTTP %d, claims %v", kafkatest.OAuthScope, code, c)
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 15 {
		t.Errorf("lifetime %v s, want 15", exp-iat)
	}
	if _, c := token(kafkatest.OAuthClientID, srv.Secret(kafkatest.OAuthClientID), "other"); !audIs(c["aud"], kafkatest.OAuthOtherAudience) {
		t.Errorf("another scope: aud %v, want %s", c["aud"], kafkatest.OAuthOtherAudience)
	}
	if srv.TokensIssued() != 2 {
		t.Errorf("%d tokens counted, want 2", srv.TokensIssued())
	}
}

func audIs(v any, want string) bool {
	switch a := v.(type) {
	case string:
		return a == want
	case []any:
		return len(a) == 1 && a[0] == want
	}
	return false
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
