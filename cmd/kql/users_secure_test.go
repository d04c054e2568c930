package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// These tests run kql as the super user admin over SASL_SSL on the shared
// secure cluster, and check what it did with a bare franz-go client (a user
// created by kql logs in with its password) and with Kafka's own
// ConfigCommand (the tool behind kafka-configs.sh), which must print the
// same users and quotas.

func randomPassword(t *testing.T, prefix string) string {
	t.Helper()
	var b [9]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + "-" + hex.EncodeToString(b[:])
}

// login authenticates as user over SASL_SSL on every broker (a credential
// reaches each broker through the metadata log, so each is asked) and
// returns the first failure.
func (b *secureBed) login(t *testing.T, mech sasl.Mechanism) error {
	t.Helper()
	pem, err := os.ReadFile(b.sec.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, addr := range b.sasl {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
			kgo.SASL(mech), kgo.RequestRetries(0), kgo.DialTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrMetadataRequest())
		cl.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// eventually retries check for a bounded time: a changed password reaches
// the brokers a moment after AlterUserScramCredentials returns.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 20s", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mechanismsOf(user, pw string) map[string]sasl.Mechanism {
	a := scram.Auth{User: user, Pass: pw}
	return map[string]sasl.Mechanism{"SCRAM-SHA-256": a.AsSha256Mechanism(), "SCRAM-SHA-512": a.AsSha512Mechanism()}
}

func loginRefused(err error) error {
	if err == nil {
		return errors.New("the login succeeded")
	}
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		return err
	}
	return nil
}

// configCommand runs Kafka's ConfigCommand against the PLAINTEXT listener
// (its principal is a super user).
func (b *secureBed) configCommand(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := b.r.RunTool(ctx, "kafka.admin.ConfigCommand", append([]string{"--bootstrap-server", b.r.Bootstrap()[0]}, args...)...)
	if err != nil {
		t.Fatalf("ConfigCommand %v: %v", args, err)
	}
	return out
}

var scramLine = regexp.MustCompile(`(?m)^SCRAM credential configs for user-principal '([^']*)' are (.*)$`)
var quotaLine = regexp.MustCompile(`(?m)^Quota configs for (.*) are (.*)$`)

// toolUsers parses ConfigCommand's SCRAM lines into user,mechanism,iterations.
func toolUsers(out string) []string {
	var rows []string
	for _, m := range scramLine.FindAllStringSubmatch(out, -1) {
		for _, cred := range strings.Split(m[2], ", ") {
			mech, iters, _ := strings.Cut(cred, "=iterations=")
			rows = append(rows, m[1]+","+mech+","+iters)
		}
	}
	slices.Sort(rows)
	return rows
}

// toolQuotas parses ConfigCommand's quota line for one entity into key -> value.
func toolQuotas(t *testing.T, out, entity string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, m := range quotaLine.FindAllStringSubmatch(out, -1) {
		if m[1] != entity {
			continue
		}
		for _, kv := range strings.Split(m[2], ", ") {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("ConfigCommand printed %q", m[0])
			}
			got[k] = f
		}
	}
	return got
}

// csvRows are the data rows of kql's --format csv output, header lines
// (those starting with header) left out.
func csvRows(out, header string) []string {
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, header) {
			rows = append(rows, l)
		}
	}
	slices.Sort(rows)
	return rows
}

func TestRealSecureUsers(t *testing.T) {
	b := secureCluster(t)
	user := strings.ToLower(kafkatest.TopicName(t))
	pw1, pw2 := randomPassword(t, "first"), randomPassword(t, "second")
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAdmin, b.sec.Users[kafkatest.UserAdmin])
	kql := func(pw string, stmts ...string) realRun {
		t.Helper()
		r := runReal(t, map[string]string{"KQL_NEW_PASSWORD": pw}, "--command-config", cfg, "--format", "csv", "-e", strings.Join(stmts, ";\n"))
		for _, secret := range []string{pw1, pw2} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("kql shows a new password:\n%s", r)
			}
		}
		b.noSecret(t, "kql", r.stdout+r.stderr)
		return r
	}

	r := kql(pw1, "CREATE USER "+user+" MECHANISM SCRAM-SHA-256", "CREATE USER "+user+" ITERATIONS 8192")
	if r.code != 0 {
		t.Fatalf("CREATE USER as admin:\n%s", r)
	}
	wantAll(t, "CREATE USER", r.stdout, user+",SCRAM-SHA-256,4096,created", user+",SCRAM-SHA-512,8192,created")
	// CREATE waits until every broker has the credential: the first login works.
	for name, m := range mechanismsOf(user, pw1) {
		if err := b.login(t, m); err != nil {
			t.Errorf("%s login as the user kql created: %v", name, err)
		}
	}
	for name, m := range mechanismsOf(user, "not-"+pw1) {
		if err := loginRefused(b.login(t, m)); err != nil {
			t.Errorf("%s login with a wrong password: %v", name, err)
		}
	}

	// SHOW USERS lists what ConfigCommand lists, every user of the cluster.
	r = kql("", "SHOW USERS")
	if r.code != 0 {
		t.Fatalf("SHOW USERS:\n%s", r)
	}
	shown := csvRows(r.stdout, "user,mechanism,iterations")
	tool := toolUsers(b.configCommand(t, "--describe", "--entity-type", "users"))
	if !slices.Equal(shown, tool) || !slices.Contains(shown, user+",SCRAM-SHA-512,8192") || !slices.Contains(shown, "alice,SCRAM-SHA-256,4096") {
		t.Errorf("SHOW USERS differs from ConfigCommand --describe --entity-type users:\nkql:  %v\ntool: %v", shown, tool)
	}

	// ALTER USER PASSWORD: the new password works on both mechanisms, the old one no longer.
	r = kql(pw2, "ALTER USER "+user+" PASSWORD")
	if r.code != 0 {
		t.Fatalf("ALTER USER PASSWORD:\n%s", r)
	}
	wantAll(t, "ALTER USER", r.stdout, user+",SCRAM-SHA-256,4096,password changed", user+",SCRAM-SHA-512,8192,password changed")
	for name, m := range mechanismsOf(user, pw2) {
		eventually(t, name+" login with the new password", func() error { return b.login(t, m) })
	}
	for name, m := range mechanismsOf(user, pw1) {
		eventually(t, name+" login with the old password is refused", func() error { return loginRefused(b.login(t, m)) })
	}

	// A user without the right is refused, and told who kql is and what is needed.
	aliceCfg := b.saslProps(t, "SCRAM-SHA-256", kafkatest.UserAlice, b.sec.Users[kafkatest.UserAlice])
	for _, stmt := range []string{"SHOW USERS", "DROP USER " + user, "CREATE USER " + user + "x"} {
		r = runReal(t, map[string]string{"KQL_NEW_PASSWORD": pw1}, "--command-config", aliceCfg, "-e", stmt)
		if r.code != exitFailed {
			t.Errorf("%s as alice: want exit 1:\n%s", stmt, r)
		}
		wantAll(t, stmt+" as alice", r.stderr, "CLUSTER_AUTHORIZATION_FAILED", "DescribeUserScramCredentials needs DESCRIBE on the CLUSTER",
			"kql is authenticated as User:alice (SASL SCRAM-SHA-256)")
		b.noSecret(t, stmt, r.stdout+r.stderr)
	}

	// DROP USER: neither mechanism logs in any more; ConfigCommand no longer lists it.
	r = kql("", "DROP USER "+user)
	if r.code != 0 {
		t.Fatalf("DROP USER:\n%s", r)
	}
	wantAll(t, "DROP USER", r.stdout, user+",SCRAM-SHA-256,4096,dropped", user+",SCRAM-SHA-512,8192,dropped")
	for name, m := range mechanismsOf(user, pw2) {
		if err := loginRefused(b.login(t, m)); err != nil {
			t.Errorf("%s login as a dropped user: %v", name, err)
		}
	}
	if strings.Contains(b.configCommand(t, "--describe", "--entity-type", "users"), "'"+user+"'") {
		t.Errorf("ConfigCommand still lists the dropped user %s", user)
	}
	r = kql("", "DROP USER "+user)
	if r.code != exitFailed || !strings.Contains(r.stderr, `there is no user "`+user+`"`) {
		t.Errorf("DROP USER of a user that is gone:\n%s", r)
	}
}

func TestRealSecureQuotas(t *testing.T) {
	b := secureCluster(t)
	user := strings.ToLower(kafkatest.TopicName(t))
	cfg := b.saslProps(t, "SCRAM-SHA-512", kafkatest.UserAdmin, b.sec.Users[kafkatest.UserAdmin])
	kql := func(stmts ...string) realRun {
		t.Helper()
		return runReal(t, nil, "--command-config", cfg, "--format", "csv", "-e", strings.Join(stmts, ";\n"))
	}
	r := kql("ALTER QUOTA FOR USER "+user+" SET (producer_byte_rate = 1048576, request_percentage = 12.5)",
		"ALTER QUOTA FOR USER "+user+" CLIENT reports SET (consumer_byte_rate = 2048, controller_mutation_rate = 5.5)",
		"SHOW QUOTAS FOR USER "+user)
	if r.code != 0 {
		t.Fatalf("ALTER QUOTA as admin:\n%s", r)
	}
	t.Cleanup(func() {
		kql("ALTER QUOTA FOR USER "+user+" UNSET (producer_byte_rate, request_percentage)",
			"ALTER QUOTA FOR USER "+user+" CLIENT reports UNSET (consumer_byte_rate, controller_mutation_rate)")
	})
	wantAll(t, "SHOW QUOTAS", r.stdout, user+",,,producer_byte_rate,1048576", user+",,,request_percentage,12.5",
		user+",reports,,consumer_byte_rate,2048", user+",reports,,controller_mutation_rate,5.5")

	// What DescribeClientQuotas returns, asked with franz-go's admin client.
	adm := b.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	described, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &user}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, q := range described {
		name := ""
		for _, e := range q.Entity {
			if e.Type == "client-id" {
				name = *e.Name
			}
		}
		got[name] = map[string]float64{}
		for _, v := range q.Values {
			got[name][v.Key] = v.Value
		}
	}
	want := map[string]map[string]float64{
		"":        {"producer_byte_rate": 1048576, "request_percentage": 12.5},
		"reports": {"consumer_byte_rate": 2048, "controller_mutation_rate": 5.5},
	}
	if !equalQuotas(got, want) {
		t.Errorf("DescribeClientQuotas returns %v, want what kql set: %v", got, want)
	}

	// What ConfigCommand prints for the same entities.
	userOut := b.configCommand(t, "--describe", "--entity-type", "users", "--entity-name", user)
	if q := toolQuotas(t, userOut, "user-principal '"+user+"'"); !equalQuotas(map[string]map[string]float64{"": q}, map[string]map[string]float64{"": want[""]}) {
		t.Errorf("ConfigCommand --describe --entity-type users --entity-name %s prints %v, want %v:\n%s", user, q, want[""], userOut)
	}
	clientOut := b.configCommand(t, "--describe", "--entity-type", "users", "--entity-name", user, "--entity-type", "clients", "--entity-name", "reports")
	if q := toolQuotas(t, clientOut, "user-principal '"+user+"', client-id 'reports'"); !equalQuotas(map[string]map[string]float64{"": q}, map[string]map[string]float64{"": want["reports"]}) {
		t.Errorf("ConfigCommand for user %s client reports prints %v, want %v:\n%s", user, q, want["reports"], clientOut)
	}

	// UNSET: gone for kql and for the tool.
	r = kql("ALTER QUOTA FOR USER "+user+" UNSET (request_percentage)", "SHOW QUOTAS FOR USER "+user)
	if r.code != 0 || strings.Contains(r.stdout, user+",,,request_percentage,12.5\n") {
		t.Errorf("UNSET request_percentage:\n%s", r)
	}
	if q := toolQuotas(t, b.configCommand(t, "--describe", "--entity-type", "users", "--entity-name", user), "user-principal '"+user+"'"); len(q) != 1 || q["producer_byte_rate"] != 1048576 {
		t.Errorf("after UNSET ConfigCommand prints %v, want only producer_byte_rate", q)
	}

	// Without DESCRIBE_CONFIGS on the cluster: refused, naming who and what.
	aliceCfg := b.saslProps(t, "SCRAM-SHA-256", kafkatest.UserAlice, b.sec.Users[kafkatest.UserAlice])
	r = runReal(t, nil, "--command-config", aliceCfg, "-e", "SHOW QUOTAS")
	if r.code != exitFailed {
		t.Errorf("SHOW QUOTAS as alice: want exit 1:\n%s", r)
	}
	wantAll(t, "SHOW QUOTAS as alice", r.stderr, "CLUSTER_AUTHORIZATION_FAILED", "DescribeClientQuotas needs DESCRIBE_CONFIGS on the CLUSTER",
		"kql is authenticated as User:alice (SASL SCRAM-SHA-256)")
}

func equalQuotas(a, b map[string]map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || len(av) != len(bv) {
			return false
		}
		for kk, v := range av {
			if w, ok := bv[kk]; !ok || w != v {
				return false
			}
		}
	}
	return true
}
