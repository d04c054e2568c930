package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestRealKerberos runs kql over SASL GSSAPI against a real MIT KDC and a
// real 3-broker Kafka whose GSSAPI listener is advertised as localhost
// (kafkatest.StartKerberos): with a keytab, with kinit's ticket cache, and
// each way a Kerberos login fails, which must be said as such.
func TestRealKerberos(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, err := kafkatest.StartKerberos(ctx, kafkatest.RealConfig{Log: os.Stderr})
	if err != nil {
		t.Fatalf("starting the KDC and the GSSAPI cluster: %v", err)
	}
	defer b.Close()
	t.Logf("KDC and 3 brokers up in %s", time.Since(start).Round(time.Second))
	defer func() { t.Logf("TestRealKerberos took %s", time.Since(start).Round(time.Second)) }()

	topic := kafkatest.TopicName(t)
	adm, closeAdm, err := b.Real.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAdm()
	// Three partitions, one led by each broker: a PRODUCE and CONSUME
	// across them authenticate to every broker over GSSAPI.
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	boot := strings.Join(b.Bootstrap(), ",")
	keytabProps := func(name, bootstrap, keytab, principal string) string {
		return write(name, fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_PLAINTEXT
sasl.mechanism=GSSAPI
sasl.kerberos.service.name=kafka
sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required \
    useKeyTab=true storeKey=true keyTab="%s" principal="%s";
`, bootstrap, keytab, principal))
	}
	env := map[string]string{"KRB5_CONFIG": b.KDC.Krb5Conf}

	t.Run("keytab", func(t *testing.T) {
		p := keytabProps("keytab.properties", boot, b.ClientKeytab, b.Client)
		// SHOW TOPICS last: by then every broker knows the new topic.
		script := fmt.Sprintf(`PRODUCE INTO %[1]s KEY 'a' VALUE 'one' PARTITION 0;
PRODUCE INTO %[1]s KEY 'b' VALUE 'two' PARTITION 1;
PRODUCE INTO %[1]s KEY 'c' VALUE 'three' PARTITION 2;
CONSUME %[1]s FROM EARLIEST LIMIT 3;
SHOW TOPICS LIKE '%[1]s';
`, topic)
		r := runReal(t, env, "--command-config", p, "--format", "csv", "-e", script)
		if r.code != 0 {
			t.Fatalf("want exit 0:\n%s", r)
		}
		if !strings.Contains(r.stdout, topic+",3,3,") {
			t.Errorf("SHOW TOPICS does not list %s with 3 partitions:\n%s", topic, r)
		}
		for _, v := range []string{"one", "two", "three"} {
			if !strings.Contains(r.stdout, v) {
				t.Errorf("CONSUME did not return the record %q:\n%s", v, r)
			}
		}
	})

	t.Run("ticket cache", func(t *testing.T) {
		cache := filepath.Join(dir, "krb5cc")
		if err := b.KDC.Kinit(ctx, b.Client, b.ClientKeytab, cache); err != nil {
			t.Fatal(err)
		}
		p := write("cache.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_PLAINTEXT
sasl.mechanism=GSSAPI
sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;
`, boot))
		cenv := map[string]string{"KRB5_CONFIG": b.KDC.Krb5Conf, "KRB5CCNAME": "FILE:" + cache}
		r := runReal(t, cenv, "--command-config", p, "--format", "csv", "-e", "SHOW TOPICS LIKE '"+topic+"'")
		if r.code != 0 || !strings.Contains(r.stdout, topic+",3,3,") {
			t.Fatalf("want exit 0 and the topic listed:\n%s", r)
		}
		// principal= that is not the cache's: say whose tickets it holds.
		other := write("other.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_PLAINTEXT
sasl.mechanism=GSSAPI
sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true principal="alice@%s";
`, boot, kafkatest.KerberosRealm))
		r = runReal(t, cenv, "--command-config", other, "-e", "SHOW TOPICS")
		if r.code == 0 || !strings.Contains(r.stderr, "holds tickets of "+b.Client+", not of principal=alice@KQL.TEST") {
			t.Errorf("a cache of another principal: want it said:\n%s", r)
		}
		// A ticket that has expired: say to run kinit, not "authentication failed".
		short := filepath.Join(dir, "krb5cc-short")
		if err := b.KDC.Kinit(ctx, b.Client, b.ClientKeytab, short, "-l", "1s"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // past the ticket's end time, whatever the load
		r = runReal(t, map[string]string{"KRB5_CONFIG": b.KDC.Krb5Conf, "KRB5CCNAME": short}, "--command-config", p, "-e", "SHOW TOPICS")
		t.Logf("exit %d: %s", r.code, r.stderr)
		if r.code == 0 || !strings.Contains(r.stderr, "has expired: run kinit again") {
			t.Errorf("an expired ticket cache: want it said, with kinit:\n%s", r)
		}
		// No cache where KRB5CCNAME points: say to run kinit.
		cenv["KRB5CCNAME"] = "FILE:" + filepath.Join(dir, "no-such-cache")
		r = runReal(t, cenv, "--command-config", p, "-e", "SHOW TOPICS")
		if r.code == 0 || !strings.Contains(r.stderr, "no ticket cache at") || !strings.Contains(r.stderr, "kinit") {
			t.Errorf("a missing ticket cache: want an error naming it and kinit:\n%s", r)
		}
	})

	// Each failure: what the user sees must name the cause.
	ghostKeytab := filepath.Join(dir, "ghost.keytab")
	if err := b.KDC.AddPrincipal(ctx, "ghost@"+kafkatest.KerberosRealm, ghostKeytab); err != nil {
		t.Fatal(err)
	}
	if err := b.KDC.Kadmin(ctx, "delprinc -force ghost@"+kafkatest.KerberosRealm); err != nil {
		t.Fatal(err)
	}
	staleKeytab := filepath.Join(dir, "stale.keytab")
	stale := "stale@" + kafkatest.KerberosRealm
	if err := b.KDC.AddPrincipal(ctx, stale, staleKeytab); err != nil {
		t.Fatal(err)
	}
	if err := b.KDC.WriteKeytab(ctx, stale, filepath.Join(dir, "fresh.keytab")); err != nil { // new keys: staleKeytab's are old
		t.Fatal(err)
	}
	noKDC := write("nokdc.krb5.conf", fmt.Sprintf("[libdefaults]\n default_realm = %[1]s\n udp_preference_limit = 1\n[realms]\n %[1]s = {\n  kdc = 127.0.0.1:1\n }\n", kafkatest.KerberosRealm))
	ip := strings.ReplaceAll(boot, "localhost", "127.0.0.1")
	for _, c := range []struct {
		name  string
		props string
		env   map[string]string
		want  []string
	}{
		{"service principal unknown (bootstrap by IP)", keytabProps("ip.properties", ip, b.ClientKeytab, b.Client), env,
			[]string{"no service principal kafka/127.0.0.1", "localhost", "sasl.kerberos.service.name"}},
		{"client principal unknown", keytabProps("ghost.properties", boot, ghostKeytab, "ghost@"+kafkatest.KerberosRealm), env,
			[]string{"does not know the principal ghost@KQL.TEST", ghostKeytab}},
		{"wrong key", keytabProps("stale.properties", boot, staleKeytab, stale), env,
			[]string{"PREAUTH_FAILED", "refused the key of stale@KQL.TEST", staleKeytab}},
		{"KDC unreachable", keytabProps("nokdc.properties", boot, b.ClientKeytab, b.Client), map[string]string{"KRB5_CONFIG": noKDC},
			[]string{"no KDC of the realm answered", "127.0.0.1:1", noKDC}},
		{"missing keytab", keytabProps("missing.properties", boot, filepath.Join(dir, "missing.keytab"), b.Client), env,
			[]string{"the keytab " + filepath.Join(dir, "missing.keytab") + " (keyTab= in sasl.jaas.config) does not exist"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runReal(t, c.env, "--command-config", c.props, "-e", "SHOW TOPICS")
			t.Logf("exit %d: %s", r.code, r.stderr)
			if r.code == 0 {
				t.Fatalf("want a failure:\n%s", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r)
				}
			}
		})
	}

	// Last, as it breaks the bed: the brokers' principal gets new keys, so
	// the KDC's tickets are in a key the brokers' keytab lacks and the
	// brokers refuse the token. That is the broker's refusal, not the KDC's.
	t.Run("broker refuses the token", func(t *testing.T) {
		if err := b.KDC.WriteKeytab(ctx, kafkatest.KerberosServicePrincipal, filepath.Join(dir, "new-kafka.keytab")); err != nil {
			t.Fatal(err)
		}
		r := runReal(t, env, "--command-config", keytabProps("refused.properties", boot, b.ClientKeytab, b.Client), "-e", "SHOW TOPICS")
		t.Logf("exit %d: %s", r.code, r.stderr)
		if r.code == 0 || !strings.Contains(r.stderr, "refused kql's GSSAPI token") {
			t.Errorf("want the broker's refusal said as such:\n%s", r)
		}
	})
}
