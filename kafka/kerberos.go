package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/kerberos"
)

// Kerberos is how kql logs in to Kerberos for SASL GSSAPI: with a keytab
// (Krb5LoginModule useKeyTab=true) or from a ticket cache that kinit filled
// (useTicketCache=true). Paths are resolved by the caller.
type Kerberos struct {
	Service   string // sasl.kerberos.service.name; the broker's principal is Service/<host dialled>
	Principal string // user[/instance][@REALM]; with a cache, "" takes the cache's own
	Keytab    string // the keytab file; "" uses CCache
	CCache    string // a FILE ticket cache (kinit's), used when Keytab is ""
	Krb5Conf  string // the krb5.conf that names the realm's KDCs
	Krb5From  string // where Krb5Conf came from, for messages ("$KRB5_CONFIG", "/etc/krb5.conf")
}

// KerberosKind says which step of a Kerberos login failed.
type KerberosKind int

const (
	KerberosConfig         KerberosKind = iota + 1 // krb5.conf, keytab or ticket cache unreadable or unusable
	KerberosClientUnknown                          // the KDC has no such user principal
	KerberosServiceUnknown                         // the KDC has no principal for the broker (Service/host)
	KerberosWrongKey                               // PREAUTH_FAILED: the keytab's key is not the principal's
	KerberosKDCUnreachable                         // no KDC of the realm answered
	KerberosTicketExpired                          // the ticket cache's TGT has expired
	KerberosOther                                  // any other KDC or GSSAPI failure
)

// KerberosError is a Kerberos failure before the broker saw a token. It
// names the principal, the file it came from, the KDCs and, for a service
// ticket, the service principal asked for: that is what an operator checks.
type KerberosError struct {
	Kind      KerberosKind
	Principal string   // the client principal
	Source    string   // "keytab FILE" or "ticket cache FILE"
	SPN       string   // the service principal asked for (Service/host)
	Addr      string   // the broker dialled; "" before any
	KDCs      []string // the realm's KDCs from krb5.conf
	Krb5Conf  string   // the krb5.conf and where it came from
	Err       error
}

func (e *KerberosError) Error() string {
	kdcs := strings.Join(e.KDCs, ", ")
	if kdcs == "" {
		kdcs = "(none listed)"
	}
	switch e.Kind {
	case KerberosConfig:
		return fmt.Sprintf("Kerberos: %v", e.Err)
	case KerberosClientUnknown:
		return fmt.Sprintf("Kerberos: the KDC (%s) does not know the principal %s (from %s): check principal= in sasl.jaas.config and the realm", kdcs, e.Principal, e.Source)
	case KerberosServiceUnknown:
		host, _, _ := net.SplitHostPort(e.Addr)
		return fmt.Sprintf("Kerberos: the KDC (%s) has no service principal %s for broker %s: kql asks for <sasl.kerberos.service.name>/<the host it dials> as written in the bootstrap list and the brokers' advertised.listeners (no reverse DNS lookup, unlike Java's client): connect by the host name in the brokers' keytab (e.g. localhost instead of %s), or check sasl.kerberos.service.name",
			kdcs, e.SPN, e.Addr, host)
	case KerberosWrongKey:
		return fmt.Sprintf("Kerberos: the KDC (%s) refused the key of %s from %s (PREAUTH_FAILED): the keytab is stale or for another principal (the password was changed or the key re-generated since it was written): export a new keytab (kadmin ktadd -norandkey, or ktpass)", kdcs, e.Principal, e.Source)
	case KerberosKDCUnreachable:
		return fmt.Sprintf("Kerberos: no KDC of the realm answered (%s, from %s) while logging in as %s: %s", kdcs, e.Krb5Conf, e.Principal, netCause(e.Err))
	case KerberosTicketExpired:
		return fmt.Sprintf("Kerberos: the ticket of %s in %s has expired: run kinit again (kql reads the cache again at the next connection; a keytab, useKeyTab=true, logs in again by itself)", e.Principal, e.Source)
	}
	what := "logging in as " + e.Principal
	if e.SPN != "" {
		what = fmt.Sprintf("getting a ticket for %s (broker %s) as %s", e.SPN, e.Addr, e.Principal)
	}
	return fmt.Sprintf("Kerberos: %s (from %s, KDCs %s) failed: %v", what, e.Source, kdcs, e.Err)
}

func (e *KerberosError) Unwrap() error { return e.Err }

// netCause is the network part of gokrb5's error text (it flattens the
// chain into one string of every layer): from "dial" on, if it is there.
func netCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "dial "); i >= 0 {
		return msg[i:]
	}
	return msg
}

// Mechanism loads krb5.conf and the keytab or ticket cache now, so that a
// missing or unreadable file is said before anything is dialled, and returns
// the SASL GSSAPI mechanism. Its Close (kgo calls it when the client closes)
// ends the Kerberos client's renewal goroutine.
func (k Kerberos) Mechanism() (sasl.Mechanism, error) {
	if k.Service == "" {
		k.Service = "kafka"
	}
	cfgErr := func(format string, a ...any) error {
		return &KerberosError{Kind: KerberosConfig, Principal: k.Principal, Err: fmt.Errorf(format, a...)}
	}
	if k.Krb5Conf == "" {
		return nil, cfgErr("no krb5.conf: set $KRB5_CONFIG to the file that names your realm's KDCs, or create /etc/krb5.conf")
	}
	conf, err := config.Load(k.Krb5Conf)
	if err != nil {
		return nil, cfgErr("krb5.conf %s (%s): %v", k.Krb5Conf, k.Krb5From, err)
	}
	m := &krbMech{k: k, conf: conf}
	switch {
	case k.Keytab != "":
		m.source = "keytab " + k.Keytab
		kt, err := keytab.Load(k.Keytab)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, cfgErr("the keytab %s (keyTab= in sasl.jaas.config) does not exist", k.Keytab)
			}
			return nil, cfgErr("the keytab %s (keyTab= in sasl.jaas.config) cannot be read: %v", k.Keytab, err)
		}
		if k.Principal == "" {
			return nil, cfgErr(`useKeyTab=true needs principal="user@REALM" in sasl.jaas.config`)
		}
		user, realm := splitPrincipal(k.Principal, conf.LibDefaults.DefaultRealm)
		if realm == "" {
			return nil, cfgErr("principal %s names no realm and %s has no default_realm: write it as %s@REALM", k.Principal, k.Krb5Conf, k.Principal)
		}
		m.principal = user + "@" + realm
		m.cl = client.NewWithKeytab(user, realm, kt, conf, client.DisablePAFXFAST(true))
	default:
		m.source = "ticket cache " + k.CCache
		cc, err := credentials.LoadCCache(k.CCache)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, cfgErr("no ticket cache at %s: run kinit first, or give useKeyTab=true keyTab=\"...\" in sasl.jaas.config", k.CCache)
			}
			return nil, cfgErr("the ticket cache %s cannot be read (kql reads FILE caches, as kinit writes them by default): %v", k.CCache, err)
		}
		m.principal = strings.Join(cc.DefaultPrincipal.PrincipalName.NameString, "/") + "@" + cc.DefaultPrincipal.Realm
		if k.Principal != "" {
			user, realm := splitPrincipal(k.Principal, cc.DefaultPrincipal.Realm)
			if want := user + "@" + realm; want != m.principal {
				return nil, cfgErr("the ticket cache %s holds tickets of %s, not of principal=%s in sasl.jaas.config: kinit %s, or drop principal=", k.CCache, m.principal, k.Principal, want)
			}
		}
		cl, end, err := cacheClient(cc, conf)
		if err != nil {
			return nil, cfgErr("the ticket cache %s has no usable ticket-granting ticket for %s (%v): run kinit", k.CCache, m.principal, err)
		}
		m.cl, m.tgtEnd = cl, end
		m.fromCache = true
	}
	if r, ok := realmOf(conf, m.principal); ok {
		m.kdcs = r
	}
	m.mech = kerberos.Auth{Client: m.cl, Service: k.Service}.AsMechanismWithClose()
	return m, nil
}

// cacheClient is a Kerberos client on a ticket cache's TGT, and when that
// TGT ends (zero if the cache does not say).
func cacheClient(cc *credentials.CCache, conf *config.Config) (*client.Client, time.Time, error) {
	cl, err := client.NewFromCCache(cc, conf, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, time.Time{}, err
	}
	var end time.Time
	if tgt, ok := cc.GetEntry(types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST,
		NameString: []string{"krbtgt", cc.DefaultPrincipal.Realm}}); ok {
		end = tgt.EndTime
	}
	return cl, end, nil
}

// reloadCache reads the ticket cache file again: the user may have run
// kinit since kql loaded it (a REPL outlives a ticket). It switches to the
// file's tickets when they are of the same principal and not yet expired,
// and reports whether it did.
func (m *krbMech) reloadCache() bool {
	cc, err := credentials.LoadCCache(m.k.CCache)
	if err != nil {
		return false
	}
	if strings.Join(cc.DefaultPrincipal.PrincipalName.NameString, "/")+"@"+cc.DefaultPrincipal.Realm != m.principal {
		return false
	}
	cl, end, err := cacheClient(cc, m.conf)
	if err != nil || end.IsZero() || !time.Now().Before(end) {
		return false
	}
	// The old client is dropped, not destroyed: a connection may be
	// authenticating with it right now, and a client on a ticket cache
	// runs no renewal goroutine (gokrb5 starts one only after a login with
	// a keytab or password).
	m.cl, m.tgtEnd = cl, end
	m.mech = kerberos.Auth{Client: cl, Service: m.k.Service}.AsMechanismWithClose()
	return true
}

// Principal is the client principal this login uses, user@REALM.
func (m *krbMech) Principal() string { return m.principal }

type krbMech struct {
	k         Kerberos
	conf      *config.Config
	cl        *client.Client
	principal string
	source    string
	kdcs      []string
	fromCache bool
	tgtEnd    time.Time // the cached TGT's end, with a ticket cache
	mech      sasl.Mechanism

	mu sync.Mutex // one login at a time: connections to three brokers open at once
}

var _ sasl.ClosingMechanism = (*krbMech)(nil)

func (m *krbMech) Name() string { return "GSSAPI" }

func (m *krbMech) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.mech.(sasl.ClosingMechanism); ok {
		c.Close()
	}
}

// Authenticate logs in and gets the broker's service ticket itself first,
// so that a failure says which step failed (franz-go's mechanism then finds
// both in the client's cache and builds the GSSAPI token).
func (m *krbMech) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	mech, err := m.prepare(host)
	if err != nil {
		return nil, nil, err
	}
	return mech.Authenticate(ctx, host)
}

// prepare returns the mechanism to authenticate with (a ticket cache
// read again after kinit has a new one).
func (m *krbMech) prepare(addr string) (sasl.Mechanism, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ke := &KerberosError{Principal: m.principal, Source: m.source, Addr: addr, KDCs: m.kdcs,
		Krb5Conf: m.k.Krb5Conf + " (" + m.k.Krb5From + ")"}
	if m.fromCache {
		if !m.tgtEnd.IsZero() && time.Now().After(m.tgtEnd) && !m.reloadCache() {
			ke.Kind, ke.Err = KerberosTicketExpired, fmt.Errorf("expired at %s", m.tgtEnd.Format(time.RFC3339))
			return nil, ke
		}
	}
	if err := m.cl.AffirmLogin(); err != nil {
		ke.Kind, ke.Err = classifyKrb(err, false), err
		return nil, ke
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ke.SPN = m.k.Service + "/" + host
	if _, _, err := m.cl.GetServiceTicket(ke.SPN); err != nil {
		ke.Kind, ke.Err = classifyKrb(err, true), err
		return nil, ke
	}
	return m.mech, nil
}

// classifyKrb reads gokrb5's error, which carries the KDC's error code
// only as text (krberror flattens the chain).
func classifyKrb(err error, serviceTicket bool) KerberosKind {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "KDC_ERR_PREAUTH_FAILED"), strings.Contains(msg, "KRB_AP_ERR_BAD_INTEGRITY"):
		return KerberosWrongKey
	case strings.Contains(msg, "KDC_ERR_S_PRINCIPAL_UNKNOWN") && serviceTicket:
		return KerberosServiceUnknown
	case strings.Contains(msg, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		return KerberosClientUnknown
	case strings.Contains(msg, "Networking_Error"), strings.Contains(msg, "failed to communicate with KDC"),
		strings.Contains(msg, "connection refused"), strings.Contains(msg, "i/o timeout"):
		return KerberosKDCUnreachable
	case strings.Contains(msg, "TKT_EXPIRED"), strings.Contains(msg, "no valid existing session"):
		return KerberosTicketExpired
	}
	return KerberosOther
}

// splitPrincipal splits user[/instance][@REALM], with def as the realm
// when none is written.
func splitPrincipal(p, def string) (user, realm string) {
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, def
}

func realmOf(conf *config.Config, principal string) ([]string, bool) {
	_, realm := splitPrincipal(principal, "")
	for _, r := range conf.Realms {
		if r.Realm == realm {
			return r.KDC, true
		}
	}
	return nil, false
}
