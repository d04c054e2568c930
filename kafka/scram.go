package kafka

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ScramMechanism is a SCRAM mechanism by Kafka's wire code.
type ScramMechanism int8

const (
	ScramSHA256 ScramMechanism = 1
	ScramSHA512 ScramMechanism = 2
)

func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return fmt.Sprintf("UNKNOWN(%d)", int8(m))
}

// ScramCredential is what Kafka says of one credential: its mechanism and
// iterations. The salt and salted password never leave the broker.
type ScramCredential struct {
	Mechanism  ScramMechanism
	Iterations int32
}

// UserCredentials is one user's SCRAM credentials, or why they could not
// be described (Err; RESOURCE_NOT_FOUND for a user with none).
type UserCredentials struct {
	User  string
	Creds []ScramCredential // sorted by mechanism
	Err   error
}

// ScramUpsert creates or replaces a user's credential for one mechanism.
// Password is salted here (PBKDF2, as SCRAM's Hi()) and never sent.
type ScramUpsert struct {
	User       string
	Mechanism  ScramMechanism
	Iterations int32
	Password   string
}

// ScramDeletion removes a user's credential for one mechanism.
type ScramDeletion struct {
	User      string
	Mechanism ScramMechanism
}

// UserResult is one user's answer to AlterUserScramCredentials.
type UserResult struct {
	User string
	Err  error // nil: done
}

// AdminError is a refusal of a cluster-wide admin request as a whole (SCRAM
// credentials, client quotas, replica moves, DescribeCluster), not of one
// item, by the broker that answered: it names the request, the broker, what
// was asked and, for an authorization failure, the ACL the request needs.
type AdminError struct {
	API     string
	Broker  int32
	Addr    string
	Item    string // what was asked: "users alice, bob", "quota of user alice"
	Needs   string // the ACL Kafka requires, e.g. "DESCRIBE on the CLUSTER"
	Err     error
	Message string // the broker's own explanation
}

func (e *AdminError) Error() string {
	where := fmt.Sprintf("broker %d (%s)", e.Broker, e.Addr)
	if e.Broker < 0 {
		where = "bootstrap address " + e.Addr
	}
	what := e.API
	if e.Item != "" {
		what += " of " + e.Item
	}
	msg := fmt.Sprintf("%s on %s: %s", what, where, describe(e.Err))
	if e.Message != "" && !strings.Contains(msg, e.Message) {
		msg += ": " + e.Message
	}
	if IsAuthorization(e.Err) && e.Needs != "" {
		msg += " (" + e.API + " needs " + e.Needs + ")"
	}
	return msg
}
func (e *AdminError) Unwrap() error { return e.Err }

// DescribeUserScram describes the SCRAM credentials of users, or of every
// user with nil. Any broker answers (each serves the credentials from its
// copy of the metadata log). The result is sorted by user; a user that
// failed is an entry with its Err.
func (c *Cluster) DescribeUserScram(ctx context.Context, users []string) ([]UserCredentials, error) {
	const api = "DescribeUserScramCredentials"
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	items := []string{"all users"}
	if users != nil {
		items = slices.Clone(users)
		for _, u := range users {
			ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
			ru.Name = u
			req.Users = append(req.Users, ru)
		}
	} else {
		// Every user is asked for with an empty list, not a null one:
		// Kafka (4.3) builds its authorization error answer from the
		// request's list and, on a null one, sends no answer at all, so
		// a user without DESCRIBE on the cluster waits for a timeout
		// instead of reading CLUSTER_AUTHORIZATION_FAILED.
		req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{}
	}
	raw, by, err := c.AnyBroker(ctx, api, items, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if users == nil && resp.ErrorCode == 0 && len(resp.Results) == 0 {
		// Kafka reads an empty list as every user; kfake (and, by the
		// protocol's letter, a broker) reads only null so. An empty
		// answer is asked again with null: allowed, as the first
		// answer was no authorization error.
		req.Users = nil
		if raw, by, err = c.AnyBroker(ctx, api, items, req); err != nil {
			return nil, err
		}
		resp = raw.(*kmsg.DescribeUserSCRAMCredentialsResponse)
	}
	if resp.ErrorCode != 0 {
		return nil, &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: usersItem(users), Needs: "DESCRIBE on the CLUSTER",
			Err: kerr.ErrorForCode(resp.ErrorCode), Message: deref(resp.ErrorMessage)}
	}
	out := make([]UserCredentials, 0, len(resp.Results))
	for _, r := range resp.Results {
		uc := UserCredentials{User: r.User}
		if r.ErrorCode != 0 {
			uc.Err = &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: "user " + r.User, Needs: "DESCRIBE on the CLUSTER",
				Err: kerr.ErrorForCode(r.ErrorCode), Message: deref(r.ErrorMessage)}
		}
		for _, ci := range r.CredentialInfos {
			uc.Creds = append(uc.Creds, ScramCredential{Mechanism: ScramMechanism(ci.Mechanism), Iterations: ci.Iterations})
		}
		slices.SortFunc(uc.Creds, func(a, b ScramCredential) int { return int(a.Mechanism) - int(b.Mechanism) })
		out = append(out, uc)
	}
	slices.SortFunc(out, func(a, b UserCredentials) int { return strings.Compare(a.User, b.User) })
	return out, nil
}

func usersItem(users []string) string {
	if users == nil {
		return "all users"
	}
	return "users " + strings.Join(users, ", ")
}

// IsNotFound reports whether err is Kafka's RESOURCE_NOT_FOUND (a user
// without SCRAM credentials, a credential that is not there).
func IsNotFound(err error) bool { return errors.Is(err, kerr.ResourceNotFound) }

// saltSize is the salt kql generates per credential: 24 random bytes, as
// Kafka's own ScramFormatter does (and as kadm does).
const saltSize = 24

// saltedPassword is SCRAM's SaltedPassword := Hi(password, salt, i), which
// is PBKDF2 with the mechanism's HMAC (RFC 5802).
func saltedPassword(m ScramMechanism, password string, iterations int32) (salt, salted []byte, err error) {
	var h func() hash.Hash
	var size int
	switch m {
	case ScramSHA256:
		h, size = sha256.New, sha256.Size
	case ScramSHA512:
		h, size = sha512.New, sha512.Size
	default:
		return nil, nil, fmt.Errorf("unknown SCRAM mechanism %v", m)
	}
	salt = make([]byte, saltSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, fmt.Errorf("generating a salt: %w", err)
	}
	salted, err = pbkdf2.Key(h, password, salt, int(iterations), size)
	return salt, salted, err
}

// AlterUserScram deletes and upserts SCRAM credentials in one request. It
// goes where admin requests are accepted (see Controller): any broker on
// KRaft, which forwards it to the active controller (KIP-590); the
// controller on kfake. Only salts and salted passwords are sent: the
// password itself never leaves this function, and no trace item or error
// holds it. The result is sorted by user.
func (c *Cluster) AlterUserScram(ctx context.Context, del []ScramDeletion, up []ScramUpsert) ([]UserResult, error) {
	const api = "AlterUserScramCredentials"
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	var items []string
	for _, d := range del {
		rd := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		rd.Name, rd.Mechanism = d.User, int8(d.Mechanism)
		req.Deletions = append(req.Deletions, rd)
		items = append(items, "delete "+d.User+" "+d.Mechanism.String())
	}
	for _, u := range up {
		salt, salted, err := saltedPassword(u.Mechanism, u.Password, u.Iterations)
		if err != nil {
			return nil, fmt.Errorf("%s for user %q: %w", api, u.User, err)
		}
		ru := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		ru.Name, ru.Mechanism, ru.Iterations, ru.Salt, ru.SaltedPassword = u.User, int8(u.Mechanism), u.Iterations, salt, salted
		req.Upsertions = append(req.Upsertions, ru)
		items = append(items, fmt.Sprintf("upsert %s %s iterations=%d", u.User, u.Mechanism, u.Iterations))
	}
	raw, by, err := c.Controller(ctx, api, items, req, func(r kmsg.Response) bool {
		for _, res := range r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results {
			if res.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.AlterUserSCRAMCredentialsResponse)
	out := make([]UserResult, 0, len(resp.Results))
	for _, r := range resp.Results {
		ur := UserResult{User: r.User}
		if r.ErrorCode != 0 {
			ur.Err = &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: "user " + r.User, Needs: "ALTER on the CLUSTER",
				Err: kerr.ErrorForCode(r.ErrorCode), Message: deref(r.ErrorMessage)}
		}
		out = append(out, ur)
	}
	slices.SortFunc(out, func(a, b UserResult) int { return strings.Compare(a.User, b.User) })
	return out, nil
}

// WaitUserScram waits (up to bound, or ctx) until every broker describes
// user's credential of mech with these iterations (or, with iterations 0,
// no such credential): brokers learn of a change from the metadata log one
// after the other, and a login on a broker that has not yet seen a new
// credential fails. A new password with the same iterations cannot be
// told apart this way. It reports whether they agreed in time.
func (c *Cluster) WaitUserScram(ctx context.Context, user string, mech ScramMechanism, iterations int32, bound time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	build := func() kmsg.Request {
		req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = user
		req.Users = append(req.Users, ru)
		return req
	}
	for {
		answers, failed, err := c.EveryBroker(ctx, "DescribeUserScramCredentials", build, nil)
		if err == nil && len(failed) == 0 {
			agree := true
			for _, a := range answers {
				var has int32
				for _, r := range a.Resp.(*kmsg.DescribeUserSCRAMCredentialsResponse).Results {
					for _, ci := range r.CredentialInfos {
						if r.User == user && ScramMechanism(ci.Mechanism) == mech {
							has = ci.Iterations
						}
					}
				}
				agree = agree && has == iterations
			}
			if agree {
				return true
			}
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return false
		}
	}
}

// AlterUserScramOne sends one AlterUserScramCredentials and returns the
// one user's error, or a request error; nil: done.
func (c *Cluster) AlterUserScramOne(ctx context.Context, del []ScramDeletion, up []ScramUpsert) error {
	results, err := c.AlterUserScram(ctx, del, up)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	if len(results) == 0 {
		return fmt.Errorf("AlterUserScramCredentials: the broker's answer named no user")
	}
	return errors.Join(errs...)
}
