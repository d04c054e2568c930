package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// credentialError is implemented by the errors of a SASL mechanism that
// could not produce kql's credentials (kafka/oauth's token endpoint
// refusing or unreachable once the token has expired).
type credentialError interface {
	error
	CredentialFailure() bool
}

// credentialFailure says err is kql's own credentials failing: the broker
// refused them (SASL_AUTHENTICATION_FAILED, which kgo has already tried
// once more on a new connection) or the mechanism could not produce them.
// No other leader, broker or retry a second later cures that, so a follow
// read ends with it instead of asking again, silent, for ever.
func credentialFailure(err error) bool {
	if ce, ok := errors.AsType[credentialError](err); ok && ce.CredentialFailure() {
		return true
	}
	return errors.Is(err, kerr.SaslAuthenticationFailed)
}
