package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandConfigErrorsNeverShowThePassword: every way a sasl.jaas.config
// can be wrong is reported with the key and a position, never the value.
func TestCommandConfigErrorsNeverShowThePassword(t *testing.T) {
	const secret = "Sup3r-Secr3t"
	head := "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
	mod := "org.apache.kafka.common.security.scram.ScramLoginModule required "
	for _, tc := range []struct {
		name, jaas, want string
	}{
		{"unterminated quote", mod + `username="alice" password="` + secret + ";", "unterminated quote"},
		{"bad \\u escape", mod + `username="alice" password="` + secret + `\u12";`, `bad \u escape`},
		{"unquoted password with a space", mod + `username="alice" password=Sup3r ` + secret[5:] + ";", "not shown"},
		{"junk after the ;", mod + `username="alice" password="` + secret + `"; ` + secret + "-junk", "after the ';'"},
		{"second entry", mod + `username="alice" password="x"; ` + mod + ` username="b" password="` + secret + `";`, "after the ';'"},
		{"no ;", mod + `username="alice" password="` + secret + `"`, "does not end with ';'"},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "c.properties")
		if err := os.WriteFile(cfg, []byte(head+"sasl.jaas.config="+tc.jaas+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t)
		r := h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
		if r.code != exitUsage || len(h.dials) != 0 {
			t.Errorf("%s: want exit 2 before connecting:\n%s", tc.name, r)
		}
		if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "sasl.jaas.config") {
			t.Errorf("%s: want an error naming sasl.jaas.config and %q:\n%s", tc.name, tc.want, r.stderr)
		}
		for _, part := range []string{secret, secret[5:], "Sup3r"} {
			if strings.Contains(r.stderr, part) {
				t.Errorf("%s: the error shows (part of) the password %q:\n%s", tc.name, part, r.stderr)
			}
		}
	}
}

func TestCommandConfigWorldReadableWarning(t *testing.T) {
	dir := t.TempDir()
	body := "bootstrap.servers=k:9093\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\";\n"
	cfg := filepath.Join(dir, "c.properties")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cfg, 0o644)
	h := newHarness(t)
	r := h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --command-config "+cfg+" is readable by other users (mode 0644)") ||
		!strings.Contains(r.stderr, "chmod 600 "+cfg) {
		t.Errorf("a world-readable file with a password: want a warning with the fix:\n%s", r)
	}
	os.Chmod(cfg, 0o600)
	r = h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
	if strings.Contains(r.stderr, "readable by other users") {
		t.Errorf("a private file: no warning expected:\n%s", r)
	}
	plain := filepath.Join(dir, "plain.properties")
	os.WriteFile(plain, []byte("bootstrap.servers=k:9092\n"), 0o644)
	os.Chmod(plain, 0o644)
	if r = h.run("--command-config", plain, "-e", "SHOW TOPICS;"); strings.Contains(r.stderr, "readable by other users") {
		t.Errorf("a file with no secret: no warning expected:\n%s", r)
	}
}

func TestCommandConfigInlineTruststore(t *testing.T) {
	dir := t.TempDir()
	ca := strings.TrimSpace(testCAPEM(t))
	oneLine := strings.ReplaceAll(ca, "\n", " ")
	continued := strings.ReplaceAll(ca, "\n", " \\\n  ")
	for name, v := range map[string]string{"one line": oneLine, "continued lines": continued} {
		cfg := filepath.Join(dir, "c.properties")
		os.WriteFile(cfg, []byte("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates="+v+"\n"), 0o600)
		cc, err := loadCommandConfig(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cc.warnings) != 0 || len(cc.settings.caPEM) == 0 || !strings.Contains(cc.settings.caSource, "ssl.truststore.certificates") {
			t.Errorf("%s: the inline CA was not taken: %+v %q", name, cc.settings, cc.warnings)
		}
		tc, err := cc.settings.tlsConfig()
		if err != nil || tc.RootCAs == nil {
			t.Errorf("%s: TLS config has no roots: %v", name, err)
		}
	}
	cfg := filepath.Join(dir, "bad.properties")
	os.WriteFile(cfg, []byte("security.protocol=SSL\nssl.truststore.certificates=not a certificate\n"), 0o600)
	if _, err := loadCommandConfig(cfg); err == nil || !strings.Contains(err.Error(), "ssl.truststore.certificates") {
		t.Errorf("a broken inline CA: want an error naming the key, got %v", err)
	}
}

// TestRegistrySecretsNeverShown: the schema registry's password, token or
// URL user info appear in no error, warning or banner, whichever way they
// were given and whatever went wrong.
func TestRegistrySecretsNeverShown(t *testing.T) {
	const secret = "Sup3r-Secr3t"
	dir := t.TempDir()
	for _, tc := range []struct {
		name, props string
		args        []string
		code        int
		want        string
	}{
		{"user info without a colon", "schema.registry.url=http://127.0.0.1:1\nbasic.auth.user.info=" + secret + "\n", nil, exitUsage, "basic.auth.user.info"},
		{"user info in a bad URL", "schema.registry.url=http://bob:" + secret + "@127.0.0.1:port\n", nil, exitUsage, "schema.registry.url"},
		{"user info in URLs that differ", "schema.registry.url=http://bob:" + secret + "@h1:1,http://bob:x@h2:1\n", nil, exitUsage, "different user info"},
		{"token and user info", "schema.registry.url=http://127.0.0.1:1\nbasic.auth.user.info=bob:" + secret + "\nbearer.auth.token=" + secret + "\n", nil, exitUsage, "not both"},
		{"unreachable, credentials in the URL", "schema.registry.url=http://bob:" + secret + "@127.0.0.1:1\n", nil, 0, "could not be reached"},
		{"unreachable, user info", "schema.registry.url=http://127.0.0.1:1\nbasic.auth.user.info=bob:" + secret + "\n", nil, 0, "could not be reached"},
		{"unreachable, token", "schema.registry.url=http://127.0.0.1:1\nbearer.auth.token=" + secret + "\n", nil, 0, "could not be reached"},
		{"password in the flag's URL", "", []string{"--schema-registry", "http://bob:" + secret + "@127.0.0.1:1"}, exitUsage, "--schema-registry"},
		{"password in an unparsable flag URL", "", []string{"--schema-registry", "http://bob:" + secret + "@127.0.0.1:port"}, exitUsage, "--schema-registry"},
	} {
		args := append([]string{}, tc.args...)
		if tc.props != "" {
			cfg := filepath.Join(dir, "c.properties")
			if err := os.WriteFile(cfg, []byte(tc.props), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--command-config", cfg)
		}
		h := newHarness(t)
		h.tty = true // the banner too
		r := h.run(append(args, "--no-history", "-e", "SHOW TOPICS;")...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit %d and %q:\n%s", tc.name, tc.code, tc.want, r)
		}
		for _, part := range []string{secret, secret[5:], "Sup3r"} {
			if strings.Contains(r.stderr, part) || strings.Contains(r.stdout, part) {
				t.Errorf("%s: (part of) the secret %q is shown:\n%s", tc.name, part, r)
			}
		}
	}
}
