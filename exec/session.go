// Package exec runs KafkaQL statements: each statement becomes a plan of
// routed broker calls (through package kafka) and a streamed result.
package exec

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// Session runs statements against one cluster connection. It is safe for
// one statement at a time; Topics and Groups may be called concurrently with
// a running statement (the shell's completer does).
type Session struct {
	cl *kafka.Cluster

	// Now is the clock used for FROM ... AGO; tests replace it.
	Now func() time.Time

	// ReadBudget bounds the bytes of fetched records a record read buffers
	// ahead of its consumer; 0 means kafka.DefaultReadBudget. An INSERT's
	// source read takes the lower of this and its own (insertReadBudget).
	ReadBudget int64

	// Registry decodes and encodes keys and values in the Confluent wire
	// format; nil means no schema registry (bytes show as they are).
	Registry *schema.Registry

	// Local maps topics to schemas from local files (.proto, .avsc), for
	// payloads without a registry header; nil: none mapped (a statement's
	// AS clause still works).
	Local *LocalSchemas

	// NewPassword asks for the new password of a SCRAM user (CREATE USER,
	// ALTER USER ... PASSWORD): the shell's prompt without echo, or
	// $KQL_NEW_PASSWORD. nil: those statements fail, sending nothing.
	NewPassword func(ctx context.Context, user string) (string, error)

	// OnWarning, when set, shows a warning while a statement still runs
	// (a FOLLOW's records that do not decode); the summary still comes
	// from the result's Warnings at the end.
	OnWarning func(string)

	// Stdin is what PRODUCE ... FROM STDIN reads; nil (the interactive
	// shell, or a script read from stdin) refuses it.
	Stdin io.Reader
	// stdinRead is the Stdin a statement read, stdinReadBy that statement:
	// it is read once (a new Stdin can be read again).
	stdinRead   io.Reader
	stdinReadBy string

	namesMu    sync.Mutex
	topicNames []string
	groupNames []string
	namesAt    time.Time
	// subjectNames: the registry's subjects for completion, as of subjectsAt
	subjectNames []string
	subjectsAt   time.Time
}

// NewSession returns a session over an open cluster connection. The caller
// keeps ownership of cl and closes it.
func NewSession(cl *kafka.Cluster) *Session { return &Session{cl: cl, Now: time.Now} }

// Cluster returns the session's cluster connection.
func (s *Session) Cluster() *kafka.Cluster { return s.cl }

// Execute runs one statement. An error returned here means nothing was
// produced; an error met while rows stream is reported by the result's Err.
// Cancelling ctx stops the statement; the session stays usable.
func (s *Session) Execute(ctx context.Context, stmt lang.Statement) (result.Result, error) {
	res, err := s.execute(ctx, stmt)
	if err != nil {
		return nil, err
	}
	// Every SHOW and DESCRIBE takes WHERE / ORDER BY / LIMIT over its own
	// columns, on the record path's operators.
	if q, ok := stmt.(lang.Queryable); ok {
		return planMetaQuery(stmt, q.MetaQuery()).run(res, s.Now())
	}
	return res, nil
}

func (s *Session) execute(ctx context.Context, stmt lang.Statement) (result.Result, error) {
	switch st := stmt.(type) {
	case *lang.ShowTopics:
		return s.showTopics(ctx, st)
	case *lang.ShowBrokers:
		return s.showBrokers(ctx)
	case *lang.ShowCluster:
		return s.showCluster(ctx)
	case *lang.ShowGroups:
		return s.showGroups(ctx, st)
	case *lang.ShowPartitions:
		return s.showPartitions(ctx, st)
	case *lang.DescribeTopic:
		return s.describeTopic(ctx, st)
	case *lang.DescribeGroup:
		return s.describeGroup(ctx, st)
	case *lang.Consume:
		return s.consume(ctx, st)
	case *lang.Insert:
		return s.insert(ctx, st)
	case *lang.Produce:
		return s.produce(ctx, st)
	case *lang.ShowSubjects:
		return s.showSubjects(ctx, st)
	case *lang.DescribeSubject:
		return s.describeSubject(ctx, st)
	case *lang.ShowSchemas:
		return s.showSchemas(ctx, st)
	case *lang.CreateTopic:
		return s.createTopic(ctx, st)
	case *lang.DropTopic:
		return s.dropTopic(ctx, st)
	case *lang.ShowConfigs:
		return s.showConfigs(ctx, st)
	case *lang.AlterConfigs:
		return s.alterConfigs(ctx, st)
	case *lang.AlterPartitions:
		return s.alterPartitions(ctx, st)
	case *lang.ResetGroup:
		return s.resetGroup(ctx, st)
	case *lang.DeleteGroup:
		return s.deleteGroup(ctx, st)
	case *lang.DeleteRecords:
		return s.deleteRecords(ctx, st)
	case *lang.ShowACLs:
		return s.showACLs(ctx, st)
	case *lang.Grant:
		return s.grant(ctx, st)
	case *lang.Revoke:
		return s.revoke(ctx, st)
	case *lang.ExplainAccess:
		return s.explainAccess(ctx, st)
	case *lang.ShowUsers, *lang.CreateUser, *lang.AlterUser, *lang.DropUser, *lang.ShowQuotas, *lang.AlterQuota:
		return s.executeUsers(ctx, st)
	case *lang.ShowShareGroups:
		return s.showShareGroups(ctx, st)
	case *lang.DescribeShareGroup:
		return s.describeShareGroup(ctx, st)
	case *lang.ResetShareGroup:
		return s.resetShareGroup(ctx, st)
	case *lang.DeleteShareGroup:
		return s.deleteShareGroup(ctx, st)
	case *lang.ShowTransactions:
		return s.showTransactions(ctx)
	case *lang.DescribeTransaction:
		return s.describeTransaction(ctx, st)
	case *lang.ShowHangingTransactions:
		return s.showHanging(ctx, st)
	case *lang.AbortTransaction:
		return s.abortTransaction(ctx, st)
	case *lang.Explain:
		return s.explain(ctx, st)
	case nil:
		return nil, fmt.Errorf("no statement to run")
	}
	if res, ok, err := s.executeOps(ctx, stmt); ok {
		return res, err
	}
	return nil, fmt.Errorf("kql cannot run a %T statement yet", stmt)
}

// Pager gives the statement that reads a CONSUME's next page (for a tail
// read, the next older page: FROM TAIL ... SKIP ...; for a forward read,
// FROM ANCHOR at the positions after this page), for the shell's \next. ok
// is false when there is no further page.
type Pager interface {
	NextPage() (*lang.Consume, bool)
}

// PagerOf returns the pager of a result that reads pages (a CONSUME that is
// no FOLLOW), from its Stats; ok is false for any other result.
func PagerOf(res result.Result) (p Pager, ok bool) {
	st := res.Stats()
	if !st.Paged() {
		return nil, false
	}
	return statsPager{st}, true
}

type statsPager struct{ st *result.Stats }

func (p statsPager) NextPage() (*lang.Consume, bool) {
	next, ok := p.st.NextPage()
	c, _ := next.(*lang.Consume)
	return c, ok && c != nil
}

// namesMaxAge is how long completion names are reused before a refresh.
const namesMaxAge = 30 * time.Second

// Topics returns topic names for completion, from a cache refreshed when
// older than 30 seconds.
func (s *Session) Topics(ctx context.Context) ([]string, error) {
	return s.names(ctx, &s.topicNames)
}

// Groups returns consumer group names for completion.
func (s *Session) Groups(ctx context.Context) ([]string, error) {
	return s.names(ctx, &s.groupNames)
}

// Subjects returns the schema registry's subjects for completion; none
// without a registry.
//
// Cached as topic names are (namesMaxAge): the shell refreshes its names
// after every statement, and a GET /subjects each time would also show up
// in a traced statement's registry requests.
func (s *Session) Subjects(ctx context.Context) ([]string, error) {
	if s.Registry == nil {
		return nil, nil
	}
	s.namesMu.Lock()
	if time.Since(s.subjectsAt) < namesMaxAge {
		defer s.namesMu.Unlock()
		return slices.Clone(s.subjectNames), nil
	}
	s.namesMu.Unlock()
	names, err := s.Registry.Client().Subjects(ctx)
	if err != nil {
		return nil, err
	}
	s.namesMu.Lock()
	s.subjectNames, s.subjectsAt = names, time.Now()
	s.namesMu.Unlock()
	return slices.Clone(names), nil
}

// names refreshes the cache if stale and returns a copy of one of its lists.
func (s *Session) names(ctx context.Context, list *[]string) ([]string, error) {
	if err := s.refreshNames(ctx); err != nil {
		return nil, err
	}
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	return slices.Clone(*list), nil
}

func (s *Session) refreshNames(ctx context.Context) error {
	s.namesMu.Lock()
	fresh := time.Since(s.namesAt) < namesMaxAge
	s.namesMu.Unlock()
	if fresh {
		return nil
	}
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return err
	}
	groups, _, err := s.listGroups(ctx)
	if err != nil {
		return err
	}
	gnames := make([]string, 0, len(groups))
	for _, g := range groups {
		gnames = append(gnames, g.name)
	}
	s.namesMu.Lock()
	s.topicNames, s.groupNames, s.namesAt = m.TopicNames(), gnames, time.Now()
	s.namesMu.Unlock()
	return nil
}

// forgetNames drops the completion cache after a statement changed the
// topics, so a topic just created completes at once.
func (s *Session) forgetNames() {
	s.namesMu.Lock()
	s.namesAt = time.Time{}
	s.namesMu.Unlock()
}
