package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kql-dev/kql/kafka/oauth"
)

func writeProps(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func resolveOAuth(t *testing.T, text string) (*connSettings, error) {
	t.Helper()
	cc, err := loadCommandConfig(writeProps(t, text))
	if err != nil {
		return nil, err
	}
	if len(cc.warnings) > 0 {
		t.Errorf("warnings: %v", cc.warnings)
	}
	noPrompt := func(what, user, env string) (string, error) {
		t.Fatalf("OAUTHBEARER asked for a password (%s %s)", what, user)
		return "", nil
	}
	return resolveSettings(&options{}, func(string) string { return "" }, cc, noPrompt)
}

// TestOAuthPropertiesBothSpellings: the client credentials come from the
// JAAS options (Kafka 3.x) or from Kafka 4.3's properties, which win.
func TestOAuthPropertiesBothSpellings(t *testing.T) {
	jaas := `bootstrap.servers=127.0.0.1:9092
security.protocol=SASL_PLAINTEXT
sasl.mechanism=OAUTHBEARER
sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:8080/default/token
sasl.oauthbearer.sub.claim.name=client_id
sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \
  clientId="kql-app" clientSecret="jaas-secret" scope="kafka" extension_logicalCluster="lkc-1";
`
	s, err := resolveOAuth(t, jaas)
	if err != nil {
		t.Fatal(err)
	}
	o := s.oauth
	if o == nil || o.ClientID != "kql-app" || o.ClientSecret != "jaas-secret" || o.Scope != "kafka" || o.SubClaim != "client_id" ||
		o.Extensions["logicalCluster"] != "lkc-1" || o.TokenURL != "http://127.0.0.1:8080/default/token" || !strings.HasPrefix(o.SecretSource, "sasl.jaas.config in ") {
		t.Fatalf("JAAS spelling: %+v", o)
	}
	if _, err := s.kafkaConfig(); err != nil || s.oauthSource == nil {
		t.Fatalf("kafkaConfig: %v", err)
	}
	if got := s.connectedAs(); !strings.Contains(got, "as client id kql-app (OAUTHBEARER, tokens from http://127.0.0.1:8080/default/token") || strings.Contains(got, "jaas-secret") {
		t.Errorf("banner %q", got)
	}

	kafka43 := `security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.oauthbearer.token.endpoint.url=https://idp.example.com/token
sasl.oauthbearer.client.credentials.client.id=new-id
sasl.oauthbearer.client.credentials.client.secret=new-secret
sasl.oauthbearer.scope=kafka:read kafka:write
sasl.oauthbearer.jwt.retriever.class=org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="old" clientSecret="old";
`
	s, err = resolveOAuth(t, kafka43)
	if err != nil {
		t.Fatal(err)
	}
	if o := s.oauth; o.ClientID != "new-id" || o.ClientSecret != "new-secret" || o.Scope != "kafka:read kafka:write" ||
		!strings.HasPrefix(o.SecretSource, "sasl.oauthbearer.client.credentials.client.secret in ") {
		t.Fatalf("Kafka 4.3 spelling: %+v", o)
	}
	// The registry cannot inherit credentials OAUTHBEARER does not have.
	if _, err := resolveOAuth(t, kafka43+"schema.registry.url=http://127.0.0.1:1\nbasic.auth.credentials.source=SASL_INHERIT\n"); err == nil ||
		!strings.Contains(err.Error(), "OAUTHBEARER has no user and password to inherit") {
		t.Errorf("SASL_INHERIT with OAUTHBEARER: %v", err)
	}
	// A flag's mechanism replaces the file's OAUTHBEARER.
	cc, err := loadCommandConfig(writeProps(t, kafka43))
	if err != nil {
		t.Fatal(err)
	}
	flagged, err := resolveSettings(&options{saslMechanism: "PLAIN", saslUser: "alice"}, func(k string) string {
		if k == "KQL_SASL_PASSWORD" {
			return "pw"
		}
		return ""
	}, cc, nil)
	if err != nil || flagged.oauth != nil || flagged.saslMechanism != "PLAIN" {
		t.Fatalf("--sasl-mechanism PLAIN over an OAUTHBEARER file: %+v %v", flagged, err)
	}
}

// TestOAuthPropertiesErrors: each mistake names its key and line, never
// the secret.
func TestOAuthPropertiesErrors(t *testing.T) {
	head := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
	mod := "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
	for _, tc := range []struct{ name, text, want string }{
		{"no endpoint", head + `sasl.jaas.config=` + mod + ` clientId="a" clientSecret="hush";`, ":2: sasl.mechanism: OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url"},
		{"file endpoint", head + "sasl.oauthbearer.token.endpoint.url=file:///tmp/token\n", ":3: sasl.oauthbearer.token.endpoint.url: want an http:// or https:// URL"},
		{"no secret", head + "sasl.oauthbearer.token.endpoint.url=http://x/token\nsasl.jaas.config=" + mod + ` clientId="a";`, ":4: sasl.jaas.config: OAUTHBEARER needs a client id and secret"},
		{"wrong module", head + "sasl.oauthbearer.token.endpoint.url=http://x/token\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"hush\";",
			"PlainLoginModule does not go with sasl.mechanism=OAUTHBEARER"},
		{"jwt bearer", head + "sasl.oauthbearer.token.endpoint.url=http://x/token\nsasl.oauthbearer.jwt.retriever.class=org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever\n",
			"JwtBearerJwtRetriever is not supported"},
	} {
		_, err := loadCommandConfig(writeProps(t, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		} else if strings.Contains(err.Error(), "hush") {
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
	}
}

// TestOAuthBearerFlag: OAUTHBEARER needs the file; the flag says where.
func TestOAuthBearerFlag(t *testing.T) {
	_, _, err := parseFlags([]string{"--sasl-mechanism", "oauthbearer"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "OAUTHBEARER is set in --command-config") {
		t.Errorf("got %v", err)
	}
}

// TestOAuthTokenEndpointTrust: the token endpoint's CA is taken from the
// ssl.truststore.* options inside sasl.jaas.config (where Kafka's Java
// client reads it), and from the file's own ssl.truststore.* otherwise; a
// token is really fetched over TLS with each, and refused without.
func TestOAuthTokenEndpointTrust(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, _ := r.BasicAuth(); id != "kql" || secret != "s" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"access_token":"a.eyJzdWIiOiJrcWwifQ.b","expires_in":60}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "idp-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	head := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=" + srv.URL + "/token\n"
	mod := `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="kql" clientSecret="s"`
	fetch := func(text string) error {
		s, err := resolveOAuth(t, text)
		if err != nil {
			return err
		}
		if _, err := s.kafkaConfig(); err != nil {
			return err
		}
		return s.prefetchToken(context.Background())
	}
	inJAAS := head + "sasl.jaas.config=" + mod + ` ssl.truststore.location="` + ca + `" ssl.truststore.type="PEM";` + "\n"
	if err := fetch(inJAAS); err != nil {
		t.Errorf("CA in sasl.jaas.config: %v", err)
	}
	inFile := head + "ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\nsasl.jaas.config=" + mod + ";\n"
	if err := fetch(inFile); err != nil {
		t.Errorf("CA in ssl.truststore.location: %v", err)
	}
	err := fetch(head + "sasl.jaas.config=" + mod + ";\n")
	if e := oauth.AsError(err); e == nil || e.Kind != oauth.Unreachable || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("no CA for the endpoint: got %v, want a TLS verification failure", err)
	}
	missing := head + "sasl.jaas.config=" + mod + ` ssl.truststore.location="` + filepath.Join(dir, "nope.pem") + `";` + "\n"
	if _, err := resolveOAuth(t, missing); err == nil || !strings.Contains(err.Error(), "sasl.jaas.config option ssl.truststore.location (the token endpoint's TLS)") {
		t.Errorf("a missing CA file in the JAAS options: %v", err)
	}
}

// TestOAuthInsecureWarning: with --tls-insecure-skip-verify the warning
// names what an impersonating broker would get over OAUTHBEARER, the
// access token, not a SASL password kql does not have.
func TestOAuthInsecureWarning(t *testing.T) {
	cc, err := loadCommandConfig(writeProps(t, `security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.oauthbearer.token.endpoint.url=https://idp.example.com/token
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="kql" clientSecret="s";
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := resolveSettings(&options{tlsInsecureSkipVerify: true, tls: true}, func(string) string { return "" }, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := s.insecureWarning()
	if !strings.Contains(w, "the OAuth access token included") || strings.Contains(w, "password") {
		t.Errorf("warning %q: want it to name the OAuth access token, not a password", w)
	}
}
