package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// oauthKfake is a 3-broker kfake that speaks OAUTHBEARER through its
// control hooks: the handshake offers OAUTHBEARER, an authentication is
// accepted only with a token the test's endpoint issued, and every session
// lasts 1 ms, so kgo re-authenticates (and asks kql's token source) before
// each request, as a broker with a short connections.max.reauth.ms makes it.
func oauthKfake(t *testing.T, issued func(token string) bool) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.ControlKey(kmsg.SASLHandshake.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.SASLHandshakeRequest)
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.Version = req.Version
		resp.SupportedMechanisms = []string{"OAUTHBEARER"}
		if req.Mechanism != "OAUTHBEARER" {
			resp.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
		}
		return resp, nil, true
	})
	c.ControlKey(kmsg.SASLAuthenticate.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.Version = req.Version
		// The client's first message: n,,\x01auth=Bearer <token>\x01\x01
		_, tok, _ := bytes.Cut(req.SASLAuthBytes, []byte("auth=Bearer "))
		tok, _, _ = bytes.Cut(tok, []byte("\x01"))
		if !issued(string(tok)) {
			resp.ErrorCode = 58 // SASL_AUTHENTICATION_FAILED
			msg := "invalid_token"
			resp.ErrorMessage = &msg
			return resp, nil, true
		}
		resp.SessionLifetimeMillis = 1
		return resp, nil, true
	})
	return c
}

// TestOAuthRenewalFailureEndsFollow: a FOLLOW whose token can no longer be
// renewed (the client's secret was revoked at the token endpoint, or the
// endpoint went away) ends with an error that names the token endpoint and
// says the token expired, instead of asking the brokers again every
// second, silent, for ever; and an unreachable token endpoint is not
// called an unreachable broker.
func TestOAuthRenewalFailureEndsFollow(t *testing.T) {
	t.Run("secret revoked", func(t *testing.T) {
		followUntilRenewalFails(t, false, `could not be renewed: the OAuth token endpoint %s rejected client id "kql" (HTTP 401`)
	})
	t.Run("endpoint gone", func(t *testing.T) {
		followUntilRenewalFails(t, true, `could not be renewed: cannot reach the OAuth token endpoint %s (sasl.oauthbearer.token.endpoint.url): dial `)
	})
}

func followUntilRenewalFails(t *testing.T, unreachable bool, want string) {
	var revoked atomic.Bool
	var n atomic.Int64
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, _ := r.BasicAuth(); id != "kql" || secret != "kql-test-secret" || revoked.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client","error_description":"client authentication failed"}`)
			return
		}
		// Tokens valid for 2 s: renewed after 1.6 s, expired after 2.
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":2}`, n.Add(1))
	}))
	defer endpoint.Close()
	c := oauthKfake(t, func(tok string) bool { return strings.HasPrefix(tok, "tok-") })
	props := filepath.Join(t.TempDir(), "oauth.properties")
	text := "bootstrap.servers=" + strings.Join(c.ListenAddrs(), ",") + "\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n" +
		"sasl.oauthbearer.token.endpoint.url=" + endpoint.URL + "/token\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="kql" clientSecret="kql-test-secret";` + "\n"
	if err := os.WriteFile(props, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, errb := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	ended := false
	defer func() {
		if !ended { // a failed test stops its FOLLOW before it returns
			cancel()
			<-done
		}
	}()
	go func() {
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errb, Getenv: func(string) string { return "" }}
		done <- run(ctx, ios, []string{"--command-config", props, "--format", "csv", "-e", "CONSUME orders FROM NEWEST FOLLOW"}, realWorld())
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// FOLLOW is reading (over OAUTHBEARER) once a record produced now shows.
	for i := 0; !strings.Contains(out.String(), "ready-"); i++ {
		select {
		case code := <-done:
			ended = true
			t.Fatalf("FOLLOW ended (exit %d) before the token was revoked:\n%s", code, errb.String())
		case <-ctx.Done():
			t.Fatalf("FOLLOW showed no record:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		case <-time.After(200 * time.Millisecond):
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("ready-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if unreachable {
		endpoint.Close()
	} else {
		revoked.Store(true)
	}
	// The token kql holds stays valid for at most 2 s; the bound only
	// stops a broken run.
	const bound = time.Minute
	select {
	case code := <-done:
		ended = true
		stderr := errb.String()
		if code != exitFailed {
			t.Errorf("FOLLOW ended with exit %d after its token could not be renewed, want %d (a statement failed)", code, exitFailed)
		}
		for _, want := range []string{"kql's OAuth token expired at ", fmt.Sprintf(want, endpoint.URL+"/token")} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "kql could not connect to") {
			t.Errorf("the token endpoint's failure is called a broker's:\n%s", stderr)
		}
		t.Logf("kql said: %s", strings.TrimSpace(stderr))
	case <-time.After(bound):
		t.Fatalf("FOLLOW still running %s after its token could no longer be renewed (a silent retry for ever):\nstderr:\n%s", bound, errb.String())
	}
}
