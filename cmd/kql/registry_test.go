package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func TestRegistryURL(t *testing.T) {
	for _, tc := range []struct {
		raw, clean, user, err string
	}{
		{raw: "http://sr:8081", clean: "http://sr:8081"},
		{raw: " HTTPS://sr.example.com/ ", clean: "https://sr.example.com"},
		{raw: "https://sr:8443/registry/", clean: "https://sr:8443/registry"},
		{raw: "http://[::1]:8081", clean: "http://[::1]:8081"},
		{raw: "https://bob:s3cret@sr:8081", clean: "https://sr:8081", user: "bob:s3cret"},
		{raw: "sr:8081", err: `"sr:8081" has no scheme: want http://sr:8081 or https://sr:8081`},
		{raw: "ftp://sr", err: `the scheme must be http or https, not "ftp"`},
		{raw: "http://", err: `"http://" has no host`},
		{raw: "http://sr:8081#x", err: "no query or fragment"},
		{raw: "https://bob:s3cret@sr:port", err: `"https://***@sr:port" is not a URL`},
		{raw: "bob:s3cret@sr:8081", err: `"***@sr:8081" has no scheme`},
	} {
		clean, user, err := registryURL(tc.raw)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.raw, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%q: the error shows the password: %v", tc.raw, err)
			}
			continue
		}
		got := ""
		if user != nil {
			got = user.String()
		}
		if err != nil || clean != tc.clean || got != tc.user {
			t.Errorf("%q: got %q, user %q, %v; want %q, user %q", tc.raw, clean, got, err, tc.clean, tc.user)
		}
	}
}

func TestRegistryProperties(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	ca := writeFile(t, dir, "sr-ca.pem", string(pki.caPEM))
	client := writeFile(t, dir, "client.pem", string(pki.certPEM)+string(pki.keyPEM))
	cert := writeFile(t, dir, "cert.pem", string(pki.certPEM))
	key := writeFile(t, dir, "key.pem", string(pki.keyPEM))
	for _, tc := range []struct {
		name, props string
		want        registrySettings
	}{
		{"url list", "schema.registry.url=http://sr1:8081, http://sr2:8081/\n",
			registrySettings{urls: []string{"http://sr1:8081", "http://sr2:8081"}}},
		{"USER_INFO", "schema.registry.url=https://sr:8081\nbasic.auth.credentials.source=USER_INFO\nbasic.auth.user.info=bob:pa:ss\n",
			registrySettings{urls: []string{"https://sr:8081"}, user: "bob", password: "pa:ss", havePassword: true, passwordSource: "basic.auth.user.info in FILE"}},
		{"prefixed spellings", "schema.registry.url=https://sr:8081\nschema.registry.basic.auth.credentials.source=USER_INFO\nschema.registry.basic.auth.user.info=bob:pw\n",
			registrySettings{urls: []string{"https://sr:8081"}, user: "bob", password: "pw", havePassword: true, passwordSource: "schema.registry.basic.auth.user.info in FILE"}},
		{"user info without a source", "schema.registry.url=https://sr:8081\nbasic.auth.user.info=bob:pw\n",
			registrySettings{urls: []string{"https://sr:8081"}, user: "bob", password: "pw", havePassword: true, passwordSource: "basic.auth.user.info in FILE"}},
		{"URL source", "schema.registry.url=https://bob:p%40ss@sr:8081\nbasic.auth.credentials.source=URL\n",
			registrySettings{urls: []string{"https://sr:8081"}, user: "bob", password: "p@ss", havePassword: true, userFromURL: true, passwordSource: "the user info of schema.registry.url in FILE"}},
		{"SASL_INHERIT", "schema.registry.url=https://sr:8081\nbasic.auth.credentials.source=SASL_INHERIT\n",
			registrySettings{urls: []string{"https://sr:8081"}, inheritSASL: true}},
		{"bearer", "schema.registry.url=https://sr:8081\nbearer.auth.credentials.source=STATIC_TOKEN\nbearer.auth.token=tok\n",
			registrySettings{urls: []string{"https://sr:8081"}, token: "tok", tokenSource: "bearer.auth.token in FILE"}},
		{"bearer prefixed", "schema.registry.url=https://sr:8081\nschema.registry.bearer.auth.token=tok\n",
			registrySettings{urls: []string{"https://sr:8081"}, token: "tok", tokenSource: "schema.registry.bearer.auth.token in FILE"}},
		{"truststore", "schema.registry.url=https://sr:8081\nschema.registry.ssl.truststore.type=PEM\nschema.registry.ssl.truststore.location=sr-ca.pem\nschema.registry.ssl.endpoint.identification.algorithm=\n",
			registrySettings{urls: []string{"https://sr:8081"}, tls: tlsSettings{caFile: ca, caSource: "schema.registry.ssl.truststore.location " + ca, noHostVerify: true}}},
		{"keystore", "schema.registry.url=https://sr:8081\nschema.registry.ssl.keystore.type=PEM\nschema.registry.ssl.keystore.location=client.pem\n",
			registrySettings{urls: []string{"https://sr:8081"}, tls: tlsSettings{keystoreFile: client}}},
		{"PEM pair", "schema.registry.url=https://sr:8081\nschema.registry.ssl.ca.location=sr-ca.pem\nschema.registry.ssl.certificate.location=cert.pem\nschema.registry.ssl.key.location=key.pem\n",
			registrySettings{urls: []string{"https://sr:8081"}, tls: tlsSettings{caFile: ca, caSource: "schema.registry.ssl.ca.location " + ca, certFile: cert, keyFile: key}}},
		// The brokers' ssl.* settings are not the registry's, and the
		// registry's are read without security.protocol=SSL.
		{"kafka ssl is not the registry's", "security.protocol=SSL\nssl.ca.location=sr-ca.pem\nschema.registry.url=https://sr:8081\n",
			registrySettings{urls: []string{"https://sr:8081"}}},
	} {
		cfg := writeFile(t, dir, "c.properties", tc.props)
		cc, err := loadCommandConfig(cfg)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(cc.warnings) != 0 {
			t.Errorf("%s: warnings %q", tc.name, cc.warnings)
		}
		got := cc.settings.registry
		got.tls.keyPrefix = ""
		if len(got.urls) > 0 {
			tc.want.urlSource = "schema.registry.url in " + cfg
		}
		tc.want.passwordSource = strings.Replace(tc.want.passwordSource, "FILE", cfg, 1)
		tc.want.tokenSource = strings.Replace(tc.want.tokenSource, "FILE", cfg, 1)
		tc.want.fileLabel = "--command-config"
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	// The registry's TLS settings make a TLS config with those files.
	cfg := writeFile(t, dir, "tls.properties", "schema.registry.url=https://sr:8081\nschema.registry.ssl.truststore.location=sr-ca.pem\nschema.registry.ssl.keystore.location=client.pem\n")
	cc, err := loadCommandConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := resolveSettings(&options{}, func(string) string { return "" }, cc, noPrompt(t))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := s.registry.schemaConfig()
	if err != nil {
		t.Fatal(err)
	}
	if sc.TLS == nil || sc.TLS.RootCAs == nil || len(sc.TLS.Certificates) != 1 || s.tls {
		t.Errorf("registry TLS config %+v (and the brokers' TLS must stay off: %v)", sc.TLS, s.tls)
	}
}

func TestRegistryPropertiesErrors(t *testing.T) {
	dir := t.TempDir()
	jks := writeFile(t, dir, "truststore.jks", "\xfe\xed\xfe\xed\x00\x00\x00\x02binary")
	for _, tc := range []struct {
		props string
		want  []string
	}{
		{"schema.registry.url=sr:8081\n", []string{":1: schema.registry.url", "no scheme"}},
		{"# x\nschema.registry.url= , \n", []string{":2: schema.registry.url", "empty URL list"}},
		{"schema.registry.url=https://sr\nbasic.auth.credentials.source=USER_INFO\n", []string{":2: basic.auth.credentials.source", "needs basic.auth.user.info"}},
		{"schema.registry.url=https://sr\nbasic.auth.user.info=Hunter2-no-colon\n", []string{":2: basic.auth.user.info", "user:password", "not shown"}},
		{"schema.registry.url=https://sr\nbasic.auth.credentials.source=URL\n", []string{"basic.auth.credentials.source", "URL needs the user and password in schema.registry.url"}},
		{"schema.registry.url=https://sr\nbasic.auth.credentials.source=OAUTH\n", []string{"basic.auth.credentials.source", `"OAUTH" is not supported`}},
		{"schema.registry.url=https://sr\nbearer.auth.credentials.source=OAUTHBEARER\n", []string{"bearer.auth.credentials.source", "STATIC_TOKEN"}},
		{"schema.registry.url=https://sr\nbearer.auth.credentials.source=STATIC_TOKEN\n", []string{"needs bearer.auth.token"}},
		{"schema.registry.url=https://sr\nbasic.auth.user.info=a:b\nbearer.auth.token=t\n", []string{"bearer.auth.token", "not both"}},
		{"schema.registry.url=https://a:b@sr1,https://c:d@sr2\n", []string{"different user info"}},
		{"schema.registry.url=https://sr\nschema.registry.ssl.truststore.location=" + jks + "\n", []string{":2: schema.registry.ssl.truststore.location", "JKS", "keytool", "schema.registry.ssl.truststore.type=PEM", "--schema-registry-ca ca.pem"}},
		{"schema.registry.url=https://sr\nschema.registry.ssl.certificate.location=c.pem\n", []string{"schema.registry.ssl.certificate.location and schema.registry.ssl.key.location go together"}},
		{"schema.registry.url=https://sr\nbasic.auth.credentials.source=SASL_INHERIT\n", []string{"SASL_INHERIT", "needs the Kafka SASL settings"}},
	} {
		r := refusedConfig(t, dir, tc.props, tc.want)
		for _, secret := range []string{"Hunter2", ":b@", ":d@"} {
			if strings.Contains(r.stderr, secret) {
				t.Errorf("%q: the error shows a secret (%q):\n%s", tc.props, secret, r.stderr)
			}
		}
	}
}

// noPrompt fails the test if a password is asked for.
func noPrompt(t *testing.T) func(what, user, env string) (string, error) {
	return func(what, user, env string) (string, error) {
		t.Helper()
		t.Errorf("asked for the password of %s %s", what, user)
		return "", usagef("no prompt")
	}
}

// TestRegistryFlagsOverrideTheFile: --schema-registry replaces the file's
// URLs (and the credentials that came inside them), --schema-registry-user
// its user (and that user's password, unless it is the same user), and
// $KQL_SCHEMA_REGISTRY_PASSWORD any password from the file.
func TestRegistryFlagsOverrideTheFile(t *testing.T) {
	dir := t.TempDir()
	withInfo := writeFile(t, dir, "info.properties", "schema.registry.url=https://file:8081\nbasic.auth.user.info=bob:file-pw\n")
	withURL := writeFile(t, dir, "url.properties", "schema.registry.url=https://bob:url-pw@file:8081\n")
	withToken := writeFile(t, dir, "token.properties", "schema.registry.url=https://file:8081\nbearer.auth.token=tok\n")
	inherit := writeFile(t, dir, "inherit.properties", "schema.registry.url=https://file:8081\nbasic.auth.credentials.source=SASL_INHERIT\n"+
		"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"kafka-user\" password=\"kafka-pw\";\n")
	type want struct {
		urls                          []string
		user, password, source, token string
		overridden                    string
		prompted                      string
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want want
	}{
		{"flag URLs, repeated and comma-separated", []string{"--schema-registry", "http://a:1,http://b:2", "--schema-registry", "http://c:3/"}, "",
			want{urls: []string{"http://a:1", "http://b:2", "http://c:3"}}},
		{"flag user, env password", []string{"--schema-registry", "http://a:1", "--schema-registry-user", "carol"}, "env-pw",
			want{urls: []string{"http://a:1"}, user: "carol", password: "env-pw", source: "$KQL_SCHEMA_REGISTRY_PASSWORD"}},
		{"flag user, prompted", []string{"--schema-registry", "http://a:1", "--schema-registry-user", "carol"}, "",
			want{urls: []string{"http://a:1"}, user: "carol", password: "typed", source: "the password prompt", prompted: "carol"}},
		{"file credentials", []string{"--command-config", withInfo}, "",
			want{urls: []string{"https://file:8081"}, user: "bob", password: "file-pw", source: "basic.auth.user.info in " + withInfo}},
		{"flag URL keeps the file's user info", []string{"--command-config", withInfo, "--schema-registry", "https://flag:8081"}, "",
			want{urls: []string{"https://flag:8081"}, user: "bob", password: "file-pw", source: "basic.auth.user.info in " + withInfo}},
		{"env overrides the file's password", []string{"--command-config", withInfo}, "env-pw",
			want{urls: []string{"https://file:8081"}, user: "bob", password: "env-pw", source: "$KQL_SCHEMA_REGISTRY_PASSWORD", overridden: "basic.auth.user.info in " + withInfo}},
		{"same user from the flag keeps the file's password", []string{"--command-config", withInfo, "--schema-registry-user", "bob"}, "",
			want{urls: []string{"https://file:8081"}, user: "bob", password: "file-pw", source: "basic.auth.user.info in " + withInfo}},
		{"another user drops the file's password", []string{"--command-config", withInfo, "--schema-registry-user", "carol"}, "",
			want{urls: []string{"https://file:8081"}, user: "carol", password: "typed", source: "the password prompt", prompted: "carol"}},
		{"credentials in the file's URL", []string{"--command-config", withURL}, "",
			want{urls: []string{"https://file:8081"}, user: "bob", password: "url-pw", source: "the user info of schema.registry.url in " + withURL}},
		{"a flag URL drops the file URL's credentials", []string{"--command-config", withURL, "--schema-registry", "https://flag:8081"}, "",
			want{urls: []string{"https://flag:8081"}}},
		{"bearer token", []string{"--command-config", withToken}, "",
			want{urls: []string{"https://file:8081"}, token: "tok"}},
		{"a flag user replaces the file's token", []string{"--command-config", withToken, "--schema-registry-user", "carol"}, "env-pw",
			want{urls: []string{"https://file:8081"}, user: "carol", password: "env-pw", source: "$KQL_SCHEMA_REGISTRY_PASSWORD"}},
		{"SASL_INHERIT", []string{"--command-config", inherit}, "",
			want{urls: []string{"https://file:8081"}, user: "kafka-user", password: "kafka-pw", source: "the SASL password (sasl.jaas.config in " + inherit + "; basic.auth.credentials.source=SASL_INHERIT)"}},
	} {
		env := map[string]string{"KQL_SCHEMA_REGISTRY_PASSWORD": tc.env}
		o, _, err := parseFlags(tc.args, func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var cc *commandConfig
		if o.commandConfig != "" {
			if cc, err = loadCommandConfig(o.commandConfig); err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
		}
		prompted := ""
		s, err := resolveSettings(o, func(k string) string { return env[k] }, cc, func(what, user, envName string) (string, error) {
			if what != "schema registry user" || envName != "KQL_SCHEMA_REGISTRY_PASSWORD" {
				t.Errorf("%s: prompted for %s %s (%s)", tc.name, what, user, envName)
			}
			prompted = user
			return "typed", nil
		})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		r := s.registry
		got := want{urls: r.urls, user: r.user, password: r.password, source: r.passwordSource, token: r.token, overridden: r.overridden, prompted: prompted}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// TestRegistryBannerAndSession: on a terminal the banner names the registry
// and how kql authenticates to it (never the password), the session is given
// the registry, and \connect's new session too. A registry that refuses the
// password is one warning at the start; the statements still run.
func TestRegistryBannerAndSession(t *testing.T) {
	fake := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("bob:Pw-0f-Bob"))))
	t.Cleanup(fake.Close)
	h := newHarness(t)
	h.env["KQL_SCHEMA_REGISTRY_PASSWORD"] = "Pw-0f-Bob"
	r := h.repl("SHOW TOPICS;\n\\connect other:9092\n", "--schema-registry", fake.URL(), "--schema-registry-user", "bob")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	line := "schema registry: " + fake.URL() + ", as bob (basic authentication, password from $KQL_SCHEMA_REGISTRY_PASSWORD)\n"
	if strings.Count(r.stderr, line) != 2 { // the start and \connect
		t.Errorf("the banner does not name the registry (want %q twice):\n%s", line, r.stderr)
	}
	if strings.Contains(r.stderr, "warning") || strings.Contains(r.stderr, "Pw-0f-Bob") {
		t.Errorf("a warning, or the password:\n%s", r.stderr)
	}
	if len(h.registries) != 2 || h.registries[0] != h.registries[1] || h.registries[0].URLs() != fake.URL() {
		t.Errorf("the sessions were given %v, want the registry twice", h.registries)
	}

	h.env["KQL_SCHEMA_REGISTRY_PASSWORD"] = "Not-Bobs-Pw"
	r = h.run("--schema-registry", fake.URL(), "--schema-registry-user", "bob", "-e", "SHOW TOPICS;")
	if r.code != 0 || strings.Count(r.stderr, "warning: ") != 1 ||
		!strings.Contains(r.stderr, `refused kql (HTTP 403: User not authorized) with basic authentication as "bob", password from $KQL_SCHEMA_REGISTRY_PASSWORD: check the user and password`) {
		t.Errorf("a wrong password: want exit 0 and one warning saying whose credentials were refused:\n%s", r)
	}
	if strings.Contains(r.stderr, "Not-Bobs-Pw") {
		t.Errorf("the warning shows the password:\n%s", r.stderr)
	}

	// $KQL_SCHEMA_REGISTRY_PASSWORD over the file's password is said after connecting.
	cfg := writeFile(t, t.TempDir(), "sr.properties", "schema.registry.url="+fake.URL()+"\nbasic.auth.user.info=bob:stale\n")
	h.env["KQL_SCHEMA_REGISTRY_PASSWORD"] = "Pw-0f-Bob"
	r = h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
	if r.code != 0 || strings.Contains(r.stderr, "warning") ||
		!strings.Contains(r.stderr, "kql: the schema registry password of bob came from $KQL_SCHEMA_REGISTRY_PASSWORD, which takes precedence over basic.auth.user.info in "+cfg) {
		t.Errorf("want a notice that the variable replaced the file's password:\n%s", r)
	}
}

// With role-based access, a user who may read subjects may still be
// refused the global config that the start-up check reads (HTTP 403): that
// is no reason to warn while the registry answers what kql needs. A 403 on
// every request still is.
func TestRegistryCheckToleratesAForbiddenGlobalConfig(t *testing.T) {
	fake := srfake.New()
	t.Cleanup(fake.Close)
	target, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	var configRefused, typesAsked atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	forbidAll := atomic.Bool{}
	rbac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/schemas/types" {
			typesAsked.Add(1)
		}
		switch {
		case r.URL.Path == "/config" || forbidAll.Load():
			configRefused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error_code":40301,"message":"User is denied operation Read on Subject: __GLOBAL"}`))
		case r.URL.Path == "/schemas/types":
			// Confluent's and Apicurio's answer (srfake has no such endpoint).
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`["JSON","PROTOBUF","AVRO"]`))
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(rbac.Close)
	h := newHarness(t)
	r := h.run("--schema-registry", rbac.URL, "-e", "SHOW TOPICS;")
	if r.code != 0 || strings.Contains(r.stderr, "warning") || configRefused.Load() == 0 || typesAsked.Load() != 1 {
		t.Errorf("a refused GET /config alone: want no warning after one GET /schemas/types (refused %d, types asked %d):\n%s", configRefused.Load(), typesAsked.Load(), r)
	}
	forbidAll.Store(true)
	r = h.run("--schema-registry", rbac.URL, "-e", "SHOW TOPICS;")
	if r.code != 0 || strings.Count(r.stderr, "warning: ") != 1 || !strings.Contains(r.stderr, "refused kql (HTTP 403: User is denied operation Read on Subject: __GLOBAL)") {
		t.Errorf("everything refused: want one warning:\n%s", r)
	}
}

// TestRegistryNotConfiguredChangesNothing: no registry, no session registry,
// no banner line, and registry keys are not "ignored" keys.
func TestRegistryNotConfiguredChangesNothing(t *testing.T) {
	h := newHarness(t)
	r := h.repl("SHOW TOPICS;\n")
	if r.code != 0 || strings.Contains(r.stderr, "schema registry") || len(h.registries) != 0 {
		t.Fatalf("no registry configured:\n%s\nregistries %v", r, h.registries)
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.properties", "schema.registry.url=http://127.0.0.1:1\nschema.registry.ssl.truststore.type=PEM\n"+
		"schema.registry.ssl.endpoint.identification.algorithm=https\nbasic.auth.credentials.source=USER_INFO\nbasic.auth.user.info=a:b\nlinger.ms=5\n")
	cc, err := loadCommandConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.warnings) != 1 || !strings.HasSuffix(cc.warnings[0], "ignoring a key kql does not use: linger.ms") {
		t.Errorf("only linger.ms should be warned about: %q", cc.warnings)
	}
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if cc, err = loadCommandConfig(filepath.Clean(cfg)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cc.warnings, "\n"), "holds a secret (basic.auth.user.info)") {
		t.Errorf("a world-readable file with basic.auth.user.info: want the chmod warning, got %q", cc.warnings)
	}
}
