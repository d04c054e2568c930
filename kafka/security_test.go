package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestClassifySecurity: each TLS or SASL failure kgo can return is
// recognised as what it is; anything else is not a security error (and
// the bootstrap loop goes on to the next seed).
func TestClassifySecurity(t *testing.T) {
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: "broker"}, Issuer: pkix.Name{CommonName: "Other CA"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	wrap := func(err error) error { return fmt.Errorf("unable to dial: %w", err) }
	for _, tc := range []struct {
		name       string
		err        error
		tls, cert  bool
		want       SecurityKind
		wantDetail string
	}{
		{"sasl", fmt.Errorf("Authentication failed: %w", kerr.SaslAuthenticationFailed), true, false, SASLAuthFailed, ""},
		{"mechanism", kerr.UnsupportedSaslMechanism, true, false, SASLMechanismRejected, ""},
		{"unknown CA", wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: leaf}}), true, false, TLSUnknownAuthority, "CN=Other CA"},
		{"name", wrap(&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: leaf, Host: "kafka.example.com"}}), true, false, TLSNameMismatch, "localhost, 127.0.0.1"},
		{"expired", wrap(x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}), true, false, TLSCertInvalid, ""},
		{"no client cert (TLS 1.3)", wrap(tls.AlertError(116)), true, false, TLSClientCertRequired, ""},
		{"no client cert (Java)", wrap(tls.AlertError(42)), true, false, TLSClientCertRequired, ""},
		{"client cert rejected", wrap(tls.AlertError(42)), true, true, TLSClientCertRejected, ""},
		{"not TLS", wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), true, false, TLSNotTLS, ""},
		{"plaintext to TLS", errors.New("invalid large response size 352518912 > limit 104857600; the first three bytes received appear to be a tls alert record for TLS v1.2; is this a plaintext connection speaking to a tls endpoint?"), false, false, TLSExpected, ""},
	} {
		se := classifySecurity("127.0.0.1:9093", tc.err, tc.tls, tc.cert)
		if se == nil || se.Kind != tc.want {
			t.Errorf("%s: got %+v, want kind %d", tc.name, se, tc.want)
			continue
		}
		if tc.wantDetail != "" {
			if msg := se.Error(); !strings.Contains(msg, tc.wantDetail) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, tc.wantDetail)
			}
		}
	}
	for _, err := range []error{
		wrap(errors.New("dial tcp 127.0.0.1:9093: connect: connection refused")),
		kerr.NotLeaderForPartition,
		wrap(tls.AlertError(80)), // internal_error: not about certificates
	} {
		if se := classifySecurity("127.0.0.1:9093", err, true, false); se != nil {
			t.Errorf("%v: classified as a security error %+v", err, se)
		}
	}
}
