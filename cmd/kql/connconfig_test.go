package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	in := `# a comment
! another
bootstrap.servers = a:9092,b:9092
security.protocol:SASL_SSL
sasl.mechanism SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="alice" \
    password="p\u0061ss word";
empty=
`
	props, err := parseProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	lines := map[string]int{}
	for _, p := range props {
		got[p.key] = p.value
		lines[p.key] = p.line
	}
	want := map[string]string{
		"bootstrap.servers": "a:9092,b:9092",
		"security.protocol": "SASL_SSL",
		"sasl.mechanism":    "SCRAM-SHA-512",
		"sasl.jaas.config":  `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="pass word";`,
		"empty":             "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if lines["sasl.jaas.config"] != 6 || lines["empty"] != 9 {
		t.Errorf("line numbers: %v", lines)
	}
	j, err := parseJAAS(got["sasl.jaas.config"])
	if err != nil {
		t.Fatal(err)
	}
	if j.module != "ScramLoginModule" || j.options["username"] != "alice" || j.options["password"] != "pass word" {
		t.Fatalf("jaas: %+v", j)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandConfig(t *testing.T) {
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", testCAPEM(t))
	cfg := writeFile(t, dir, "client.properties", `bootstrap.servers=k1:9093,k2:9093
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="hunter2";
ssl.truststore.type=PEM
ssl.truststore.location=ca.pem
client.id=from-file
linger.ms=5
acks=all
`)
	cc, err := loadCommandConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.warnings) != 1 || !strings.Contains(cc.warnings[0], "acks, linger.ms") {
		t.Errorf("want one warning naming the unknown keys, got %q", cc.warnings)
	}
	s := cc.settings
	if !reflect.DeepEqual(s.bootstrap, []string{"k1:9093", "k2:9093"}) || !s.tls || s.caFile != ca ||
		s.saslMechanism != "PLAIN" || s.saslUser != "bob" || s.saslPassword != "hunter2" || s.clientID != "from-file" {
		t.Fatalf("settings: %+v", s)
	}

	// Flags override the file.
	h := newHarness(t)
	h.env["KQL_BOOTSTRAP"] = "env:1" // weaker than the file
	r := h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "warning:") {
		t.Fatalf("%s", r)
	}
	d := h.dials[0]
	if !reflect.DeepEqual(d.Bootstrap, []string{"k1:9093", "k2:9093"}) || d.TLS == nil || d.SASL == nil || d.SASL.Name() != "PLAIN" || d.ClientID != "from-file" {
		t.Fatalf("dialled %+v", d)
	}
	h.env["KQL_SASL_PASSWORD"] = "pw"
	r = h.run("--command-config", cfg, "-b", "flag:1", "--client-id", "flag-id", "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "carol", "-e", "SHOW TOPICS;")
	d = h.dials[1]
	if r.code != 0 || !reflect.DeepEqual(d.Bootstrap, []string{"flag:1"}) || d.SASL.Name() != "SCRAM-SHA-256" || d.ClientID != "flag-id" {
		t.Fatalf("flags must override the file: %+v\n%s", d, r)
	}
}

func TestCommandConfigErrors(t *testing.T) {
	dir := t.TempDir()
	jks := writeFile(t, dir, "truststore.jks", "\xfe\xed\xfe\xed\x00\x00\x00\x02binary")
	for _, tc := range []struct {
		props string
		want  []string
	}{
		{"security.protocol=SSL\nssl.truststore.location=" + jks + "\n", []string{"JKS", "PEM", "keytool", "openssl", ":2:"}},
		{"security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=" + jks + "\n", []string{"JKS", "keytool"}},
		{"security.protocol=SASL_SSL\n", []string{"sasl.mechanism", "GSSAPI"}},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n", []string{"OAUTHBEARER", "not supported"}},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" password=\"b\";\n", []string{"ScramLoginModule", "PlainLoginModule"}},
		{"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";\n", []string{"password"}},
		{"security.protocol=TLS\n", []string{"security.protocol", `"TLS"`}},
	} {
		refusedConfig(t, dir, tc.props, tc.want)
	}
}

// refusedConfig runs kql with props as its --command-config and checks that
// it exits 2 before connecting, with an error containing each of want.
func refusedConfig(t *testing.T, dir, props string, want []string) runResult {
	t.Helper()
	cfg := writeFile(t, dir, "c.properties", props)
	h := newHarness(t)
	r := h.run("--command-config", cfg, "-e", "SHOW TOPICS;")
	if r.code != exitUsage || len(h.dials) != 0 {
		t.Errorf("%q: want exit 2 before connecting:\n%s", props, r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%q: error lacks %q:\n%s", props, w, r.stderr)
		}
	}
	return r
}
