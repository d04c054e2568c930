package kafkatest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

func tlsTo(t *testing.T, caFile string, certFile, keyFile string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc
}

// metadata sends one Metadata request (topics nil: all) to the first seed.
func metadata(ctx context.Context, seeds []string, topics []string, opts ...kgo.Opt) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DialTimeout(5 * time.Second), kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// TestSecureListeners proves the secure test bed is what the kql tests
// assume: SASL_SSL answers each mechanism with the generated users and CA,
// rejects a wrong password, the SSL listener wants a client certificate and
// maps its CN to the principal, the authorizer filters by ACL, and the last
// node advertises an unreachable address on BADADV.
func TestSecureListeners(t *testing.T) {
	r := kafkatest.Shared(t)
	sec := r.Security()
	if sec == nil {
		t.Fatal("the shared cluster is not secure")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	saslAddrs := r.ListenerAddrs(kafkatest.ListenerSASLSSL)
	alicePW := sec.Users[kafkatest.UserAlice]

	for name, m := range map[string]sasl.Mechanism{
		"PLAIN":         plain.Auth{User: kafkatest.UserAlice, Pass: alicePW}.AsMechanism(),
		"SCRAM-SHA-256": scram.Auth{User: kafkatest.UserAlice, Pass: alicePW}.AsSha256Mechanism(),
		"SCRAM-SHA-512": scram.Auth{User: kafkatest.UserAlice, Pass: alicePW}.AsSha512Mechanism(),
	} {
		resp, err := metadata(ctx, saslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, "", "")), kgo.SASL(m))
		if err != nil {
			t.Fatalf("SASL_SSL %s as alice: %v", name, err)
		}
		var got []string
		for _, b := range resp.Brokers {
			got = append(got, b.Host+":"+itoa(b.Port))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(saslAddrs))
		if !slices.Equal(got, want) {
			t.Errorf("SASL_SSL %s: brokers advertised %v, want the SASL_SSL addresses %v", name, got, want)
		}
	}
	_, err := metadata(ctx, saslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, "", "")),
		kgo.SASL(scram.Auth{User: kafkatest.UserAlice, Pass: "wrong"}.AsSha512Mechanism()))
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("a wrong password: got %v, want SASL_AUTHENTICATION_FAILED", err)
	}

	sslAddrs := r.ListenerAddrs(kafkatest.ListenerSSL)
	if _, err := metadata(ctx, sslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, sec.ClientCertFile, sec.ClientKeyFile))); err != nil {
		t.Errorf("SSL with the client certificate: %v", err)
	}
	if _, err := metadata(ctx, sslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, "", ""))); err == nil {
		t.Errorf("SSL without a client certificate was accepted; the listener must require one")
	}

	// ACLs: alice may describe one topic; mtls-client another. Each sees
	// exactly its own.
	adm, closeAdm, err := r.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAdm()
	mine, other := kafkatest.TopicName(t)+"-alice", kafkatest.TopicName(t)+"-mtls"
	if _, err := adm.CreateTopics(ctx, 1, 3, nil, mine, other); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{mine, other} {
		if err := r.AwaitTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	acl := func(principal, topic string) {
		b := kadm.NewACLs().Allow(principal).Topics(topic).Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
		res, err := adm.CreateACLs(ctx, b)
		if err == nil {
			for _, x := range res {
				err = errors.Join(err, x.Err)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WaitACLs(ctx, principal, 1); err != nil {
			t.Fatal(err)
		}
	}
	acl(kafkatest.Principal(kafkatest.UserAlice), mine)
	acl(kafkatest.Principal(kafkatest.MTLSClient), other)
	visible := func(resp *kmsg.MetadataResponse) []string {
		var out []string
		for _, tp := range resp.Topics {
			if tp.ErrorCode == 0 && tp.Topic != nil && (*tp.Topic == mine || *tp.Topic == other) {
				out = append(out, *tp.Topic)
			}
		}
		return out
	}
	resp, err := metadata(ctx, saslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, "", "")),
		kgo.SASL(scram.Auth{User: kafkatest.UserAlice, Pass: alicePW}.AsSha512Mechanism()))
	if err != nil || !slices.Equal(visible(resp), []string{mine}) {
		t.Errorf("alice sees %v (%v), want only %s", visible(resp), err, mine)
	}
	resp, err = metadata(ctx, sslAddrs[:1], nil, kgo.DialTLSConfig(tlsTo(t, sec.CAFile, sec.ClientCertFile, sec.ClientKeyFile)))
	if err != nil || !slices.Equal(visible(resp), []string{other}) {
		t.Errorf("mtls-client sees %v (%v), want only %s (its principal is its certificate's CN)", visible(resp), err, other)
	}

	bad := r.ListenerAddrs(kafkatest.ListenerBadAdvertised)
	resp, err = metadata(ctx, bad[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	last := r.Brokers()[len(r.Brokers())-1].ID
	for _, b := range resp.Brokers {
		addr := b.Host + ":" + itoa(b.Port)
		if (b.NodeID == last) != (addr == kafkatest.UnreachableAddr) {
			t.Errorf("BADADV: broker %d advertises %s; want only broker %d at %s", b.NodeID, addr, last, kafkatest.UnreachableAddr)
		}
	}
}

func itoa(n int32) string {
	return strconv.Itoa(int(n))
}
