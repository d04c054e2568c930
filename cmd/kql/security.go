package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/kql-dev/kql/kafka"
)

// How kql is connected, in words, for the banner, the warnings and the
// errors an operator of a secured cluster reads.

// transport is "PLAINTEXT", "SSL", "SASL_PLAINTEXT" or "SASL_SSL": Kafka's
// security.protocol names, which is what an operator looks for.
func (s *connSettings) transport() string {
	switch {
	case s.tls && s.saslMechanism != "":
		return "SASL_SSL"
	case s.tls:
		return "SSL"
	case s.saslMechanism != "":
		return "SASL_PLAINTEXT"
	}
	return "PLAINTEXT"
}

// trustDesc says which CAs verify the brokers.
func (s *connSettings) trustDesc() string {
	if s.caSource != "" {
		return s.caSource
	}
	return "the system's root CAs (no --tls-ca)"
}

// clientCert returns the client certificate kql offers, or nil.
func (s *connSettings) clientCert() *x509.Certificate {
	var data []byte
	switch {
	case len(s.certPEM) > 0:
		data = s.certPEM
	case s.certFile != "":
		data, _ = os.ReadFile(s.certFile)
	case s.keystoreFile != "":
		data, _ = os.ReadFile(s.keystoreFile)
	}
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err == nil {
				return c
			}
		}
	}
	return nil
}

func (s *connSettings) clientCertSource() string {
	switch {
	case len(s.certPEM) > 0:
		return "ssl.keystore.certificate.chain"
	case s.certFile != "":
		return s.certFile
	}
	return s.keystoreFile
}

// principal is who the brokers' authorizer sees, as far as kql can know.
func (s *connSettings) principal() string {
	if p := s.extPrincipal(); p != "" {
		return p
	}
	switch {
	case s.oauthSource != nil:
		return s.oauthPrincipal()
	case s.saslMechanism != "":
		return fmt.Sprintf("User:%s (SASL %s)", s.saslUser, s.saslMechanism)
	case s.tls:
		if c := s.clientCert(); c != nil {
			return fmt.Sprintf("User:%s (from the client certificate; the broker's ssl.principal.mapping.rules may shorten it)", c.Subject.String())
		}
	}
	return "User:ANONYMOUS (no SASL, no client certificate)"
}

// connectedAs is the banner's "how": transport, identity, verification.
func (s *connSettings) connectedAs() string {
	parts := []string{s.transport()}
	if s.oauth != nil {
		parts = append(parts, s.oauthDesc())
	} else if ext := s.extSASLConnectedAs(); ext != "" {
		parts = append(parts, ext)
	} else if s.saslMechanism != "" {
		parts = append(parts, fmt.Sprintf("as %s (%s, password from %s)", s.saslUser, s.saslMechanism, s.passwordSource))
	}
	if s.tls {
		if c := s.clientCert(); c != nil {
			parts = append(parts, "client certificate "+c.Subject.String())
		}
		if s.skipVerify {
			parts = append(parts, "broker certificates NOT verified (--tls-insecure-skip-verify)")
		} else {
			parts = append(parts, "brokers verified with "+s.trustDesc())
		}
	}
	return strings.Join(parts, ", ")
}

// securityMessage turns a TLS or SASL failure into the one line an operator
// can act on: what failed, at which broker, with which settings.
func (s *connSettings) securityMessage(se *kafka.SecurityError) string {
	if se.Kind == kafka.SASLAuthFailed && s.oauthSource != nil {
		return s.oauthRefused(se)
	}
	if m := s.extSecurityMessage(se); m != "" {
		return m
	}
	switch se.Kind {
	case kafka.SASLAuthFailed:
		src := s.passwordSource
		if s.overridden != "" {
			src += " (which takes precedence over " + s.overridden + ")"
		}
		return fmt.Sprintf("authentication failed for SASL user %q (%s) at broker %s: the broker rejected the user name or password; the password came from %s",
			s.saslUser, s.saslMechanism, se.Addr, src)
	case kafka.SASLMechanismRejected:
		return fmt.Sprintf("broker %s does not accept SASL mechanism %s on this listener (user %q): %s", se.Addr, s.saslMechanism, s.saslUser, kafkaMessage(se.Err))
	case kafka.TLSUnknownAuthority:
		return fmt.Sprintf("TLS: the certificate of broker %s could not be verified: it is issued by %q, which is not among the CAs of %s (expected the name %s); give the CA that signed the brokers' certificates (--tls-ca FILE or ssl.truststore.location)",
			se.Addr, se.Issuer, s.trustDesc(), s.expectedName(se.Addr))
	case kafka.TLSNameMismatch:
		hint := "connect by a name the certificate holds"
		if s.serverName != "" {
			hint = "--tls-server-name " + s.serverName + " asks for that name; give one the certificate holds"
		}
		return fmt.Sprintf("TLS: the certificate of broker %s could not be verified: it is for %s, not the expected name %s; %s",
			se.Addr, strings.Join(se.ValidFor, ", "), se.Expected, hint)
	case kafka.TLSCertInvalid:
		return fmt.Sprintf("TLS: the certificate of broker %s could not be verified: %v (CAs from %s, expected the name %s)", se.Addr, rootCause(se.Err), s.trustDesc(), s.expectedName(se.Addr))
	case kafka.TLSClientCertRequired:
		return fmt.Sprintf("TLS: broker %s requires a client certificate (mutual TLS, ssl.client.auth=required) and kql sent none: give --tls-cert FILE and --tls-key FILE, or ssl.keystore.location (or ssl.certificate.location and ssl.key.location) in %s", se.Addr, s.propsFile)
	case kafka.TLSClientCertRejected:
		desc := s.clientCertSource()
		if c := s.clientCert(); c != nil {
			desc = fmt.Sprintf("%s (%s, issued by %s)", desc, c.Subject.String(), c.Issuer.String())
		}
		return fmt.Sprintf("TLS: broker %s rejected kql's client certificate %s: %v; the broker trusts only client certificates signed by the CAs of its ssl.truststore", se.Addr, desc, rootCause(se.Err))
	case kafka.TLSExpected:
		return fmt.Sprintf("broker %s closed the connection: its listener on this port expects TLS (an SSL or SASL_SSL listener): give --tls-ca FILE (or --tls), or security.protocol=SSL or SASL_SSL in %s", se.Addr, s.propsFile)
	case kafka.SASLExpected:
		return fmt.Sprintf("broker %s closed the connection after kql's first request: its listener on this port expects SASL (SASL_PLAINTEXT or SASL_SSL): give --sasl-mechanism and --sasl-user, or sasl.mechanism and sasl.jaas.config in %s", se.Addr, s.propsFile)
	case kafka.TLSNotTLS:
		return fmt.Sprintf("TLS: broker %s does not speak TLS on this port (a PLAINTEXT or SASL_PLAINTEXT listener?): check security.protocol, --tls and the port", se.Addr)
	}
	return se.Error()
}

func (s *connSettings) expectedName(addr string) string {
	if s.serverName != "" {
		return s.serverName + " (--tls-server-name)"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// rootCause is the innermost error's text.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// kafkaMessage is the broker's own message of a Kafka error.
func kafkaMessage(err error) string { return rootCause(err).Error() }

// insecureWarning is printed every session that skips verification.
func (s *connSettings) insecureWarning() string {
	if !s.skipVerify {
		return ""
	}
	w := "--tls-insecure-skip-verify: broker certificates are NOT verified; anyone on the network path can impersonate the brokers and read what kql sends"
	switch {
	case s.oauth != nil:
		// The brokers get the bearer token, not the client secret; the
		// token endpoint has TLS settings of its own (sasl.jaas.config's
		// ssl.* options), which the flag does not loosen.
		w += ", the OAuth access token included (the token endpoint's certificate is still verified)"
	case s.saslMechanism != "":
		w += ", the SASL password included"
	}
	if s.skipVerifyIgnored != "" {
		w += "; the CAs of " + s.skipVerifyIgnored + " are not used"
	}
	return w
}
