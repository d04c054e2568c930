package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The SCRAM user statements. A password comes only from Session.NewPassword
// (the shell's prompt or $KQL_NEW_PASSWORD), is salted in package kafka and
// is never put in a row, a notice, an error or a trace item.

var showUsersCols = []result.Column{col("user", result.String), col("mechanism", result.String), col("iterations", result.Int)}

var userCols = []result.Column{col("user", result.String), col("mechanism", result.String), col("iterations", result.Int), col("result", result.String)}

// defaultMechanism is CREATE USER's mechanism when none is written:
// kafka-configs.sh has no default (it wants SCRAM-SHA-256=[...] or
// SCRAM-SHA-512=[...]); SCRAM-SHA-512 is the stronger of the two.
const defaultMechanism = lang.ScramSHA512

// userSettle bounds the wait for every broker to know a created or
// dropped credential.
const userSettle = 10 * time.Second

// executeUsers runs the user and quota statements (one entry in execute's
// switch).
func (s *Session) executeUsers(ctx context.Context, stmt lang.Statement) (result.Result, error) {
	switch st := stmt.(type) {
	case *lang.ShowUsers:
		return s.showUsers(ctx)
	case *lang.CreateUser:
		return s.createUser(ctx, st)
	case *lang.AlterUser:
		return s.alterUser(ctx, st)
	case *lang.DropUser:
		return s.dropUser(ctx, st)
	case *lang.ShowQuotas:
		return s.showQuotas(ctx, st)
	case *lang.AlterQuota:
		return s.alterQuota(ctx, st)
	}
	return nil, fmt.Errorf("kql cannot run a %T statement yet", stmt)
}

func kafkaMechanism(m lang.ScramMechanism) kafka.ScramMechanism {
	if m == lang.ScramSHA256 {
		return kafka.ScramSHA256
	}
	return kafka.ScramSHA512
}

func (s *Session) showUsers(ctx context.Context) (result.Result, error) {
	users, err := s.cl.DescribeUserScram(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("SHOW USERS: %w", err)
	}
	var rows []result.Row
	var missing []error
	for _, u := range users {
		if u.Err != nil {
			rows = append(rows, result.Row{u.User, nil, nil})
			missing = append(missing, u.Err)
			continue
		}
		for _, c := range u.Creds {
			rows = append(rows, result.Row{u.User, c.Mechanism.String(), int64(c.Iterations)})
		}
	}
	res := result.NewSlice(showUsersCols, rows)
	if missing != nil {
		res.Failure = &result.PartialError{What: "SHOW USERS", Missing: missing}
	}
	return res, nil
}

// userCreds describes one user: its credentials, or none (nil, nil) for a
// user that has no SCRAM credential, which Kafka answers RESOURCE_NOT_FOUND.
func (s *Session) userCreds(ctx context.Context, user string) ([]kafka.ScramCredential, error) {
	users, err := s.cl.DescribeUserScram(ctx, []string{user})
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if u.User != user {
			continue
		}
		if u.Err != nil {
			if kafka.IsNotFound(u.Err) {
				return nil, nil
			}
			return nil, u.Err
		}
		return u.Creds, nil
	}
	return nil, nil
}

func mechanisms(creds []kafka.ScramCredential) string {
	names := make([]string, len(creds))
	for i, c := range creds {
		names[i] = c.Mechanism.String()
	}
	return strings.Join(names, " and ")
}

// newPassword asks the shell for the user's new password.
func (s *Session) newPassword(ctx context.Context, what, user string) (string, error) {
	if s.NewPassword == nil {
		return "", fmt.Errorf("%s: kql has no way to ask for the password of %q here", what, user)
	}
	pw, err := s.NewPassword(ctx, user)
	if err != nil {
		return "", fmt.Errorf("%s: nothing was changed: %w", what, err)
	}
	if pw == "" {
		return "", fmt.Errorf("%s: nothing was changed: the password is empty", what)
	}
	return pw, nil
}

// scramChange is one credential's change and its row in the result.
type scramChange struct {
	del *kafka.ScramDeletion
	up  *kafka.ScramUpsert
	row result.Row // user, mechanism, iterations, result
}

// applyScram sends the changes one request each: Kafka takes a user only
// once per AlterUserScramCredentials, so a user's two mechanisms are two
// requests. A change that failed is a row with its error and makes the
// result partial; nothing changed at all is an error.
func (s *Session) applyScram(ctx context.Context, what string, changes []scramChange) (*result.Slice, error) {
	rows := make([]result.Row, 0, len(changes))
	var failed []error
	for _, ch := range changes {
		var del []kafka.ScramDeletion
		var up []kafka.ScramUpsert
		if ch.del != nil {
			del = []kafka.ScramDeletion{*ch.del}
		}
		if ch.up != nil {
			up = []kafka.ScramUpsert{*ch.up}
		}
		err := ctx.Err() // after a cancel, nothing more is sent
		if err == nil {
			err = s.cl.AlterUserScramOne(ctx, del, up)
		}
		row := ch.row
		if err != nil {
			row = append(result.Row(nil), ch.row...)
			row[3] = "failed: " + err.Error()
			failed = append(failed, err)
		}
		rows = append(rows, row)
	}
	switch {
	case len(failed) == len(changes) && len(failed) == 1:
		return nil, fmt.Errorf("%s: %w", what, failed[0])
	case len(failed) == len(changes):
		return nil, fmt.Errorf("%s: nothing was changed: %w", what, errors.Join(failed...))
	}
	res := result.NewSlice(userCols, rows)
	if failed != nil {
		res.Failure = &result.PartialError{What: what, Missing: failed}
	}
	return res, nil
}

func (s *Session) createUser(ctx context.Context, st *lang.CreateUser) (result.Result, error) {
	what := "CREATE USER " + lang.QuoteName(st.User)
	mech := kafkaMechanism(st.Mechanism)
	if st.Mechanism == 0 {
		mech = kafkaMechanism(defaultMechanism)
	}
	iters := st.Iterations
	if iters == 0 {
		iters = lang.MinScramIterations
	}
	creds, err := s.userCreds(ctx, st.User)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, c := range creds {
		if c.Mechanism == mech {
			return nil, fmt.Errorf("%s: the user already has a %s credential (%d iterations): ALTER USER %s PASSWORD MECHANISM %s changes its password",
				what, mech, c.Iterations, lang.QuoteName(st.User), mech)
		}
	}
	pw, err := s.newPassword(ctx, what, st.User)
	if err != nil {
		return nil, err
	}
	res, err := s.applyScram(ctx, what, []scramChange{{
		up:  &kafka.ScramUpsert{User: st.User, Mechanism: mech, Iterations: iters, Password: pw},
		row: result.Row{st.User, mech.String(), int64(iters), "created"}}})
	if err != nil {
		return nil, err
	}
	if !s.cl.WaitUserScram(ctx, st.User, mech, iters, userSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: user %q was created, but not every broker knew its %s credential after %s; a login right now may still fail on some brokers", st.User, mech, userSettle))
	}
	return res, nil
}

func (s *Session) alterUser(ctx context.Context, st *lang.AlterUser) (result.Result, error) {
	what := "ALTER USER " + lang.QuoteName(st.User) + " PASSWORD"
	creds, err := s.userCreds(ctx, st.User)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(creds) == 0 {
		// Even with MECHANISM: ALTER changes a user's password, and a
		// misspelt name must not become a new user.
		create := "CREATE USER " + lang.QuoteName(st.User)
		if st.Mechanism != 0 {
			create += " MECHANISM " + st.Mechanism.String()
		}
		return nil, fmt.Errorf("%s: there is no user %q (it has no SCRAM credential; SHOW USERS lists the users): %s creates it",
			what, st.User, create)
	}
	var changes []scramChange
	add := func(m kafka.ScramMechanism, iters int32, outcome string) {
		if st.Iterations != 0 {
			iters = st.Iterations
		}
		changes = append(changes, scramChange{up: &kafka.ScramUpsert{User: st.User, Mechanism: m, Iterations: iters},
			row: result.Row{st.User, m.String(), int64(iters), outcome}})
	}
	if st.Mechanism != 0 {
		m := kafkaMechanism(st.Mechanism)
		iters, outcome := int32(lang.MinScramIterations), "created"
		for _, c := range creds {
			if c.Mechanism == m {
				iters, outcome = c.Iterations, "password changed"
			}
		}
		add(m, iters, outcome)
	} else {
		for _, c := range creds {
			add(c.Mechanism, c.Iterations, "password changed")
		}
	}
	pw, err := s.newPassword(ctx, what, st.User)
	if err != nil {
		return nil, err
	}
	for _, ch := range changes {
		ch.up.Password = pw
	}
	res, err := s.applyScram(ctx, what, changes)
	if err != nil {
		return nil, err
	}
	// New iterations, or a credential this created, show in every
	// broker's answer once it has the new credential: wait for that, as
	// CREATE does (the same iterations cannot be told from the old
	// credential; a broker has it a moment after the answer).
	for i, ch := range changes {
		outcome, _ := res.Rows[i][3].(string)
		if st.Iterations == 0 && outcome != "created" || strings.HasPrefix(outcome, "failed") {
			continue
		}
		if !s.cl.WaitUserScram(ctx, st.User, ch.up.Mechanism, ch.up.Iterations, userSettle) {
			res.Notes = append(res.Notes, fmt.Sprintf("notice: the %s password of %q was changed, but not every broker had it after %s; a login right now may still need the old password on some brokers", ch.up.Mechanism, st.User, userSettle))
		}
	}
	return res, nil
}

func (s *Session) dropUser(ctx context.Context, st *lang.DropUser) (result.Result, error) {
	what := "DROP USER " + lang.QuoteName(st.User)
	creds, err := s.userCreds(ctx, st.User)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(creds) == 0 {
		return nil, fmt.Errorf("%s: there is no user %q (it has no SCRAM credential; SHOW USERS lists the users)", what, st.User)
	}
	drop := creds
	if st.Mechanism != 0 {
		m := kafkaMechanism(st.Mechanism)
		drop = nil
		for _, c := range creds {
			if c.Mechanism == m {
				drop = append(drop, c)
			}
		}
		if drop == nil {
			return nil, fmt.Errorf("%s MECHANISM %s: the user has no %s credential, only %s", what, m, m, mechanisms(creds))
		}
	}
	var changes []scramChange
	for _, c := range drop {
		changes = append(changes, scramChange{del: &kafka.ScramDeletion{User: st.User, Mechanism: c.Mechanism},
			row: result.Row{st.User, c.Mechanism.String(), int64(c.Iterations), "dropped"}})
	}
	res, err := s.applyScram(ctx, what, changes)
	if err != nil {
		return nil, err
	}
	for i, c := range drop {
		if res.Rows[i][3] != "dropped" {
			continue
		}
		if !s.cl.WaitUserScram(ctx, st.User, c.Mechanism, 0, userSettle) {
			res.Notes = append(res.Notes, fmt.Sprintf("notice: the %s credential of %q was dropped, but not every broker had forgotten it after %s; a login right now may still succeed on some brokers", c.Mechanism, st.User, userSettle))
		}
	}
	return res, nil
}

// usersConfirmation is the shell's question before a user or quota change.
// A change the cluster would refuse anyway (dropping a user that does not
// exist) is not asked about: the statement itself then says what is wrong.
func (s *Session) usersConfirmation(ctx context.Context, stmt lang.Statement) (string, bool) {
	switch st := stmt.(type) {
	case *lang.CreateUser:
		mech, iters := st.Mechanism, st.Iterations
		if mech == 0 {
			mech = defaultMechanism
		}
		if iters == 0 {
			iters = lang.MinScramIterations
		}
		return fmt.Sprintf("create user %s (%s, %d iterations)?", lang.QuoteName(st.User), mech, iters), true
	case *lang.AlterUser:
		q := "change the password of user " + lang.QuoteName(st.User)
		creds, err := s.userCreds(ctx, st.User)
		if err != nil {
			return q + "?", true
		}
		if len(creds) == 0 {
			return "", false
		}
		if st.Mechanism != 0 {
			return q + " for " + st.Mechanism.String() + "?", true
		}
		return q + " for " + mechanisms(creds) + "?", true
	case *lang.DropUser:
		q := "drop user " + lang.QuoteName(st.User)
		if st.Mechanism != 0 {
			return q + ": its " + st.Mechanism.String() + " credential?", true
		}
		creds, err := s.userCreds(ctx, st.User)
		if err != nil {
			return q + "?", true
		}
		if len(creds) == 0 {
			return "", false
		}
		return q + ": its " + mechanisms(creds) + " " + plural(len(creds), "credential", "credentials") + "?", true
	case *lang.AlterQuota:
		ent := quotaEntity(st.Entity)
		q := "alter the quotas of " + ent.String()
		before, err := s.entityQuotas(ctx, ent)
		if err != nil {
			return q + "?", true
		}
		var changes []string
		was := func(k string) string {
			if v, ok := before[k]; ok {
				return quotaNumber(v)
			}
			return "(none)"
		}
		for _, v := range st.Set {
			changes = append(changes, fmt.Sprintf("%s %s -> %s", v.Key, was(v.Key), quotaNumber(v.Value)))
		}
		for _, k := range st.Unset {
			changes = append(changes, fmt.Sprintf("%s %s -> (none)", k, was(k)))
		}
		return q + ": " + strings.Join(changes, ", ") + "?", true
	}
	return "", false
}
