// Package exec runs KafkaQL statements: each statement becomes a plan of
// routed broker calls (through package kafka) and a streamed result.
package exec

import (
	"context"
	"errors"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Session runs statements against one cluster connection. It is safe for
// one statement at a time; Topics and Groups may be called concurrently with
// a running statement (the shell's completer does).
type Session struct {
	cl *kafka.Cluster
}

// NewSession returns a session over an open cluster connection. The caller
// keeps ownership of cl and closes it.
func NewSession(cl *kafka.Cluster) *Session { return &Session{cl: cl} }

// Execute runs one statement. An error returned here means nothing was
// produced; an error met while rows stream is reported by the result's Err.
// Cancelling ctx stops the statement; the session stays usable.
func (s *Session) Execute(ctx context.Context, stmt lang.Statement) (result.Result, error) {
	return nil, errors.New("exec: not implemented yet")
}

// Pager is implemented by a CONSUME result: the statement that reads the
// next, older page (FROM TAIL ... SKIP ...), for the shell's \next.
type Pager interface {
	NextPage() (*lang.Consume, bool)
}

// Topics returns topic names for completion, from cached metadata when fresh.
func (s *Session) Topics(ctx context.Context) ([]string, error) {
	return nil, errors.New("exec: not implemented yet")
}

// Groups returns consumer group names for completion.
func (s *Session) Groups(ctx context.Context) ([]string, error) {
	return nil, errors.New("exec: not implemented yet")
}
