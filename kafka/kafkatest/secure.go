package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Listener names of a secure cluster (RealConfig.Secure). PLAINTEXT stays
// the test bed's own listener (inter-broker traffic, the helpers' admin
// client); its principal, User:ANONYMOUS, is a super user, so tests that do
// not care about security are unaffected by the authorizer.
const (
	ListenerPlaintext = "PLAINTEXT"
	// ListenerSASLSSL: TLS with a server certificate signed by Security.CAFile,
	// and SASL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (users in
	// Security.Users). No client certificate.
	ListenerSASLSSL = "SASL_SSL"
	// ListenerSSL: TLS with ssl.client.auth=required (mutual TLS). The
	// principal is the client certificate's CN (ssl.principal.mapping.rules).
	ListenerSSL = "SSL"
	// ListenerBadAdvertised is PLAINTEXT, but the last node advertises
	// UnreachableAddr on it, an address nothing listens on: what a client
	// sees when a broker's advertised.listeners is wrong for where it runs.
	ListenerBadAdvertised = "BADADV"
)

// UnreachableAddr is what the last node advertises on ListenerBadAdvertised:
// loopback port 1, where nothing listens (connections are refused).
const UnreachableAddr = "127.0.0.1:1"

// Test users of a secure cluster. Every user has SCRAM-SHA-256 and
// SCRAM-SHA-512 credentials (created at format time) and a PLAIN password,
// all the same per user. UserAdmin is a super user; the others start with no
// ACLs: a test grants what it needs (see (*Real).Admin).
const (
	UserAdmin   = "admin"
	UserAlice   = "alice"
	UserBob     = "bob"
	MTLSClient  = "mtls-client" // CN of Security.ClientCertFile, and its principal
	Untrusted   = "untrusted"   // CN of Security.UntrustedCertFile, signed by OtherCAFile
	principalOf = "User:"
)

// Security is what a client needs to use a secure cluster's listeners. The
// files are PEM, in the cluster's directory, removed by Close.
type Security struct {
	Dir                string            // where the files are
	CAFile             string            // the CA that signed the brokers' and ClientCertFile
	CAName             string            // its subject CN
	OtherCAFile        string            // a CA that signed neither (the "wrong CA")
	OtherCAName        string            // its subject CN
	ClientCertFile     string            // CN=mtls-client, signed by CAFile
	ClientKeyFile      string            // its key (PKCS#8, unencrypted)
	ClientKeystoreFile string            // certificate and key in one file (ssl.keystore.type=PEM)
	UntrustedCertFile  string            // CN=untrusted, signed by OtherCAFile
	UntrustedKeyFile   string            // its key
	Users              map[string]string // user -> password (SCRAM and PLAIN)

	brokerKeystore string // broker certificate and key, one file
}

// Principal is the Kafka principal of a user or certificate CN.
func Principal(user string) string { return principalOf + user }

func newSecurity(dir string) (*Security, error) {
	dir = filepath.Join(dir, "security")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Security{Dir: dir, Users: map[string]string{}}
	for _, u := range []string{UserAdmin, UserAlice, UserBob} {
		var b [9]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		// Random per cluster, so a test can search any output for it.
		s.Users[u] = u + "-pw-" + hex.EncodeToString(b[:])
	}
	ca, err := newCA("kql test bed CA")
	if err != nil {
		return nil, err
	}
	other, err := newCA("kql test bed other CA")
	if err != nil {
		return nil, err
	}
	s.CAName, s.OtherCAName = ca.cert.Subject.CommonName, other.cert.Subject.CommonName
	if s.CAFile, err = writePEM(dir, "ca.pem", ca.pem); err != nil {
		return nil, err
	}
	if s.OtherCAFile, err = writePEM(dir, "other-ca.pem", other.pem); err != nil {
		return nil, err
	}
	bc, bk, err := ca.issue("kql test broker", true)
	if err != nil {
		return nil, err
	}
	if s.brokerKeystore, err = writePEM(dir, "broker-keystore.pem", bk, bc); err != nil {
		return nil, err
	}
	cc, ck, err := ca.issue(MTLSClient, false)
	if err != nil {
		return nil, err
	}
	if s.ClientCertFile, err = writePEM(dir, "client-cert.pem", cc); err != nil {
		return nil, err
	}
	if s.ClientKeyFile, err = writePEM(dir, "client-key.pem", ck); err != nil {
		return nil, err
	}
	if s.ClientKeystoreFile, err = writePEM(dir, "client-keystore.pem", ck, cc); err != nil {
		return nil, err
	}
	uc, uk, err := other.issue(Untrusted, false)
	if err != nil {
		return nil, err
	}
	if s.UntrustedCertFile, err = writePEM(dir, "untrusted-cert.pem", uc); err != nil {
		return nil, err
	}
	if s.UntrustedKeyFile, err = writePEM(dir, "untrusted-key.pem", uk); err != nil {
		return nil, err
	}
	return s, nil
}

// jaasEscape quotes a value for a JAAS option.
func jaasEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`)
}

// brokerProps are the server.properties entries every node of a secure
// cluster shares.
func (s *Security) brokerProps() map[string]string {
	users := make([]string, 0, len(s.Users))
	for u := range s.Users {
		users = append(users, u)
	}
	sort.Strings(users)
	var plain strings.Builder
	plain.WriteString(`org.apache.kafka.common.security.plain.PlainLoginModule required`)
	for _, u := range users {
		fmt.Fprintf(&plain, ` user_%s="%s"`, u, jaasEscape(s.Users[u]))
	}
	plain.WriteString(";")
	scram := `org.apache.kafka.common.security.scram.ScramLoginModule required;`
	lower := strings.ToLower
	return map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS;" + Principal(UserAdmin),

		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   s.brokerKeystore,
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": s.CAFile,
		// The client certificate's CN is the principal: User:mtls-client.
		"ssl.principal.mapping.rules": `RULE:^CN=([^,]+).*$/$1/,DEFAULT`,

		"listener.name." + lower(ListenerSSL) + ".ssl.client.auth": "required",

		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name." + lower(ListenerSASLSSL) + ".plain.sasl.jaas.config":         plain.String(),
		"listener.name." + lower(ListenerSASLSSL) + ".scram-sha-256.sasl.jaas.config": scram,
		"listener.name." + lower(ListenerSASLSSL) + ".scram-sha-512.sasl.jaas.config": scram,
	}
}

// scramFormatArgs are StorageTool format arguments that create every user's
// SCRAM credentials in the cluster's first metadata.
func (s *Security) scramFormatArgs() []string {
	users := make([]string, 0, len(s.Users))
	for u := range s.Users {
		users = append(users, u)
	}
	sort.Strings(users)
	var args []string
	for _, u := range users {
		for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
			args = append(args, "--add-scram", fmt.Sprintf(`%s=[name=%s,password=%s]`, m, u, s.Users[u]))
		}
	}
	return args
}

// Security returns the secure cluster's client material, or nil if the
// cluster was not started with RealConfig.Secure.
func (r *Real) Security() *Security { return r.sec }

// ListenerAddrs returns every broker's address on the named listener, sorted
// by node id; nil if the cluster has no such listener. On
// ListenerBadAdvertised these are the addresses the nodes listen on (which
// work as bootstrap); the last node advertises UnreachableAddr there.
func (r *Real) ListenerAddrs(name string) []string {
	host := "127.0.0.1"
	for _, l := range r.cfg.Listeners {
		if l.Name == name && l.AdvertisedHost != "" {
			host = l.AdvertisedHost
		}
	}
	var out []string
	for _, n := range r.nodes {
		p, ok := n.ports[name]
		if !ok {
			return nil
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(p)))
	}
	return out
}

// Admin returns an admin client on the PLAINTEXT listener (a super user)
// and its closer, for tests to create topics and set ACLs.
func (r *Real) Admin() (*kadm.Client, func(), error) {
	cl, err := r.adminClient()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// WaitACLs waits until every broker lists at least want ACLs for
// principal: ACLs reach each broker's authorizer through the metadata log a
// moment after CreateACLs returns. Each broker is asked directly.
func (r *Real) WaitACLs(ctx context.Context, principal string, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, n := range r.nodes {
		if !r.Running(n.id) {
			continue
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.addr()), kgo.DialTimeout(2*time.Second))
		if err != nil {
			return err
		}
		for {
			req := kmsg.NewPtrDescribeACLsRequest()
			req.ResourceType = kmsg.ACLResourceTypeAny
			req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
			req.Principal = kmsg.StringPtr(principal)
			req.Operation = kmsg.ACLOperationAny
			req.PermissionType = kmsg.ACLPermissionTypeAny
			got := 0
			resp, err := cl.SeedBrokers()[0].Request(ctx, req)
			if err == nil {
				for _, res := range resp.(*kmsg.DescribeACLsResponse).Resources {
					got += len(res.ACLs)
				}
			}
			if got >= want {
				break
			}
			if ctx.Err() != nil {
				cl.Close()
				return fmt.Errorf("broker %d lists %d ACLs for %s after 30s, want %d (%v)", n.id, got, principal, want, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cl.Close()
	}
	return nil
}
