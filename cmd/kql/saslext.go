package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kql-dev/kql/kafka"
)

// The SASL mechanisms whose credentials are not a user and a password:
// Kerberos (GSSAPI: a keytab or kinit's ticket cache) and AWS MSK IAM (AWS
// credentials). Both are read from Kafka's own client properties, as the
// Java client and aws-msk-iam-auth document them.

func init() {
	knownConfigKeys["sasl.kerberos.service.name"] = true
	knownConfigKeys["sasl.client.callback.handler.class"] = true
}

// kerberosSettings is what a GSSAPI client.properties said; the
// environment ($KRB5_CONFIG, $KRB5CCNAME) is read by resolveSettings.
type kerberosSettings struct {
	service     string // sasl.kerberos.service.name, default kafka
	principal   string
	keytab      string // resolved against the file's directory
	ticketCache string // ticketCache= in the JAAS entry
	useCache    bool   // no keytab: kinit's ticket cache

	krb kafka.Kerberos // filled by resolve
}

// desc is the banner's "as whom, with what".
func (k *kerberosSettings) desc() string {
	src := "keytab " + k.krb.Keytab
	if k.krb.Keytab == "" {
		src = "ticket cache " + k.krb.CCache
	}
	who := k.principal
	if who == "" {
		who = "the ticket cache's principal"
	}
	return fmt.Sprintf("as %s (GSSAPI, service %s, %s, krb5.conf %s)", who, k.krb.Service, src, k.krb.Krb5Conf)
}

// kerberosProps reads sasl.kerberos.service.name and the Krb5LoginModule
// entry of sasl.jaas.config.
func kerberosProps(path string, get func(string) (string, bool), rel func(string) string,
	bad func(key, format string, a ...any) error) (*kerberosSettings, error) {
	k := &kerberosSettings{service: "kafka"}
	if v, ok := get("sasl.kerberos.service.name"); ok && v != "" {
		k.service = v
	}
	jv, ok := get("sasl.jaas.config")
	if !ok {
		// Java would read a KafkaClient entry from a JAAS file; kql, like
		// librdkafka, then uses the ticket cache kinit filled.
		k.useCache = true
		return k, nil
	}
	j, err := parseJAAS(jv)
	if err != nil {
		return nil, bad("sasl.jaas.config", "%v", err)
	}
	if j.module != "Krb5LoginModule" {
		return nil, bad("sasl.jaas.config", "%s does not go with sasl.mechanism=GSSAPI (want com.sun.security.auth.module.Krb5LoginModule)", j.module)
	}
	if _, ok := get("sasl.kerberos.service.name"); !ok {
		if v := j.options["serviceName"]; v != "" {
			k.service = v
		}
	}
	k.principal = j.options["principal"]
	isTrue := func(name string) bool { return strings.EqualFold(j.options[name], "true") }
	switch {
	case isTrue("useKeyTab"):
		kt := j.options["keyTab"]
		if kt == "" {
			return nil, bad("sasl.jaas.config", `useKeyTab=true needs keyTab="/path/to/file.keytab"`)
		}
		if k.principal == "" {
			return nil, bad("sasl.jaas.config", `useKeyTab=true needs principal="user@REALM" (the keytab may hold several)`)
		}
		k.keytab = rel(kt)
	case isTrue("useTicketCache"):
		k.useCache = true
		if tc := j.options["ticketCache"]; tc != "" {
			k.ticketCache = rel(tc)
		}
	default:
		return nil, bad("sasl.jaas.config", `Krb5LoginModule needs useKeyTab=true keyTab="..." principal="..." or useTicketCache=true (after kinit): kql cannot prompt for a Kerberos password`)
	}
	return k, nil
}

// resolve finds krb5.conf ($KRB5_CONFIG, then /etc/krb5.conf) and the ticket
// cache (ticketCache=, $KRB5CCNAME, krb5.conf's default_ccache_name, then
// /tmp/krb5cc_<uid>), as MIT's tools do.
func (k *kerberosSettings) resolve(getenv func(string) string) error {
	k.krb = kafka.Kerberos{Service: k.service, Principal: k.principal, Keytab: k.keytab}
	if v := getenv("KRB5_CONFIG"); v != "" {
		// MIT takes a colon-separated list; gokrb5 reads one file: the first.
		first := strings.Split(v, ":")[0]
		if _, err := os.Stat(first); err != nil {
			return fmt.Errorf("Kerberos: $KRB5_CONFIG names %s: %v", first, err)
		}
		k.krb.Krb5Conf, k.krb.Krb5From = first, "$KRB5_CONFIG"
	} else if _, err := os.Stat("/etc/krb5.conf"); err == nil {
		k.krb.Krb5Conf, k.krb.Krb5From = "/etc/krb5.conf", "the default"
	} else {
		return fmt.Errorf("Kerberos: no krb5.conf: $KRB5_CONFIG is not set and /etc/krb5.conf does not exist; kql needs the file that names your realm's KDCs")
	}
	if !k.useCache {
		return nil
	}
	if k.ticketCache != "" {
		k.krb.CCache = k.ticketCache
		return nil
	}
	cc, from := getenv("KRB5CCNAME"), "$KRB5CCNAME"
	if cc == "" {
		cc, from = krb5DefaultCCache(k.krb.Krb5Conf, getenv), "default_ccache_name in "+k.krb.Krb5Conf
	}
	if cc == "" {
		k.krb.CCache = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
		return nil
	}
	typ, p, found := strings.Cut(cc, ":")
	switch {
	case !found:
		k.krb.CCache = cc
	case typ == "FILE":
		k.krb.CCache = p
	default:
		return fmt.Errorf("Kerberos: %s is %s, a %s cache; kql reads FILE caches only: run KRB5CCNAME=FILE:/tmp/krb5cc_kql kinit ... and kql with that KRB5CCNAME, or use a keytab (useKeyTab=true)", from, cc, typ)
	}
	return nil
}

// extMechanism builds the SASL mechanism of a Kerberos or MSK IAM login.
func (s *connSettings) extMechanism() (sasl.Mechanism, error) {
	switch {
	case s.kerberos != nil:
		return s.kerberos.krb.Mechanism()
	case s.msk != nil:
		return s.msk.mechanism(), nil
	}
	return nil, nil
}

// extSASLConnectedAs is the banner's part for these mechanisms ("" for others).
func (s *connSettings) extSASLConnectedAs() string {
	switch {
	case s.kerberos != nil:
		return s.kerberos.desc()
	case s.msk != nil:
		return s.msk.desc()
	}
	return ""
}

// extPrincipal is who the brokers' authorizer sees.
func (s *connSettings) extPrincipal() string {
	switch {
	case s.kerberos != nil:
		who := s.kerberos.principal
		if who == "" {
			who = "<the ticket cache's principal>"
		}
		return fmt.Sprintf("User:%s (SASL GSSAPI; the broker's sasl.kerberos.principal.to.local.rules may shorten it)", who)
	case s.msk != nil:
		return "the IAM identity of access key " + s.msk.creds.AccessKey + " (SASL AWS_MSK_IAM)"
	}
	return ""
}

// extSecurityMessage says what failed for these mechanisms ("" for others).
func (s *connSettings) extSecurityMessage(se *kafka.SecurityError) string {
	switch {
	case se.Kind == kafka.SASLKerberos:
		return se.Err.Error()
	case s.kerberos != nil && se.Kind == kafka.SASLAuthFailed:
		return fmt.Sprintf("Kerberos: broker %s refused kql's GSSAPI token (%s): the KDC gave kql a ticket for %s/<host>, which the broker could not accept: its keytab is stale (the service principal's keys changed since it was written) or holds another principal; the reason is in the broker's log (%s)",
			se.Addr, s.kerberos.desc(), s.kerberos.service, kafkaMessage(se.Err))
	case s.msk != nil && se.Kind == kafka.SASLAuthFailed:
		return fmt.Sprintf("AWS MSK IAM: broker %s refused the signed request of access key %s (credentials from %s): the key is wrong or expired, the clock is off, or the IAM policy does not allow kafka-cluster:Connect: %s",
			se.Addr, s.msk.creds.AccessKey, s.msk.creds.Source, kafkaMessage(se.Err))
	}
	return ""
}

// resolveExtSASL reads what these mechanisms take from the environment.
func (s *connSettings) resolveExtSASL(getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	switch {
	case s.kerberos != nil:
		s.saslUser = s.kerberos.principal
		return s.kerberos.resolve(getenv)
	case s.msk != nil:
		return s.msk.resolve(getenv)
	}
	return nil
}
