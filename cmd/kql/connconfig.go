package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/oauth"
)

// connSettings is how to reach the cluster, merged from (weakest first) the
// built-in default, $KQL_BOOTSTRAP, --command-config and the flags.
type connSettings struct {
	bootstrap []string
	clientID  string
	// propsFile names, in hints, where properties such as
	// security.protocol go: "--command-config", or the cluster profile
	// connected with (`cluster profile "prod" (FILE)`).
	propsFile string

	tls bool
	tlsSettings
	saslMechanism string
	saslUser      string
	saslPassword  string
	havePassword  bool
	// passwordSource says where the password came from, for messages:
	// "$KQL_SASL_PASSWORD", "sasl.jaas.config in FILE" or "the prompt".
	passwordSource string
	// skipVerifyIgnored names a CA setting --tls-insecure-skip-verify made
	// moot (from the properties file; with --tls-ca it is a usage error).
	skipVerifyIgnored string
	// overridden names the password source $KQL_SASL_PASSWORD replaced.
	overridden string

	// registry is the schema registry's, when one is configured.
	registry registrySettings

	// oauth is OAUTHBEARER's settings (sasl.mechanism=OAUTHBEARER);
	// oauthSource, made by kafkaConfig, fetches and renews the tokens.
	oauth       *oauth.Config
	oauthSource *oauth.Source
	// kerberos and msk are set for SASL GSSAPI and AWS_MSK_IAM, whose
	// credentials are not a user and password (saslext.go).
	kerberos *kerberosSettings
	msk      *mskSettings
}

// tlsSettings is one TLS client's settings: the brokers' or the schema
// registry's, read by the same rules (tlsProps).
type tlsSettings struct {
	// keyPrefix is what the properties of this client start with: "" for
	// the brokers, "schema.registry." for the registry (for messages).
	keyPrefix    string
	caFile       string
	caPEM        []byte // ssl.truststore.certificates: the CAs inline, when no caFile
	caSource     string // where the trusted CAs come from, for messages: "--tls-ca ca.pem", ...
	certFile     string
	certPEM      []byte // ssl.keystore.certificate.chain, inline
	keyPEM       []byte // ssl.keystore.key, inline
	keyFile      string
	keystoreFile string // a PEM file holding both certificate and key (ssl.keystore.type=PEM)
	serverName   string
	skipVerify   bool
	noHostVerify bool // ssl.endpoint.identification.algorithm= (empty): verify the chain, not the host name
}

// commandConfig is what a --command-config file or a cluster profile said.
type commandConfig struct {
	path     string
	label    string // "--command-config" or `cluster profile "prod"`, for messages
	settings connSettings
	protocol string // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; "" when not given
	jaasUser string
	warnings []string

	// The kql.* keys (kqlprops.go): the ones kql acts on, and every kql.*
	// key as written, for features that read their own (kql.schema.*).
	readOnly    bool   // kql.readonly=true
	promptColor string // kql.prompt.color, checked
	kql         map[string]property
	local       localProps // kql.schema.*, kql.proto.*
}

// knownConfigKeys are the client properties kql acts on. Every other key is
// named in one warning: silently ignoring a setting someone relies on
// (say, a timeout) is worse than a line of noise.
var knownConfigKeys = map[string]bool{
	"bootstrap.servers":                     true,
	"client.id":                             true,
	"security.protocol":                     true,
	"sasl.mechanism":                        true,
	"sasl.jaas.config":                      true,
	"ssl.ca.location":                       true,
	"ssl.certificate.location":              true,
	"ssl.key.location":                      true,
	"ssl.truststore.type":                   true,
	"ssl.truststore.location":               true,
	"ssl.truststore.password":               true, // meaningless for PEM, accepted
	"ssl.keystore.type":                     true,
	"ssl.keystore.location":                 true,
	"ssl.keystore.password":                 true,
	"ssl.truststore.certificates":           true,
	"ssl.keystore.certificate.chain":        true,
	"ssl.keystore.key":                      true,
	"ssl.key.password":                      true,
	"ssl.endpoint.identification.algorithm": true,
}

// pemConvertHint says how to turn a JKS or PKCS12 store into PEM: %[1]s is
// the store, %[2]s the properties' prefix, %[3]s the flag that takes a CA.
const pemConvertHint = `convert it to PEM, e.g.:
  keytool -importkeystore -srckeystore %[1]s -destkeystore store.p12 -deststoretype PKCS12
  openssl pkcs12 -in store.p12 -nokeys -out ca.pem        # certificates (truststore)
  openssl pkcs12 -in store.p12 -nodes -out client.pem     # certificate and key (keystore)
then set %[2]sssl.truststore.type=PEM and %[2]sssl.truststore.location=ca.pem (or use %[3]s ca.pem)`

// loadCommandConfig reads a Kafka client properties file.
func loadCommandConfig(path string) (*commandConfig, error) {
	return loadConfigFile(path, "--command-config")
}

// loadConfigFile reads a client properties file; label names it in
// messages ("--command-config", or `cluster profile "prod"`), before its path.
func loadConfigFile(path, label string) (*commandConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	defer f.Close()
	props, err := parseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, path, err)
	}
	kv := map[string]property{}
	for _, p := range props {
		kv[p.key] = p
	}
	cc := &commandConfig{path: path, label: label, kql: map[string]property{}}
	if w := configSecretWarning(label, path, props); w != "" {
		cc.warnings = append(cc.warnings, w)
	}
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("%s %s:%d: %s: %s", label, path, kv[key].line, key, fmt.Sprintf(format, a...))
	}
	get := func(key string) (string, bool) {
		p, ok := kv[key]
		return strings.TrimSpace(p.value), ok
	}
	var unknown []string
	for k := range kv {
		if !knownKey(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		cc.warnings = append(cc.warnings, fmt.Sprintf("%s %s: ignoring %s kql does not use: %s",
			label, path, plural(len(unknown), "a key", "keys"), strings.Join(unknown, ", ")))
	}
	s := &cc.settings
	if v, ok := get("bootstrap.servers"); ok {
		if s.bootstrap = splitBootstrap(v); len(s.bootstrap) == 0 {
			return nil, bad("bootstrap.servers", "empty address list")
		}
	}
	if v, ok := get("client.id"); ok && v != "" {
		s.clientID = v
	}
	if v, ok := get("security.protocol"); ok {
		cc.protocol = strings.ToUpper(v)
		switch cc.protocol {
		case "PLAINTEXT":
		case "SSL":
			s.tls = true
		case "SASL_PLAINTEXT":
		case "SASL_SSL":
			s.tls = true
		default:
			return nil, bad("security.protocol", "unknown protocol %q (want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", v)
		}
	}
	if strings.HasPrefix(cc.protocol, "SASL_") && isOAuthBearer(get) {
		o, err := oauthProps(path, get, bad)
		if err != nil {
			return nil, err
		}
		s.saslMechanism, s.oauth = "OAUTHBEARER", o
	}
	if strings.HasPrefix(cc.protocol, "SASL_") && s.oauth == nil {
		mech, ok := get("sasl.mechanism")
		if !ok {
			return nil, bad("security.protocol", "%s needs sasl.mechanism (kql does not assume Kafka's default, GSSAPI): set sasl.mechanism=PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI or AWS_MSK_IAM", cc.protocol)
		}
		mech = strings.ToUpper(mech)
		switch mech {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "AWS_MSK_IAM":
		default:
			return nil, bad("sasl.mechanism", "%q is not supported (want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI or AWS_MSK_IAM)", mech)
		}
		s.saslMechanism = mech
	}
	dir := filepath.Dir(path)
	rel := func(p string) string { // paths in the file are relative to the file
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	switch s.saslMechanism {
	case "GSSAPI":
		if s.kerberos, err = kerberosProps(path, get, rel, bad); err != nil {
			return nil, err
		}
	case "AWS_MSK_IAM":
		if s.msk, err = mskProps(get, bad); err != nil {
			return nil, err
		}
	}
	if mech := s.saslMechanism; mech != "" && s.kerberos == nil && s.msk == nil && s.oauth == nil {
		jv, ok := get("sasl.jaas.config")
		if !ok {
			return nil, bad("sasl.mechanism", "%s needs sasl.jaas.config with username and password", mech)
		}
		j, err := parseJAAS(jv)
		if err != nil {
			return nil, bad("sasl.jaas.config", "%v", err)
		}
		want := "PlainLoginModule"
		if strings.HasPrefix(mech, "SCRAM") {
			want = "ScramLoginModule"
		}
		if j.module != want {
			return nil, bad("sasl.jaas.config", "%s does not go with sasl.mechanism=%s (want %s)", j.module, mech, want)
		}
		user, uok := j.options["username"]
		pass, pok := j.options["password"]
		if !uok || !pok {
			return nil, bad("sasl.jaas.config", `want username="..." and password="..."`)
		}
		s.saslUser, s.saslPassword, s.havePassword = user, pass, true
		s.passwordSource = "sasl.jaas.config in " + path
		cc.jaasUser = user
	}
	if s.tls {
		if err := tlsProps(&s.tlsSettings, "", "--tls-ca", path, get, rel, bad); err != nil {
			return nil, err
		}
	}
	w, err := registryProps(&s.registry, label, path, get, rel, bad)
	if err != nil {
		return nil, err
	}
	if cc.local, err = readLocalProps(props, rel, bad); err != nil {
		return nil, err
	}
	cc.warnings = append(cc.warnings, w...)
	if err := kqlProps(cc, kv, bad); err != nil {
		return nil, err
	}
	return cc, nil
}

// tlsProps reads the ssl.* properties of one TLS client into t: the
// brokers' (prefix "") or the schema registry's (prefix "schema.registry.",
// as Confluent's clients take them). caFlag is the flag that gives the CAs
// instead, for the hint that converts a JKS or PKCS12 store.
func tlsProps(t *tlsSettings, prefix, caFlag, path string, get func(string) (string, bool), rel func(string) string,
	bad func(key, format string, a ...any) error) error {
	k := func(name string) string { return prefix + name }
	t.keyPrefix = prefix
	if v, ok := get(k("ssl.ca.location")); ok {
		t.caFile = rel(v)
		t.caSource = k("ssl.ca.location") + " " + t.caFile
	}
	if v, ok := get(k("ssl.truststore.certificates")); ok && v != "" {
		// Kafka's inline PEM trust store (ssl.truststore.type=PEM).
		if typ, _ := get(k("ssl.truststore.type")); typ != "" && !strings.EqualFold(typ, "PEM") {
			return bad(k("ssl.truststore.certificates"), "needs %s=PEM, got %q", k("ssl.truststore.type"), typ)
		}
		pemText := []byte(inlinePEM(v))
		if !x509.NewCertPool().AppendCertsFromPEM(pemText) {
			return bad(k("ssl.truststore.certificates"), "no PEM certificate in it (want -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)")
		}
		t.caPEM = pemText
		t.caSource = k("ssl.truststore.certificates") + " in " + path
	}
	if v, ok := get(k("ssl.truststore.location")); ok && v != "" {
		typ, _ := get(k("ssl.truststore.type"))
		loc := rel(v)
		if err := checkPEMStore(loc, typ, prefix, caFlag); err != nil {
			return bad(k("ssl.truststore.location"), "%v", err)
		}
		t.caFile = loc
		t.caSource = k("ssl.truststore.location") + " " + loc
	}
	if v, ok := get(k("ssl.certificate.location")); ok {
		t.certFile = rel(v)
	}
	if v, ok := get(k("ssl.key.location")); ok {
		t.keyFile = rel(v)
	}
	if (t.certFile == "") != (t.keyFile == "") {
		return bad(k("ssl.certificate.location"), "%s and %s go together", k("ssl.certificate.location"), k("ssl.key.location"))
	}
	if v, ok := get(k("ssl.keystore.location")); ok && v != "" {
		typ, _ := get(k("ssl.keystore.type"))
		loc := rel(v)
		if err := checkPEMStore(loc, typ, prefix, caFlag); err != nil {
			return bad(k("ssl.keystore.location"), "%v", err)
		}
		t.keystoreFile = loc
	}
	chain, okc := get(k("ssl.keystore.certificate.chain"))
	key, okk := get(k("ssl.keystore.key"))
	if okc != okk {
		return bad(k("ssl.keystore.certificate.chain"), "%s and %s go together", k("ssl.keystore.certificate.chain"), k("ssl.keystore.key"))
	}
	if okc && chain != "" {
		if _, ok := get(k("ssl.key.password")); ok {
			return bad(k("ssl.key.password"), "kql reads unencrypted PEM keys only: decrypt it with `openssl pkcs8 -in key.pem -out plain.pem` and drop %s", k("ssl.key.password"))
		}
		t.certPEM, t.keyPEM = []byte(inlinePEM(chain)), []byte(inlinePEM(key))
		if _, err := tls.X509KeyPair(t.certPEM, t.keyPEM); err != nil {
			return bad(k("ssl.keystore.certificate.chain"), "with %s: not a PEM certificate and unencrypted key that belong together (%v)", k("ssl.keystore.key"), err)
		}
	}
	if v, ok := get(k("ssl.endpoint.identification.algorithm")); ok && v == "" {
		t.noHostVerify = true
	}
	return nil
}

// inlinePEM restores the line breaks of a PEM block written on one
// properties line (Kafka accepts "-----BEGIN CERTIFICATE----- MIIB... -----END
// CERTIFICATE-----" with spaces, which is how a continued line reads back).
func inlinePEM(v string) string {
	var b strings.Builder
	rest := v
	for {
		i := strings.Index(rest, "-----BEGIN ")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i+11:], "-----")
		if j < 0 {
			break
		}
		header := rest[i : i+11+j+5]
		body := rest[i+len(header):]
		k := strings.Index(body, "-----END ")
		if k < 0 {
			break
		}
		e := strings.Index(body[k+9:], "-----")
		if e < 0 {
			break
		}
		footer := body[k : k+9+e+5]
		b.WriteString(header + "\n")
		for _, f := range strings.Fields(body[:k]) {
			b.WriteString(f + "\n")
		}
		b.WriteString(footer + "\n")
		rest = body[k+len(footer):]
	}
	return b.String()
}

// configSecretWarning returns a warning if the properties file holds a
// secret and others can read it, as ssh does for private keys.
func configSecretWarning(label, path string, props []property) string {
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	var secrets []string
	for _, p := range props {
		if secretKey(p) {
			secrets = append(secrets, p.key)
		}
	}
	if len(secrets) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s is readable by other users (mode %04o) and holds a secret (%s): run chmod 600 %s",
		label, path, st.Mode().Perm(), strings.Join(secrets, ", "), path)
}

// checkPEMStore accepts a PEM store and refuses a JKS or PKCS12 one with the
// commands that convert it. Kafka's default store type is JKS, so an untyped
// store is sniffed. prefix and caFlag name the settings in the hint.
func checkPEMStore(path, typ, prefix, caFlag string) error {
	switch strings.ToUpper(typ) {
	case "PEM":
		return nil
	case "", "JKS", "PKCS12":
	default:
		return fmt.Errorf("store type %q is not supported: kql reads PEM files", typ)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if typ == "" && bytes.Contains(data, []byte("-----BEGIN ")) {
		return nil
	}
	kind := strings.ToUpper(typ)
	if kind == "" {
		kind = "JKS"
	}
	return fmt.Errorf("%s is a %s store; kql reads PEM only: %s", path, kind, fmt.Sprintf(pemConvertHint, path, prefix, caFlag))
}

func splitBootstrap(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// resolveSettings merges defaults, environment, command config and flags.
// promptPassword is called only when a password is needed and its variable
// ($KQL_SASL_PASSWORD, $KQL_SCHEMA_REGISTRY_PASSWORD) is not set; what
// names whose password it is ("SASL user"); it returns an error off a
// terminal.
func resolveSettings(o *options, getenv func(string) string, cc *commandConfig, promptPassword func(what, user, env string) (string, error)) (*connSettings, error) {
	s := connSettings{bootstrap: []string{"localhost:9092"}, clientID: "kql", propsFile: "--command-config"}
	if cc != nil && cc.label != "" && cc.label != "--command-config" {
		s.propsFile = fmt.Sprintf("%s (%s)", cc.label, cc.path)
	}
	if env := splitBootstrap(getenv("KQL_BOOTSTRAP")); len(env) > 0 {
		s.bootstrap = env
	}
	if cc != nil {
		f := cc.settings
		if len(f.bootstrap) > 0 {
			s.bootstrap = f.bootstrap
		}
		if f.clientID != "" {
			s.clientID = f.clientID
		}
		s.tls, s.tlsSettings = f.tls, f.tlsSettings
		s.saslMechanism, s.saslUser, s.saslPassword, s.havePassword, s.passwordSource = f.saslMechanism, f.saslUser, f.saslPassword, f.havePassword, f.passwordSource
		s.registry = f.registry
		s.oauth = f.oauth
		s.kerberos, s.msk = f.kerberos, f.msk
	}
	if o.bootstrapSet {
		s.bootstrap = splitBootstrap(o.bootstrap)
	}
	if o.clientIDSet {
		s.clientID = o.clientID
	}
	if o.tls {
		s.tls = true
	}
	if o.tlsCA != "" {
		s.caFile, s.caPEM, s.caSource = o.tlsCA, nil, "--tls-ca "+o.tlsCA
	}
	if o.tlsCert != "" {
		s.certFile, s.keyFile, s.keystoreFile, s.certPEM, s.keyPEM = o.tlsCert, o.tlsKey, "", nil, nil
	}
	if o.tlsServerName != "" {
		s.serverName = o.tlsServerName
	}
	if o.tlsInsecureSkipVerify {
		// Never silently: --tls-ca with it is refused by parseFlags; a CA
		// from the file is named in the warning every session prints.
		s.skipVerify = true
		s.skipVerifyIgnored = s.caSource
	}
	if o.saslMechanism != "" {
		s.saslMechanism = o.saslMechanism
		s.kerberos, s.msk = nil, nil
	}
	if o.saslUser != "" {
		if o.saslUser != s.saslUser {
			s.saslPassword, s.havePassword, s.passwordSource = "", false, ""
		}
		s.saslUser = o.saslUser
	}
	if s.saslMechanism != "OAUTHBEARER" {
		s.oauth = nil // --sasl-mechanism replaced the file's OAUTHBEARER
	}
	if err := s.resolveExtSASL(getenv); err != nil {
		return nil, err
	}
	if s.saslMechanism != "" && s.saslUser == "" && s.kerberos == nil && s.msk == nil && s.oauth == nil {
		return nil, usagef("--sasl-mechanism %s needs --sasl-user (or sasl.jaas.config in --command-config)", s.saslMechanism)
	}
	if s.saslUser != "" && s.saslMechanism == "" {
		return nil, usagef("--sasl-user needs --sasl-mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
	if s.saslMechanism != "" && s.oauth == nil && s.kerberos == nil && s.msk == nil {
		// Precedence: $KQL_SASL_PASSWORD, then the file's sasl.jaas.config,
		// then a prompt. The source is named in the banner and in any
		// authentication error, so a stale variable is never silent.
		if pw, ok := lookupEnv(getenv, "KQL_SASL_PASSWORD"); ok {
			if s.havePassword && pw != s.saslPassword {
				s.overridden = s.passwordSource
			}
			s.saslPassword, s.havePassword, s.passwordSource = pw, true, "$KQL_SASL_PASSWORD"
		}
		if !s.havePassword {
			pw, err := promptPassword("SASL user", s.saslUser, "KQL_SASL_PASSWORD")
			if err != nil {
				return nil, err
			}
			s.saslPassword, s.havePassword, s.passwordSource = pw, true, "the password prompt"
		}
	}
	if err := resolveRegistry(&s, o, getenv, promptPassword); err != nil {
		return nil, err
	}
	return &s, nil
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	if getenv == nil {
		return "", false
	}
	v := getenv(name)
	if v == "" {
		// An empty password is indistinguishable from an unset one through
		// getenv; treat both as unset so the user is asked.
		return "", false
	}
	return v, true
}

// kafkaConfig turns settings into the kafka package's Config.
func (s *connSettings) kafkaConfig() (kafka.Config, error) {
	cfg := kafka.Config{Bootstrap: s.bootstrap, ClientID: s.clientID}
	if s.tls {
		tc, err := s.tlsConfig()
		if err != nil {
			return cfg, err
		}
		cfg.TLS = tc
	}
	if s.oauth != nil {
		if s.oauthSource == nil {
			s.oauthSource = oauth.New(*s.oauth)
		}
		cfg.SASL = s.oauthSource.Mechanism()
	} else if s.kerberos != nil || s.msk != nil {
		m, err := s.extMechanism()
		if err != nil {
			return cfg, err
		}
		cfg.SASL = m
	} else if s.saslMechanism != "" {
		m, err := saslMechanism(s.saslMechanism, s.saslUser, s.saslPassword)
		if err != nil {
			return cfg, err
		}
		cfg.SASL = m
	}
	return cfg, nil
}

func saslMechanism(name, user, pass string) (sasl.Mechanism, error) {
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("unknown SASL mechanism %q", name)
}

func (s *tlsSettings) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.serverName, InsecureSkipVerify: s.skipVerify}
	if s.caFile != "" && !s.skipVerify {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificates in it", s.caFile)
		}
		tc.RootCAs = pool
	} else if len(s.caPEM) > 0 && !s.skipVerify {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.caPEM)
		tc.RootCAs = pool
	}
	switch {
	case len(s.certPEM) > 0:
		cert, err := tls.X509KeyPair(s.certPEM, s.keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate (%sssl.keystore.certificate.chain, %[1]sssl.keystore.key): %w", s.keyPrefix, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case s.certFile != "":
		cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s / key %s: %w", s.certFile, s.keyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case s.keystoreFile != "":
		pem, err := os.ReadFile(s.keystoreFile)
		if err != nil {
			return nil, fmt.Errorf("TLS keystore: %w", err)
		}
		cert, err := tls.X509KeyPair(pem, pem)
		if err != nil {
			return nil, fmt.Errorf("TLS keystore %s (want one PEM file with the certificate and an unencrypted key): %w", s.keystoreFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if s.noHostVerify && !s.skipVerify {
		// Verify the chain as usual but not the host name, which is what
		// Kafka's ssl.endpoint.identification.algorithm= (empty) means.
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return tc, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
