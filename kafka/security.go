package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// SecurityKind says which part of TLS or SASL failed.
type SecurityKind int

const (
	SASLAuthFailed        SecurityKind = iota + 1 // the broker rejected the user or password
	SASLMechanismRejected                         // the listener does not enable the mechanism
	TLSUnknownAuthority                           // the broker's certificate is not signed by a trusted CA
	TLSNameMismatch                               // the certificate does not name the address dialled
	TLSCertInvalid                                // expired, not yet valid, or unusable for a server
	TLSClientCertRequired                         // the broker wants a client certificate and kql sent none
	TLSClientCertRejected                         // the broker refused the client certificate kql sent
	TLSNotTLS                                     // the listener does not speak TLS
	TLSExpected                                   // the listener wants TLS and kql spoke plaintext
	SASLExpected                                  // the listener wants SASL and kql sent none
	SASLKerberos                                  // the Kerberos login or service ticket failed (Err is a *KerberosError)
)

// SecurityError is a failure of TLS or SASL with one broker. Every broker of
// a cluster would answer the same, so kql stops at the first instead of
// trying each bootstrap address (three identical errors help nobody, and
// repeated bad passwords can lock an account).
type SecurityError struct {
	Kind SecurityKind
	Addr string // the broker's host:port
	Err  error

	// TLS details, when known: who issued the broker's certificate, what
	// name kql expected in it, and which names it holds.
	Subject, Issuer string
	Expected        string
	ValidFor        []string
}

func (e *SecurityError) Error() string {
	switch e.Kind {
	case SASLAuthFailed:
		return fmt.Sprintf("SASL authentication failed at broker %s: %v", e.Addr, e.Err)
	case SASLMechanismRejected:
		return fmt.Sprintf("broker %s does not enable this SASL mechanism on this listener: %v", e.Addr, e.Err)
	case TLSUnknownAuthority:
		return fmt.Sprintf("the TLS certificate of broker %s (%s) could not be verified: its issuer %s is not a trusted CA", e.Addr, e.Subject, e.Issuer)
	case TLSNameMismatch:
		return fmt.Sprintf("the TLS certificate of broker %s is for %s, not %s", e.Addr, strings.Join(e.ValidFor, ", "), e.Expected)
	case TLSCertInvalid:
		return fmt.Sprintf("the TLS certificate of broker %s is not valid: %v", e.Addr, e.Err)
	case TLSClientCertRequired:
		return fmt.Sprintf("broker %s requires a TLS client certificate (mutual TLS) and kql sent none", e.Addr)
	case TLSClientCertRejected:
		return fmt.Sprintf("broker %s rejected kql's TLS client certificate: %v", e.Addr, e.Err)
	case TLSNotTLS:
		return fmt.Sprintf("broker %s does not speak TLS on this port: %v", e.Addr, e.Err)
	case TLSExpected:
		return fmt.Sprintf("broker %s closed the connection: the listener on this port expects TLS", e.Addr)
	case SASLExpected:
		return fmt.Sprintf("broker %s closed the connection after the first request: the listener on this port expects SASL", e.Addr)
	case SASLKerberos:
		return e.Err.Error()
	}
	return fmt.Sprintf("security failure at broker %s: %v", e.Addr, e.Err)
}

func (e *SecurityError) Unwrap() error { return e.Err }

// classifySecurity returns a *SecurityError if err is a TLS or SASL failure
// talking to addr; clientCert says whether kql offered a certificate.
func classifySecurity(addr string, err error, usingTLS, clientCert bool) *SecurityError {
	if err == nil {
		return nil
	}
	var ke *KerberosError
	if errors.As(err, &ke) {
		return &SecurityError{Kind: SASLKerberos, Addr: addr, Err: ke}
	}
	var eof *kgo.ErrFirstReadEOF
	if errors.As(err, &eof) {
		msg := eof.Error()
		switch {
		case strings.Contains(msg, "after a dial") && usingTLS:
			return &SecurityError{Kind: TLSNotTLS, Addr: addr, Err: err}
		case strings.Contains(msg, "api versions") && !usingTLS:
			return &SecurityError{Kind: TLSExpected, Addr: addr, Err: err}
		case strings.Contains(msg, "SASL"):
			return &SecurityError{Kind: SASLExpected, Addr: addr, Err: err}
		}
		return nil
	}
	se := &SecurityError{Addr: addr, Err: err}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	var ve *tls.CertificateVerificationError
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		se.Kind = SASLAuthFailed
	case errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		se.Kind = SASLMechanismRejected
	case errors.As(err, &ua):
		se.Kind = TLSUnknownAuthority
		if ua.Cert != nil {
			se.Subject, se.Issuer = ua.Cert.Subject.String(), ua.Cert.Issuer.String()
		}
	case errors.As(err, &he):
		se.Kind, se.Expected = TLSNameMismatch, he.Host
		if he.Certificate != nil {
			se.Subject, se.Issuer = he.Certificate.Subject.String(), he.Certificate.Issuer.String()
			se.ValidFor = append(se.ValidFor, he.Certificate.DNSNames...)
			for _, ip := range he.Certificate.IPAddresses {
				se.ValidFor = append(se.ValidFor, ip.String())
			}
			if len(se.ValidFor) == 0 {
				se.ValidFor = []string{"CN=" + he.Certificate.Subject.CommonName + " (no subject alternative names)"}
			}
		}
	case errors.As(err, &ci):
		se.Kind = TLSCertInvalid
	case errors.As(err, &ve):
		se.Kind = TLSCertInvalid
	case errors.As(err, &alert):
		// 42 bad_certificate (TLS 1.2, and Java's answer to a missing
		// certificate), 116 certificate_required (TLS 1.3), 48 unknown_ca,
		// 45 certificate_expired, 44 certificate_revoked, 46 unknown.
		switch uint8(alert) {
		case 42, 116, 48, 45, 44, 46:
			if clientCert {
				se.Kind = TLSClientCertRejected
			} else {
				se.Kind = TLSClientCertRequired
			}
		default:
			return nil
		}
	case errors.As(err, &rh):
		se.Kind = TLSNotTLS
	default:
		// kgo flattens some errors to text; fall back on it.
		msg := err.Error()
		switch {
		case strings.Contains(msg, "tls: bad certificate"), strings.Contains(msg, "tls: certificate required"),
			strings.Contains(msg, "tls: unknown certificate authority"):
			if clientCert {
				se.Kind = TLSClientCertRejected
			} else {
				se.Kind = TLSClientCertRequired
			}
		case strings.Contains(msg, "first record does not look like a TLS handshake"):
			se.Kind = TLSNotTLS
		case !usingTLS && strings.Contains(msg, "speaking to a tls endpoint"):
			se.Kind = TLSExpected
		default:
			return nil
		}
	}
	return se
}

// AsSecurityError returns the *SecurityError in err's chain, or nil.
func AsSecurityError(err error) *SecurityError {
	var se *SecurityError
	if errors.As(err, &se) {
		return se
	}
	return nil
}
