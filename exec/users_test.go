package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// withPassword makes s answer every password question with pw, and counts
// the questions.
func withPassword(s *Session, pw string) *int {
	asked := new(int)
	s.NewPassword = func(context.Context, string) (string, error) { *asked++; return pw, nil }
	return asked
}

// userRows are SHOW USERS' rows for one user.
func userRows(t *testing.T, s *Session, user string) []result.Row {
	t.Helper()
	rows, _ := mustRun(t, s, &lang.ShowUsers{Query: lang.Query{
		Where: &lang.Binary{Op: lang.OpEq, L: &lang.Column{Name: "user"}, R: &lang.BytesLit{V: []byte(user)}}}})
	return rows
}

// controllerOf is the broker Metadata names as controller.
func controllerOf(t *testing.T, s *Session) int32 {
	t.Helper()
	m, err := s.cl.Metadata(ctxT(t), []string{})
	require.NoError(t, err)
	return m.ControllerID
}

// TestUsersLifecycle: CREATE, SHOW, ALTER and DROP USER as SHOW USERS and
// Kafka's own DescribeUserScramCredentials (kadm) see them, on both backends.
func TestUsersLifecycle(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		adm := kadm.NewClient(kafkatest.Client(t, b))
		user := kafkatest.TopicName(t) + "-user"
		asked := withPassword(s, "first-Pw-0a1")

		rows, _ := mustRun(t, s, &lang.CreateUser{User: user})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-512", int64(4096), "created"}}, rows, "SCRAM-SHA-512 and 4096 iterations by default")
		require.Equal(t, 1, *asked)
		rows, _ = mustRun(t, s, &lang.CreateUser{User: user, Mechanism: lang.ScramSHA256, Iterations: 8192})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-256", int64(8192), "created"}}, rows)
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-256", int64(8192)}, {user, "SCRAM-SHA-512", int64(4096)}}, userRows(t, s, user))

		described, err := adm.DescribeUserSCRAMs(ctxT(t), user)
		require.NoError(t, err)
		require.NoError(t, described.Error())
		require.ElementsMatch(t, []kadm.CredInfo{{Mechanism: kadm.ScramSha256, Iterations: 8192}, {Mechanism: kadm.ScramSha512, Iterations: 4096}},
			described[user].CredInfos, "what kql created is what Kafka describes")

		// CREATE of a mechanism the user has is refused before a password is asked.
		_, _, err = run(t, s, &lang.CreateUser{User: user})
		require.ErrorContains(t, err, "the user already has a SCRAM-SHA-512 credential (4096 iterations): ALTER USER")
		require.Equal(t, 2, *asked)

		// ALTER without MECHANISM: every mechanism, each keeping its iterations.
		rows, _ = mustRun(t, s, &lang.AlterUser{User: user})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-256", int64(8192), "password changed"}, {user, "SCRAM-SHA-512", int64(4096), "password changed"}}, rows)
		rows, _ = mustRun(t, s, &lang.AlterUser{User: user, Mechanism: lang.ScramSHA512, Iterations: 10000})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-512", int64(10000), "password changed"}}, rows)
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-256", int64(8192)}, {user, "SCRAM-SHA-512", int64(10000)}}, userRows(t, s, user))

		// DROP one mechanism, then the rest; then the user is gone.
		rows, _ = mustRun(t, s, &lang.DropUser{User: user, Mechanism: lang.ScramSHA256})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-256", int64(8192), "dropped"}}, rows)
		_, _, err = run(t, s, &lang.DropUser{User: user, Mechanism: lang.ScramSHA256})
		require.ErrorContains(t, err, "the user has no SCRAM-SHA-256 credential, only SCRAM-SHA-512")
		tr.reset()
		rows, _ = mustRun(t, s, &lang.DropUser{User: user})
		require.Equal(t, []result.Row{{user, "SCRAM-SHA-512", int64(10000), "dropped"}}, rows)
		require.Empty(t, userRows(t, s, user))

		asked0 := *asked
		_, _, err = run(t, s, &lang.DropUser{User: user})
		require.EqualError(t, err, fmt.Sprintf(`DROP USER %s: there is no user %q (it has no SCRAM credential; SHOW USERS lists the users)`, lang.QuoteName(user), user))
		_, _, err = run(t, s, &lang.AlterUser{User: user})
		require.ErrorContains(t, err, "there is no user")
		require.Equal(t, asked0, *asked, "no password is asked for a user that does not exist")

		// With MECHANISM too: ALTER changes a user's password, CREATE
		// makes a user; a misspelt name must not become a new user.
		tr.reset()
		_, _, err = run(t, s, &lang.AlterUser{User: user, Mechanism: lang.ScramSHA256})
		require.ErrorContains(t, err, "there is no user")
		require.ErrorContains(t, err, "CREATE USER "+lang.QuoteName(user)+" MECHANISM SCRAM-SHA-256 creates it")
		require.Equal(t, asked0, *asked, "no password is asked for a user that does not exist")
		require.Empty(t, tr.count("AlterUserScramCredentials"), "nothing is sent")
		require.Empty(t, userRows(t, s, user), "no user was created")
		q, asks := s.Confirmation(ctxT(t), &lang.AlterUser{User: user, Mechanism: lang.ScramSHA256})
		require.False(t, asks, "no question for a statement that will only say the user does not exist: %q", q)
	})
}

// TestUsersPasswordSource: without a password source nothing is sent, and
// the password never shows in a row, a trace item or an error.
func TestUsersPasswordSource(t *testing.T) {
	f := newFake(t)
	_, _, err := run(t, f.sess, &lang.CreateUser{User: "carol"})
	require.ErrorContains(t, err, `CREATE USER carol: kql has no way to ask for the password of "carol" here`)
	f.sess.NewPassword = func(context.Context, string) (string, error) { return "", errors.New("the two passwords typed differ") }
	f.trace.reset()
	_, _, err = run(t, f.sess, &lang.CreateUser{User: "carol"})
	require.EqualError(t, err, "CREATE USER carol: nothing was changed: the two passwords typed differ")
	require.Empty(t, f.trace.count("AlterUserScramCredentials"), "nothing is sent when no password was given")

	const pw = "Never-Shown-7c3e"
	withPassword(f.sess, pw)
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.CreateUser{User: "carol", Mechanism: lang.ScramSHA256})
	require.NotContains(t, fmt.Sprint(rows), pw)
	rows, _ = mustRun(t, f.sess, &lang.Explain{Stmt: &lang.AlterUser{User: "carol"}})
	require.NotContains(t, fmt.Sprint(rows), pw)
	f.trace.mu.Lock()
	defer f.trace.mu.Unlock()
	for _, e := range f.trace.events {
		require.NotContains(t, fmt.Sprint(e.Items), pw, "trace of %s", e.API)
	}
}

// TestUsersRouting: the credential writes go where admin requests are
// accepted (kfake answers them only on its controller, NOT_CONTROLLER
// elsewhere), one request each; SHOW USERS answers from another broker
// when the one asked first cannot answer.
func TestUsersRouting(t *testing.T) {
	f := newFake(t)
	withPassword(f.sess, "pw-routing-1")
	ctl := controllerOf(t, f.sess)
	f.trace.reset()
	mustRun(t, f.sess, &lang.CreateUser{User: "dave", Mechanism: lang.ScramSHA256})
	require.Equal(t, map[int32]int{ctl: 1}, f.trace.count("AlterUserScramCredentials"), "one request, to the controller")
	f.trace.reset()
	mustRun(t, f.sess, &lang.AlterUser{User: "dave", Mechanism: lang.ScramSHA512})
	mustRun(t, f.sess, &lang.AlterUser{User: "dave"})
	require.Equal(t, map[int32]int{ctl: 3}, f.trace.count("AlterUserScramCredentials"), "ALTER of two mechanisms is two requests (a user once per request)")

	f.trace.reset()
	mustRun(t, f.sess, &lang.AlterQuota{Entity: quotaFor(lang.QuotaPart{Kind: lang.QuotaUser, Name: "dave"}),
		Set: []lang.QuotaValue{{Key: "consumer_byte_rate", Value: 4096}}})
	require.Equal(t, map[int32]int{ctl: 1}, f.trace.count("AlterClientQuotas"), "the quota write goes where admin requests are accepted")

	// The broker asked first fails the request: another answers.
	mustRun(t, f.sess, &lang.ShowUsers{})
	var first int32 = -1
	for _, e := range f.trace.events {
		if e.API == "DescribeUserScramCredentials" {
			first = e.Broker
		}
	}
	require.GreaterOrEqual(t, first, int32(0))
	f.ControlKey(50, func(kmsg.Request) (kmsg.Response, error, bool) {
		if f.CurrentNode() == first {
			return nil, errors.New("broker down for this test"), true
		}
		return nil, nil, false
	})
	f.KeepControl()
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.ShowUsers{})
	require.Equal(t, []result.Row{{"dave", "SCRAM-SHA-256", int64(4096)}, {"dave", "SCRAM-SHA-512", int64(4096)}}, rows)
	answered := f.trace.count("DescribeUserScramCredentials")
	require.Len(t, answered, 2, "asked the failing broker, then another: %v", answered)
}

// TestUsersExplain: EXPLAIN names each request, its route and that the
// write is forwarded, and never asks for a password.
func TestUsersExplain(t *testing.T) {
	f := newFake(t)
	asked := withPassword(f.sess, "pw")
	ctl := controllerOf(t, f.sess)
	rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: &lang.CreateUser{User: "erin"}})
	require.Equal(t, 0, *asked)
	var text []string
	for _, r := range rows {
		text = append(text, fmt.Sprint(r...))
	}
	all := strings.Join(text, "\n")
	require.Contains(t, all, "DescribeUserScramCredentials<nil>any brokererin (it must not have a SCRAM-SHA-512 credential yet)")
	require.Contains(t, all, fmt.Sprintf("AlterUserScramCredentials%d", ctl))
	require.Contains(t, all, "upsert erin SCRAM-SHA-512 iterations=4096 (a KRaft broker forwards it to the active controller)")
	rows, _ = mustRun(t, f.sess, &lang.Explain{Stmt: &lang.AlterQuota{Entity: lang.QuotaEntity{Parts: []lang.QuotaPart{{Kind: lang.QuotaUser, Name: "erin"}}},
		Set: []lang.QuotaValue{{Key: "producer_byte_rate", Value: 1024}}}})
	require.Equal(t, "AlterClientQuotas", rows[1][1])
	require.Equal(t, int64(ctl), rows[1][2])
	require.Equal(t, "quota of user-principal 'erin': producer_byte_rate=1024 (a KRaft broker forwards it to the active controller)", rows[1][4])
}

func quotaFor(parts ...lang.QuotaPart) lang.QuotaEntity { return lang.QuotaEntity{Parts: parts} }

// TestQuotas: ALTER QUOTA sets and unsets what DescribeClientQuotas (kadm)
// then returns; SHOW QUOTAS lists one row per value, defaults as <default>.
func TestQuotas(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		adm := kadm.NewClient(kafkatest.Client(t, b))
		user := kafkatest.TopicName(t) + "-q"
		u := lang.QuotaPart{Kind: lang.QuotaUser, Name: user}
		rows, _ := mustRun(t, s, &lang.AlterQuota{Entity: quotaFor(u),
			Set: []lang.QuotaValue{{Key: "producer_byte_rate", Value: 1048576}, {Key: "request_percentage", Value: 12.5}}})
		require.Equal(t, []result.Row{{user, nil, nil, "producer_byte_rate", nil, "1048576"}, {user, nil, nil, "request_percentage", nil, "12.5"}}, rows)
		rows, _ = mustRun(t, s, &lang.AlterQuota{Entity: quotaFor(u, lang.QuotaPart{Kind: lang.QuotaClient, Default: true}),
			Set: []lang.QuotaValue{{Key: "consumer_byte_rate", Value: 2048}}})
		require.Equal(t, []result.Row{{user, "<default>", nil, "consumer_byte_rate", nil, "2048"}}, rows)

		rows, _ = mustRun(t, s, &lang.ShowQuotas{For: &lang.QuotaEntity{Parts: []lang.QuotaPart{u}}})
		require.Equal(t, []result.Row{
			{user, nil, nil, "producer_byte_rate", "1048576"},
			{user, nil, nil, "request_percentage", "12.5"},
			{user, "<default>", nil, "consumer_byte_rate", "2048"},
		}, rows, "FOR USER lists the user's own quotas and its per-client ones")

		// What Kafka itself returns for the entity.
		described, err := adm.DescribeClientQuotas(ctxT(t), true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &user, MatchType: 0}})
		require.NoError(t, err)
		require.Len(t, described, 1)
		got := map[string]float64{}
		for _, v := range described[0].Values {
			got[v.Key] = v.Value
		}
		require.Equal(t, map[string]float64{"producer_byte_rate": 1048576, "request_percentage": 12.5}, got)

		rows, _ = mustRun(t, s, &lang.AlterQuota{Entity: quotaFor(u), Set: []lang.QuotaValue{{Key: "producer_byte_rate", Value: 2097152}},
			Unset: []string{"request_percentage"}})
		require.Equal(t, []result.Row{{user, nil, nil, "producer_byte_rate", "1048576", "2097152"}, {user, nil, nil, "request_percentage", "12.5", nil}}, rows)
		mustRun(t, s, &lang.AlterQuota{Entity: quotaFor(u), Unset: []string{"producer_byte_rate"}})
		mustRun(t, s, &lang.AlterQuota{Entity: quotaFor(u, lang.QuotaPart{Kind: lang.QuotaClient, Default: true}), Unset: []string{"consumer_byte_rate"}})
		rows, _ = mustRun(t, s, &lang.ShowQuotas{For: &lang.QuotaEntity{Parts: []lang.QuotaPart{u}}})
		require.Empty(t, rows, "every quota of the user is gone")
	})
}

// TestUsersAndQuotasConfirmation: the shell's question says what would change.
func TestUsersAndQuotasConfirmation(t *testing.T) {
	f := newFake(t)
	withPassword(f.sess, "pw")
	mustRun(t, f.sess, &lang.CreateUser{User: "frank", Mechanism: lang.ScramSHA256})
	mustRun(t, f.sess, &lang.CreateUser{User: "frank"})
	ctx := ctxT(t)
	for _, tc := range []struct {
		st   lang.Statement
		q    string
		asks bool
	}{
		{&lang.CreateUser{User: "gina", Iterations: 8192}, "create user gina (SCRAM-SHA-512, 8192 iterations)?", true},
		{&lang.AlterUser{User: "frank"}, "change the password of user frank for SCRAM-SHA-256 and SCRAM-SHA-512?", true},
		{&lang.DropUser{User: "frank"}, "drop user frank: its SCRAM-SHA-256 and SCRAM-SHA-512 credentials?", true},
		{&lang.DropUser{User: "nobody"}, "", false},
		{&lang.AlterQuota{Entity: quotaFor(lang.QuotaPart{Kind: lang.QuotaClient, Name: "reports"}), Set: []lang.QuotaValue{{Key: "consumer_byte_rate", Value: 100}}},
			"alter the quotas of client-id 'reports': consumer_byte_rate (none) -> 100?", true},
	} {
		require.True(t, NeedsConfirmation(tc.st))
		q, asks := f.sess.Confirmation(ctx, tc.st)
		require.Equal(t, tc.asks, asks, lang.Format(tc.st))
		require.Equal(t, tc.q, q)
	}
	require.False(t, NeedsConfirmation(&lang.ShowUsers{}))
	require.False(t, NeedsConfirmation(&lang.Explain{Stmt: &lang.DropUser{User: "frank"}}))
}

// TestShowQuotasValueIsANumber: WHERE and ORDER BY read a quota's value
// as the number it is (12.5 < 50 < 1048576), not as its text.
func TestShowQuotasValueIsANumber(t *testing.T) {
	f := newFake(t)
	bob := lang.QuotaPart{Kind: lang.QuotaUser, Name: "bob"}
	mustRun(t, f.sess, &lang.AlterQuota{Entity: quotaFor(bob),
		Set: []lang.QuotaValue{{Key: "producer_byte_rate", Value: 1048576}, {Key: "request_percentage", Value: 12.5}}})
	mustRun(t, f.sess, &lang.AlterQuota{Entity: quotaFor(bob, lang.QuotaPart{Kind: lang.QuotaClient, Name: "c"}),
		Set: []lang.QuotaValue{{Key: "consumer_byte_rate", Value: 50}}})
	parse := func(src string) lang.Statement {
		st, err := lang.Parse(src)
		require.NoError(t, err)
		return st
	}
	rows, res := mustRun(t, f.sess, parse("SHOW QUOTAS WHERE value > 40 ORDER BY value"))
	require.Equal(t, []result.Row{
		{"bob", "c", nil, "consumer_byte_rate", "50"},
		{"bob", nil, nil, "producer_byte_rate", "1048576"},
	}, rows)
	require.Empty(t, res.Stats().Warnings(), "no value was compared as text")
	rows, _ = mustRun(t, f.sess, parse("SHOW QUOTAS WHERE value = 12.5"))
	require.Equal(t, []result.Row{{"bob", nil, nil, "request_percentage", "12.5"}}, rows)
}

// TestAlterUserAddingAMechanismWaitsForEveryBroker: ALTER USER ... PASSWORD
// MECHANISM m of a user that lacks m creates the credential, and waits, as
// CREATE USER does, until every broker has it (a login right after would
// otherwise fail on a broker that has not seen it yet).
func TestAlterUserAddingAMechanismWaitsForEveryBroker(t *testing.T) {
	f := newFake(t)
	withPassword(f.sess, "pw-adding-1")
	mustRun(t, f.sess, &lang.CreateUser{User: "hank", Mechanism: lang.ScramSHA512})
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.AlterUser{User: "hank", Mechanism: lang.ScramSHA256})
	require.Equal(t, []result.Row{{"hank", "SCRAM-SHA-256", int64(4096), "created"}}, rows)
	require.Len(t, f.trace.count("DescribeUserScramCredentials"), 3, "every broker is asked for the new credential")
	rows, _ = mustRun(t, f.sess, &lang.Explain{Stmt: &lang.AlterUser{User: "hank", Mechanism: lang.ScramSHA256}})
	require.Contains(t, fmt.Sprint(rows), "hank (if this creates the SCRAM-SHA-256 credential: until every broker has it)", "EXPLAIN says so")
}
