package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestRealOAuthBearer runs kql with OAUTHBEARER (client credentials from a
// Kafka client.properties) against a real 3-broker Kafka whose OAUTH
// listener validates tokens by mock-oauth2-server's JWKS, with tokens valid
// for 12 s and re-authentication every 10 s: statements work, a FOLLOW
// keeps every record across two token renewals, and a wrong secret, an
// unreachable token endpoint and a refused token each say which they are.
func TestRealOAuthBearer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	began := time.Now()
	c, err := kafkatest.StartOAuthCluster(ctx, kafkatest.OAuthClusterConfig{
		Server: kafkatest.OAuthServerConfig{TokenLifetime: 12 * time.Second},
		Reauth: 10 * time.Second,
		Log:    os.Stderr, // start-up lines, as the shared cluster prints them
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := c.Server
	secret := srv.Secret(kafkatest.OAuthClientID)
	dir := t.TempDir()
	props := func(name, tokenURL, clientSecret, scope string, kafka43 bool) string {
		creds := fmt.Sprintf("sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\\n  clientId=%q clientSecret=%q scope=%q;\n",
			kafkatest.OAuthClientID, clientSecret, scope)
		if kafka43 {
			creds = fmt.Sprintf("sasl.oauthbearer.client.credentials.client.id=%s\nsasl.oauthbearer.client.credentials.client.secret=%s\nsasl.oauthbearer.scope=%s\n"+
				"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n", kafkatest.OAuthClientID, clientSecret, scope)
		}
		text := "bootstrap.servers=" + strings.Join(c.OAuthAddrs(), ",") + "\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n" +
			"sasl.oauthbearer.token.endpoint.url=" + tokenURL + "\n" + creds
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := props("good.properties", srv.TokenURL(), secret, kafkatest.OAuthScope, false)
	adm, closeAdm, err := c.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAdm()
	topic := kafkatest.TopicName(t)
	if _, err := adm.CreateTopics(ctx, 3, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitTopic(ctx, topic, 3); err != nil {
		t.Fatal(err)
	}

	t.Run("statements", func(t *testing.T) {
		for _, p := range []string{good, props("kafka43.properties", srv.TokenURL(), secret, kafkatest.OAuthScope, true)} {
			res := runReal(t, nil, "--command-config", p, "--format", "csv", "-e",
				"SHOW TOPICS; PRODUCE INTO "+topic+" KEY 'k' VALUE 'via-oauth'; CONSUME "+topic+" FROM OLDEST LIMIT 1")
			if res.code != 0 || !strings.Contains(res.stdout, topic) || !strings.Contains(res.stdout, "via-oauth") {
				t.Fatalf("%s: SHOW TOPICS, PRODUCE, CONSUME over OAUTHBEARER:\n%s", filepath.Base(p), res)
			}
		}
	})

	t.Run("wrong secret", func(t *testing.T) {
		before := srv.Rejected()
		res := runReal(t, nil, "--command-config", props("wrong.properties", srv.TokenURL(), "not-the-secret-42", kafkatest.OAuthScope, false), "-e", "SHOW TOPICS")
		want := fmt.Sprintf("kql: the OAuth token endpoint %s rejected client id %q (HTTP 401: invalid_client client authentication failed): wrong client secret or client id; the secret came from sasl.jaas.config in ", srv.TokenURL(), kafkatest.OAuthClientID)
		if res.code != exitUnreachable || !strings.Contains(res.stderr, want) || srv.Rejected() != before+1 {
			t.Errorf("want exit 3, one refused token request and %q\n%s", want, res)
		}
		if strings.Contains(res.stdout+res.stderr, "not-the-secret-42") {
			t.Errorf("the secret was shown:\n%s", res)
		}
	})

	t.Run("unreachable endpoint", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String() + "/default/token"
		l.Close()
		res := runReal(t, nil, "--command-config", props("unreachable.properties", url, secret, kafkatest.OAuthScope, false), "-e", "SHOW TOPICS")
		want := "kql: cannot reach the OAuth token endpoint " + url + " (sasl.oauthbearer.token.endpoint.url): dial " + l.Addr().String() + ": connect: connection refused"
		if res.code != exitUnreachable || !strings.Contains(res.stderr, want) {
			t.Errorf("want exit 3 and %q\n%s", want, res)
		}
	})

	t.Run("refused token", func(t *testing.T) {
		// Another scope gets a token for another audience: the brokers'
		// validator refuses it, and says so only in their log.
		res := runReal(t, nil, "--command-config", props("audience.properties", srv.TokenURL(), secret, "other", false), "-e", "SHOW TOPICS")
		for _, want := range []string{
			"the broker refused kql's OAuth token (invalid_token; the broker's log has the reason)",
			"the token has aud [" + kafkatest.OAuthOtherAudience + "], which must be in the broker's sasl.oauthbearer.expected.audience",
			`iss "` + srv.Issuer() + `"`, `sub "` + kafkatest.OAuthClientID + `"`,
		} {
			if res.code != exitUnreachable || !strings.Contains(res.stderr, want) {
				t.Errorf("want exit 3 and %q\n%s", want, res)
			}
		}
		t.Logf("kql said: %s", strings.TrimSpace(res.stderr))
		// kql points at the broker's log: the reason must be there. Read
		// again for a while: the broker's logger may write it after its
		// answer reached kql.
		var reason string
		for deadline := time.Now().Add(30 * time.Second); reason == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			for _, b := range c.Brokers() {
				for _, line := range strings.Split(c.LogTail(b.ID, 5000), "\n") {
					if strings.Contains(line, kafkatest.OAuthOtherAudience) && !strings.Contains(line, " = ") { // not the config dump
						reason = line
					}
				}
			}
		}
		if reason == "" {
			t.Errorf("no broker's log names the token's audience %q, the reason kql points at", kafkatest.OAuthOtherAudience)
		} else {
			t.Logf("the broker's log: %s", strings.TrimSpace(reason))
		}
	})

	t.Run("follow across renewals", func(t *testing.T) {
		followAcrossRenewals(t, ctx, c, good, topic)
	})
	t.Logf("TestRealOAuthBearer: %s in all, the OAuth provider and 3 brokers included", time.Since(began).Round(100*time.Millisecond))
}

// followAcrossRenewals: FOLLOW runs while the proxy counts at least two
// token renewals (each fetched by a re-authentication the brokers asked
// for), then records are produced and FOLLOW shows each exactly once.
func followAcrossRenewals(t *testing.T, ctx context.Context, c *kafkatest.OAuthCluster, propsFile, topic string) {
	srv := c.Server
	out := &syncBuffer{}
	var errb syncBuffer
	kctx, stopKQL := context.WithCancel(ctx)
	done := make(chan int, 1)
	ended := false
	defer func() {
		if !ended { // a failed test stops its FOLLOW before the brokers go
			stopKQL()
			<-done
		}
	}()
	go func() {
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errb, Getenv: func(string) string { return "" }}
		done <- run(kctx, ios, []string{"--command-config", propsFile, "--format", "csv", "-e", "CONSUME " + topic + " FROM NEWEST FOLLOW"}, realWorld())
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(prefix string, n int) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%04d", prefix, i))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, bound time.Duration, ok func() bool) {
		deadline := time.Now().Add(bound)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s (%d tokens issued)\nstdout:\n%s\nstderr:\n%s", what, bound, srv.TokensIssued(), out.String(), errb.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// FOLLOW is reading once a record produced now shows (FROM NEWEST
	// starts after what was there).
	waitFor("FOLLOW showing its first record", time.Minute, func() bool {
		if strings.Contains(out.String(), "ready-") {
			return true
		}
		produce("ready", 3)
		time.Sleep(time.Second)
		return strings.Contains(out.String(), "ready-")
	})
	start, at := srv.TokensIssued(), time.Now()
	// 12 s tokens renewed at 80%, re-authentication every 10 s: two
	// renewals take about 20 s; the bound only stops a broken run.
	// Records are written all along, so FOLLOW reads across each
	// re-authentication, not only after them.
	total := 0
	produceNext := func(n int) {
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("f-%04d", total))})
			total++
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("two token renewals", 90*time.Second, func() bool {
		produceNext(3)
		return srv.TokensIssued() >= start+2
	})
	t.Logf("%d tokens renewed in %s while FOLLOW ran and %d records were written", srv.TokensIssued()-start, time.Since(at).Round(100*time.Millisecond), total)
	produceNext(300)
	waitFor("every record shown", time.Minute, func() bool { return strings.Count(out.String(), ",f-") >= total })
	time.Sleep(time.Second) // a record shown twice would come now
	stopKQL()
	select {
	case code := <-done:
		ended = true
		if code != 0 && code != exitInterrupted {
			t.Errorf("FOLLOW ended with exit %d\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		ended = true // not waited for again: the failure is this
		t.Fatal("FOLLOW did not end within 30 s of its cancellation")
	}
	rd := csv.NewReader(strings.NewReader(out.String()))
	rd.FieldsPerRecord = -1
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("FOLLOW output is not csv: %v", err)
	}
	seen := map[string]int{}
	for _, row := range rows {
		if len(row) >= 5 && strings.HasPrefix(row[4], "f-") {
			seen[row[4]]++
		}
	}
	for i := range total {
		if n := seen[fmt.Sprintf("f-%04d", i)]; n != 1 {
			t.Errorf("record f-%04d shown %d times, want once", i, n)
		}
	}
	if strings.Contains(errb.String(), "error") {
		t.Errorf("FOLLOW wrote an error across the renewals:\n%s", errb.String())
	}
}
