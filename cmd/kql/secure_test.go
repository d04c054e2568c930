package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// These tests run kql, in-process with the real dialer, against the shared
// real cluster's secure listeners (kafkatest.RealConfig.Secure): SASL_SSL
// with PLAIN and SCRAM, mutual TLS, and the StandardAuthorizer with ACLs the
// tests set. They assert what a user sees: exit codes, and the one line that
// says what went wrong and where.

type realRun struct {
	code           int
	stdout, stderr string
}

func (r realRun) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// runReal runs kql with args and an environment of exactly env.
func runReal(t *testing.T, env map[string]string, args ...string) realRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb,
		Getenv: func(k string) string { return env[k] }}
	code := run(ctx, ios, args, realWorld())
	return realRun{code: code, stdout: out.String(), stderr: errb.String()}
}

type secureBed struct {
	r         *kafkatest.Real
	sec       *kafkatest.Security
	sasl, ssl []string // listener addresses
	dir       string   // the test's own directory, for properties files
}

func secureCluster(t *testing.T) *secureBed {
	t.Helper()
	r := kafkatest.Shared(t)
	if r.Security() == nil {
		t.Fatal("the shared real cluster was not started with RealConfig.Secure")
	}
	return &secureBed{r: r, sec: r.Security(), sasl: r.ListenerAddrs(kafkatest.ListenerSASLSSL),
		ssl: r.ListenerAddrs(kafkatest.ListenerSSL), dir: t.TempDir()}
}

// props writes a client properties file (mode 0600) and returns its path.
func (b *secureBed) props(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// saslProps is a client.properties in Kafka's own format, as the README's
// "Connecting" recipe shows it.
func (b *secureBed) saslProps(t *testing.T, mech, user, password string) string {
	t.Helper()
	module := "org.apache.kafka.common.security.scram.ScramLoginModule"
	if mech == "PLAIN" {
		module = "org.apache.kafka.common.security.plain.PlainLoginModule"
	}
	return b.props(t, strings.ToLower(mech)+"-"+user+".properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=%s
sasl.jaas.config=%s required \
    username="%s" \
    password="%s";
ssl.truststore.type=PEM
ssl.truststore.location=%s
`, strings.Join(b.sasl, ","), mech, module, user, password, b.sec.CAFile))
}

// admin creates topics and ACLs as a super user.
func (b *secureBed) admin(t *testing.T) *kadm.Client {
	t.Helper()
	adm, closeAdm, err := b.r.Admin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAdm)
	return adm
}

func (b *secureBed) createTopic(t *testing.T, name string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Created with its leaders spread, and seen by every broker before
	// the test asks any of them (a broker learns of a new topic a moment
	// after the controller accepts it).
	if err := b.r.CreateTopicAssigned(ctx, name, spreadAssignment(brokerIDs(b.r), int(partitions))); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
}

// allow grants principal ops on a topic (or a group, with group set) and
// waits until every broker has the ACLs.
func (b *secureBed) allow(t *testing.T, principal string, topic, group string, ops ...kadm.ACLOperation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acl := kadm.NewACLs().Allow(principal).Operations(ops...).ResourcePatternType(kadm.ACLPatternLiteral)
	if topic != "" {
		acl = acl.Topics(topic)
	}
	if group != "" {
		acl = acl.Groups(group)
	}
	adm := b.admin(t)
	res, err := adm.CreateACLs(ctx, acl)
	if err == nil {
		for _, r := range res {
			err = errors.Join(err, r.Err)
		}
	}
	if err != nil {
		t.Fatalf("creating ACLs: %v", err)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow(principal).AnyResource().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	// The broker that answered may not have applied the new ACLs yet, so
	// wait for at least the ones just made.
	n := len(ops)
	if topic != "" && group != "" {
		n *= 2
	}
	if err == nil {
		had := 0
		for _, d := range described {
			had += len(d.Described)
		}
		n = max(n, had)
	}
	if err := b.r.WaitACLs(ctx, principal, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		del := kadm.NewACLs().Allow(principal).Operations(ops...).ResourcePatternType(kadm.ACLPatternLiteral)
		if topic != "" {
			del = del.Topics(topic)
		}
		if group != "" {
			del = del.Groups(group)
		}
		adm.DeleteACLs(ctx, del)
	})
}

// noSecret fails if any text holds one of the cluster's passwords.
func (b *secureBed) noSecret(t *testing.T, where, text string) {
	t.Helper()
	for user, pw := range b.sec.Users {
		if strings.Contains(text, pw) {
			t.Errorf("%s shows %s's password:\n%s", where, user, text)
		}
	}
}

// oneErrorLine checks stderr is exactly one line (no retry storm, no stack of
// wrapped errors), allowing warning lines.
func oneErrorLine(t *testing.T, r realRun) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Errorf("want one error line, got %d:\n%s", len(lines), r.stderr)
	}
	return strings.Join(lines, "\n")
}

func wantAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

var rowsFooter = regexp.MustCompile(`\((\d+) rows?\)`)

// TestRealSecureRecipes: the README's --command-config recipes, and the
// same connections with flags only, reach the cluster over SASL_SSL with
// each mechanism and over mutual TLS.
func TestRealSecureRecipes(t *testing.T) {
	b := secureCluster(t)
	topic := kafkatest.TopicName(t)
	b.createTopic(t, topic, 3)
	show := "SHOW TOPICS LIKE '" + topic + "'"
	alice := b.sec.Users[kafkatest.UserAlice]
	b.allow(t, kafkatest.Principal(kafkatest.UserAlice), topic, "", kadm.OpDescribe)
	b.allow(t, kafkatest.Principal(kafkatest.MTLSClient), topic, "", kadm.OpDescribe)
	check := func(name string, env map[string]string, args ...string) {
		t.Helper()
		r := runReal(t, env, append(args, "--format", "csv", "-e", show)...)
		if r.code != 0 || !strings.Contains(r.stdout, topic+",3,3,") {
			t.Errorf("%s: want exit 0 and the topic listed:\n%s", name, r)
		}
		b.noSecret(t, name, r.stdout+r.stderr)
	}
	for _, mech := range []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"} {
		check("file "+mech, nil, "--command-config", b.saslProps(t, mech, kafkatest.UserAlice, alice))
		check("flags "+mech, map[string]string{"KQL_SASL_PASSWORD": alice},
			"-b", strings.Join(b.sasl, ","), "--tls-ca", b.sec.CAFile, "--sasl-mechanism", mech, "--sasl-user", kafkatest.UserAlice)
	}
	check("file mTLS keystore", nil, "--command-config", b.props(t, "mtls.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SSL
ssl.truststore.type=PEM
ssl.truststore.location=%s
ssl.keystore.type=PEM
ssl.keystore.location=%s
`, strings.Join(b.ssl, ","), b.sec.CAFile, b.sec.ClientKeystoreFile)))
	check("file mTLS librdkafka keys", nil, "--command-config", b.props(t, "mtls2.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SSL
ssl.ca.location=%s
ssl.certificate.location=%s
ssl.key.location=%s
`, b.ssl[0], b.sec.CAFile, b.sec.ClientCertFile, b.sec.ClientKeyFile)))
	check("flags mTLS", nil, "-b", b.ssl[1], "--tls-ca", b.sec.CAFile, "--tls-cert", b.sec.ClientCertFile, "--tls-key", b.sec.ClientKeyFile)
	// Kafka's inline PEM trust store (ssl.truststore.certificates).
	ca, err := os.ReadFile(b.sec.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	inline := strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", " \\\n    ")
	check("file inline truststore", nil, "--command-config", b.props(t, "inline.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="%s";
ssl.truststore.type=PEM
ssl.truststore.certificates=%s
`, b.sasl[2], alice, inline)))
}

// TestRealSecureEveryStatement runs every kind of statement over SASL_SSL
// (SCRAM-SHA-512) as the super user.
func TestRealSecureEveryStatement(t *testing.T) {
	b := secureCluster(t)
	topic := kafkatest.TopicName(t)
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAdmin, b.sec.Users[kafkatest.UserAdmin])
	script := fmt.Sprintf(`CREATE TOPIC %[1]s PARTITIONS 3 REPLICATION 3;
SHOW TOPICS LIKE '%[1]s';
DESCRIBE TOPIC %[1]s;
PRODUCE INTO %[1]s KEY 'k' VALUE 'over-sasl-ssl' PARTITION 1;
CONSUME %[1]s FROM OLDEST LIMIT 1;
SHOW GROUPS;
SHOW BROKERS;
DROP TOPIC %[1]s;
`, topic)
	r := runReal(t, nil, "--command-config", cfg, "--format", "csv", "-e", script)
	if r.code != 0 {
		t.Fatalf("every statement over SASL_SSL:\n%s", r)
	}
	wantAll(t, "output", r.stdout, topic+",created", topic+",3,3,", "over-sasl-ssl", topic+",dropped")
	for _, a := range b.sasl {
		_, port, _ := strings.Cut(a, ":")
		if !strings.Contains(r.stdout, ","+port) {
			t.Errorf("SHOW BROKERS does not list the SASL_SSL port %s:\n%s", port, r.stdout)
		}
	}
}

// TestRealSecureWrongCredentials: a wrong password, a wrong CA, a wrong
// name, a missing or untrusted client certificate: exit 3 and one line that
// says what failed, where, and with which settings; never a password, and
// never a silent fallback to no TLS or no verification.
func TestRealSecureWrongCredentials(t *testing.T) {
	b := secureCluster(t)
	alice := b.sec.Users[kafkatest.UserAlice]
	show := []string{"-e", "SHOW TOPICS"}
	expect := func(name string, r realRun, want ...string) {
		t.Helper()
		if r.code != exitUnreachable {
			t.Errorf("%s: want exit 3:\n%s", name, r)
		}
		line := oneErrorLine(t, r)
		wantAll(t, name, line, want...)
		b.noSecret(t, name, r.stdout+r.stderr)
	}

	// Wrong password from the file.
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAlice, "not-"+alice)
	expect("wrong password in the file", runReal(t, nil, append([]string{"--command-config", cfg}, show...)...),
		"authentication failed", `"alice"`, "SCRAM-SHA-512", b.sasl[0], "sasl.jaas.config in "+cfg)
	// A stale $KQL_SASL_PASSWORD beats the file's right password: said so.
	good := b.saslProps(t, "SCRAM-SHA-256", kafkatest.UserAlice, alice)
	r := runReal(t, map[string]string{"KQL_SASL_PASSWORD": "stale"}, append([]string{"--command-config", good}, show...)...)
	expect("stale KQL_SASL_PASSWORD", r, "authentication failed", "SCRAM-SHA-256", "$KQL_SASL_PASSWORD", "takes precedence over sasl.jaas.config in "+good)
	// PLAIN, from flags.
	r = runReal(t, map[string]string{"KQL_SASL_PASSWORD": "wrong"}, append([]string{"-b", strings.Join(b.sasl, ","), "--tls-ca", b.sec.CAFile,
		"--sasl-mechanism", "PLAIN", "--sasl-user", kafkatest.UserBob}, show...)...)
	expect("wrong PLAIN password", r, "authentication failed", `"bob"`, "PLAIN", "$KQL_SASL_PASSWORD")

	// The wrong CA: names the CA file, the issuer, the expected name.
	r = runReal(t, map[string]string{"KQL_SASL_PASSWORD": alice}, append([]string{"-b", strings.Join(b.sasl, ","), "--tls-ca", b.sec.OtherCAFile,
		"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", kafkatest.UserAlice}, show...)...)
	expect("wrong CA", r, "could not be verified", b.sec.OtherCAFile, b.sec.CAName, "127.0.0.1")
	// The wrong CA from a file's truststore.
	wrongTrust := b.props(t, "wrong-trust.properties", fmt.Sprintf("bootstrap.servers=%s\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=%s\nssl.keystore.type=PEM\nssl.keystore.location=%s\n",
		b.ssl[0], b.sec.OtherCAFile, b.sec.ClientKeystoreFile))
	expect("wrong CA in the file", runReal(t, nil, append([]string{"--command-config", wrongTrust}, show...)...),
		"could not be verified", "ssl.truststore.location "+b.sec.OtherCAFile, b.sec.CAName)
	// The wrong name.
	r = runReal(t, nil, append([]string{"-b", b.ssl[0], "--tls-ca", b.sec.CAFile, "--tls-server-name", "kafka.example.com",
		"--tls-cert", b.sec.ClientCertFile, "--tls-key", b.sec.ClientKeyFile}, show...)...)
	expect("wrong name", r, "could not be verified", "kafka.example.com", "localhost, 127.0.0.1")

	// mTLS without a client certificate, and with one the broker does not trust.
	r = runReal(t, nil, append([]string{"-b", strings.Join(b.ssl, ","), "--tls-ca", b.sec.CAFile}, show...)...)
	expect("mTLS without a client certificate", r, "requires a client certificate", "--tls-cert")
	r = runReal(t, nil, append([]string{"-b", strings.Join(b.ssl, ","), "--tls-ca", b.sec.CAFile,
		"--tls-cert", b.sec.UntrustedCertFile, "--tls-key", b.sec.UntrustedKeyFile}, show...)...)
	expect("untrusted client certificate", r, "rejected kql's client certificate", b.sec.UntrustedCertFile, b.sec.OtherCAName)

	// TLS to a PLAINTEXT port.
	r = runReal(t, nil, append([]string{"-b", b.r.Bootstrap()[0], "--tls-ca", b.sec.CAFile}, show...)...)
	expect("TLS to a plaintext listener", r, "does not speak TLS")
}

// TestRealSecureInsecureSkipVerify: it connects to a broker signed by a CA
// kql was not given, and says so every session, on stderr, even with -q;
// it never silently replaces a CA kql was given.
func TestRealSecureInsecureSkipVerify(t *testing.T) {
	b := secureCluster(t)
	alice := b.sec.Users[kafkatest.UserAlice]
	env := map[string]string{"KQL_SASL_PASSWORD": alice}
	args := []string{"-b", strings.Join(b.sasl, ","), "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", kafkatest.UserAlice, "--tls-insecure-skip-verify", "-q", "-e", "SHOW BROKERS"}
	for i := range 2 {
		r := runReal(t, env, args...)
		if r.code != 0 || !strings.Contains(r.stderr, "warning: --tls-insecure-skip-verify: broker certificates are NOT verified") {
			t.Errorf("session %d: want exit 0 and the warning:\n%s", i+1, r)
		}
	}
	r := runReal(t, env, "-b", b.sasl[0], "--tls-ca", b.sec.OtherCAFile, "--tls-insecure-skip-verify", "-e", "SHOW BROKERS")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--tls-ca "+b.sec.OtherCAFile) {
		t.Errorf("--tls-ca with --tls-insecure-skip-verify: want exit 2 naming both:\n%s", r)
	}
	// A CA from the file is named as unused.
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAlice, alice)
	r = runReal(t, nil, "--command-config", cfg, "--tls-insecure-skip-verify", "-e", "SHOW BROKERS")
	if r.code != 0 || !strings.Contains(r.stderr, "the CAs of ssl.truststore.location "+b.sec.CAFile+" are not used") {
		t.Errorf("a file's CA with --tls-insecure-skip-verify: want exit 0 and a warning naming the unused CA:\n%s", r)
	}
}

// TestRealSecureWrongProtocol: plaintext to a TLS listener, no SASL to a
// SASL listener: one line saying what the listener expects.
func TestRealSecureWrongProtocol(t *testing.T) {
	b := secureCluster(t)
	r := runReal(t, nil, "-b", b.sasl[0], "-e", "SHOW TOPICS")
	if r.code != exitUnreachable || !strings.Contains(oneErrorLine(t, r), "expects TLS") {
		t.Errorf("plaintext to SASL_SSL: want exit 3 saying the listener expects TLS:\n%s", r)
	}
	r = runReal(t, nil, "-b", b.sasl[0], "--tls-ca", b.sec.CAFile, "-e", "SHOW TOPICS")
	if r.code != exitUnreachable || !strings.Contains(oneErrorLine(t, r), "expects SASL") {
		t.Errorf("TLS without SASL to SASL_SSL: want exit 3 saying the listener expects SASL:\n%s", r)
	}
}

// TestRealSecureACLs: bob may describe and read one topic and one group.
// What he may see is listed exactly; each denial names the resource and
// the principal, and exits 1.
func TestRealSecureACLs(t *testing.T) {
	b := secureCluster(t)
	base := kafkatest.TopicName(t)
	mine, forbidden, newTopic := base+"-mine", base+"-forbidden", base+"-new"
	groupBase := kafkatest.GroupName(t)
	myGroup, otherGroup := groupBase+"-mine", groupBase+"-other"
	b.createTopic(t, mine, 3)
	b.createTopic(t, forbidden, 3)
	bob := kafkatest.Principal(kafkatest.UserBob)
	b.allow(t, bob, mine, "", kadm.OpDescribe, kadm.OpRead)
	b.allow(t, bob, "", myGroup, kadm.OpDescribe, kadm.OpRead)
	// Both groups exist, with offsets committed by the super user.
	adm := b.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, g := range []string{myGroup, otherGroup} {
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: mine, Partition: 0, At: 0})
		if _, err := adm.CommitOffsets(ctx, g, offs); err != nil {
			t.Fatal(err)
		}
	}
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserBob, b.sec.Users[kafkatest.UserBob])
	kql := func(stmt string) realRun {
		return runReal(t, nil, "--command-config", cfg, "--format", "csv", "-e", stmt)
	}

	r := kql("SHOW TOPICS LIKE '" + base + "*'")
	if r.code != 0 || !strings.Contains(r.stdout, mine+",") || strings.Contains(r.stdout, forbidden) {
		t.Errorf("SHOW TOPICS: want exactly %s listed:\n%s", mine, r)
	}
	r = kql("SHOW GROUPS LIKE '" + groupBase + "*'")
	if r.code != 0 || !strings.Contains(r.stdout, myGroup+",") || strings.Contains(r.stdout, otherGroup) || strings.Contains(r.stderr, "partial") {
		t.Errorf("SHOW GROUPS: want exactly %s listed, exit 0, not partial:\n%s", myGroup, r)
	}
	denied := func(stmt, resource string, more ...string) {
		t.Helper()
		r := kql(stmt)
		if r.code != exitFailed {
			t.Errorf("%s: want exit 1:\n%s", stmt, r)
		}
		t.Logf("%s:\n%s", stmt, r.stderr)
		wantAll(t, stmt, r.stderr, append([]string{"not authorized", resource, "User:bob"}, more...)...)
		b.noSecret(t, stmt, r.stdout+r.stderr)
		if len(r.stderr) > 600 {
			t.Errorf("%s: a %d-character error is not one an operator reads:\n%s", stmt, len(r.stderr), r.stderr)
		}
	}
	denied("DESCRIBE TOPIC "+forbidden, forbidden)
	denied("CONSUME "+forbidden+" LIMIT 1", forbidden)
	denied("PRODUCE INTO "+forbidden+" VALUE 'x'", forbidden)
	denied("CREATE TOPIC "+newTopic+" PARTITIONS 1", newTopic)
	denied("DROP TOPIC "+forbidden, forbidden)
	denied("DESCRIBE GROUP "+otherGroup, otherGroup)
	// Read but no Write: the missing permission is named.
	denied("PRODUCE INTO "+mine+" VALUE 'x'", mine, "WRITE", "IDEMPOTENT_WRITE")

	r = kql("SHOW CLUSTER")
	for _, line := range strings.Split(r.stdout, "\n") {
		if len(line) > 160 {
			t.Errorf("SHOW CLUSTER: a %d-character row:\n%s", len(line), line)
		}
	}
}

// TestRealSecurePTYBannerAndNoPasswordAnywhere runs the interactive shell
// on a terminal over SASL_SSL: the banner says how kql is connected, and
// the password shows up nowhere a person or another user could see it: the
// process list, the terminal (banner, \trace, EXPLAIN, errors), the history.
func TestRealSecurePTYBannerAndNoPasswordAnywhere(t *testing.T) {
	b := secureCluster(t)
	topic := kafkatest.TopicName(t)
	b.createTopic(t, topic, 3)
	pw := b.sec.Users[kafkatest.UserAdmin]
	for _, tc := range []struct {
		name, source string
		env          map[string]string
		args         []string
	}{
		{"file", "sasl.jaas.config in ", nil, []string{"--command-config", b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAdmin, pw)}},
		{"env", `\$KQL_SASL_PASSWORD`, map[string]string{"KQL_SASL_PASSWORD": pw},
			[]string{"-b", strings.Join(b.sasl, ","), "--tls-ca", b.sec.CAFile, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", kafkatest.UserAdmin}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hist := filepath.Join(t.TempDir(), "history")
			s := startPTY(t, tc.env, append(tc.args, "--history-file", hist)...)
			s.expect(`connected to cluster \S+ \(3 brokers\)`)
			s.expect(`connection: SASL_SSL, as admin \(SCRAM-SHA-(512|256), password from ` + tc.source)
			s.expect(`kql> `)

			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			b.noSecret(t, "/proc/PID/cmdline", string(cmdline))
			if ps, err := osexecCommand("ps", "-eo", "pid,args"); err == nil {
				b.noSecret(t, "ps -eo pid,args", ps)
			} else {
				t.Logf("ps is not installed (%v); /proc/PID/cmdline was checked", err)
			}

			s.send(`\trace on` + "\r")
			s.expect(`kql> `)
			s.send("SHOW TOPICS LIKE '" + topic + "';\r")
			s.expect(`\(1 row\)`)
			s.expect(`kql> `)
			s.send("EXPLAIN DESCRIBE TOPIC " + topic + ";\r")
			s.expect(`ListOffsets`)
			s.expect(`kql> `)
			s.send("DESCRIBE TOPIC " + topic + "-missing;\r")
			s.expect(`no topic named`)
			s.expect(`kql> `)
			s.send(`\q` + "\r")
			if err := s.wait(); err != nil {
				t.Fatalf("kql exited with %v", err)
			}
			b.noSecret(t, "the terminal", s.text())
			h, err := os.ReadFile(hist)
			if err != nil || !strings.Contains(string(h), "EXPLAIN DESCRIBE TOPIC") {
				t.Fatalf("the history file was not written (%v):\n%s", err, h)
			}
			b.noSecret(t, "the history file", string(h))
		})
	}
}

func osexecCommand(name string, args ...string) (string, error) {
	out, err := osexec.Command(name, args...).Output()
	return string(out), err
}
