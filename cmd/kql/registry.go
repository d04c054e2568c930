package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kql-dev/kql/schema"
)

// The schema registry's settings: --schema-registry, --schema-registry-user
// (password from $KQL_SCHEMA_REGISTRY_PASSWORD or a prompt) and
// --schema-registry-ca, or the properties Confluent's clients take in the
// --command-config file. Like the Kafka settings, flags override the file,
// and no message shows a password, a token or a URL's user info.

// registryPasswordEnv holds the registry's basic-auth password.
const registryPasswordEnv = "KQL_SCHEMA_REGISTRY_PASSWORD"

// registrySettings is how to reach the schema registry.
type registrySettings struct {
	urls      []string
	urlSource string // for messages: "--schema-registry" or "schema.registry.url in FILE"
	fileLabel string // the file its keys came from: "--command-config" or `cluster profile "prod"`

	user           string
	password       string
	havePassword   bool
	passwordSource string // "$KQL_SCHEMA_REGISTRY_PASSWORD", "basic.auth.user.info in FILE", ...
	overridden     string // the password source $KQL_SCHEMA_REGISTRY_PASSWORD replaced
	userFromURL    bool   // the user and password came with the file's URL (credentials source URL)
	// inheritSASL: basic.auth.credentials.source=SASL_INHERIT, the Kafka
	// SASL user and password, once those are resolved.
	inheritSASL bool

	token       string // bearer.auth.token
	tokenSource string

	tls tlsSettings
}

// registryKeys are the registry's properties besides schema.registry.ssl.*
// (those are the Kafka ssl.* keys with the prefix: see knownKey).
var registryKeys = map[string]bool{
	"schema.registry.url":                            true,
	"basic.auth.credentials.source":                  true,
	"basic.auth.user.info":                           true,
	"schema.registry.basic.auth.credentials.source":  true,
	"schema.registry.basic.auth.user.info":           true,
	"bearer.auth.credentials.source":                 true,
	"bearer.auth.token":                              true,
	"schema.registry.bearer.auth.credentials.source": true,
	"schema.registry.bearer.auth.token":              true,
}

const registryTLSPrefix = "schema.registry."

// knownKey reports whether kql acts on a properties key.
func knownKey(k string) bool {
	if knownConfigKeys[k] || registryKeys[k] || kqlKeys[k] || localSchemaKey(k) {
		return true
	}
	rest, ok := strings.CutPrefix(k, registryTLSPrefix)
	return ok && strings.HasPrefix(rest, "ssl.") && knownConfigKeys[rest]
}

// secretKey reports whether a property's value is (or may hold) a secret.
func secretKey(p property) bool {
	k := strings.TrimPrefix(p.key, registryTLSPrefix)
	switch k {
	case "sasl.jaas.config":
		return strings.Contains(p.value, "password") || strings.Contains(p.value, "clientSecret")
	case "ssl.keystore.key", "ssl.key.password", "basic.auth.user.info", "bearer.auth.token", "sasl.oauthbearer.client.credentials.client.secret":
		return true
	case "url": // schema.registry.url with user info
		return p.key == "schema.registry.url" && strings.Contains(p.value, "@")
	}
	return false
}

// redactURL hides the user info of a URL, parsable or not: everything
// between the scheme and the last '@'.
func redactURL(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return raw[:start] + "***@" + raw[at+1:]
}

// registryURL checks one schema registry URL and splits off the user info
// it may hold (Confluent's basic.auth.credentials.source=URL). The URL
// returned has none, so it can be shown; an error never quotes user info.
func registryURL(raw string) (string, *url.Userinfo, error) {
	raw = strings.TrimSpace(raw)
	shown := redactURL(raw)
	if !strings.Contains(raw, "://") {
		return "", nil, fmt.Errorf("%q has no scheme: want http://%s or https://%s", shown, shown, shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, fmt.Errorf("%q is not a URL (want http://host:port or https://host:port)", shown)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", nil, fmt.Errorf("%q: the scheme must be http or https, not %q", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return "", nil, fmt.Errorf("%q has no host (want %s://host:port)", shown, scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", nil, fmt.Errorf("%q: a registry URL has no query or fragment (?..., #...)", shown)
	}
	user := u.User
	u.User, u.Scheme = nil, scheme
	return strings.TrimRight(u.String(), "/"), user, nil
}

// registryProps reads the registry's properties of a --command-config file
// or a cluster profile (label names which, for messages):
// schema.registry.url, the basic.auth.* and bearer.auth.* credentials (also
// with the schema.registry. prefix Confluent accepts) and the
// schema.registry.ssl.* TLS settings.
func registryProps(r *registrySettings, label, path string, get func(string) (string, bool), rel func(string) string,
	bad func(key, format string, a ...any) error) (warnings []string, err error) {
	r.fileLabel = label
	// either returns the first of a key and its prefixed spelling given.
	either := func(key string) (string, string, bool) {
		for _, k := range []string{key, "schema.registry." + key} {
			if v, ok := get(k); ok {
				return k, v, true
			}
		}
		return key, "", false
	}
	var urlUser *url.Userinfo
	if v, ok := get("schema.registry.url"); ok {
		for _, part := range strings.Split(v, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			u, user, err := registryURL(part)
			if err != nil {
				return nil, bad("schema.registry.url", "%v", err)
			}
			if user != nil {
				if urlUser != nil && urlUser.String() != user.String() {
					return nil, bad("schema.registry.url", "the URLs hold different user info (not shown); give the user and password once, in basic.auth.user.info")
				}
				urlUser = user
			}
			r.urls = append(r.urls, u)
		}
		if len(r.urls) == 0 {
			return nil, bad("schema.registry.url", "empty URL list (want http://host:port[,http://host:port...])")
		}
		r.urlSource = "schema.registry.url in " + path
	}

	srcKey, src, _ := either("basic.auth.credentials.source")
	infoKey, info, haveInfo := either("basic.auth.user.info")
	fromInfo := func() error {
		user, pass, ok := strings.Cut(info, ":")
		if !ok || user == "" {
			return bad(infoKey, "want user:password (the value is not shown: it holds a password)")
		}
		r.user, r.password, r.havePassword = user, pass, true
		r.passwordSource = infoKey + " in " + path
		return nil
	}
	fromURL := func() {
		pass, _ := urlUser.Password()
		r.user, r.password, r.havePassword, r.userFromURL = urlUser.Username(), pass, true, true
		r.passwordSource = "the user info of schema.registry.url in " + path
	}
	switch strings.ToUpper(src) {
	case "":
		// Confluent's default source is URL, which quietly ignores
		// basic.auth.user.info; kql takes what was given.
		switch {
		case haveInfo:
			if err := fromInfo(); err != nil {
				return nil, err
			}
		case urlUser != nil:
			fromURL()
		}
	case "USER_INFO":
		if !haveInfo {
			return nil, bad(srcKey, "USER_INFO needs basic.auth.user.info=user:password")
		}
		if err := fromInfo(); err != nil {
			return nil, err
		}
	case "URL":
		if urlUser == nil {
			return nil, bad(srcKey, "URL needs the user and password in schema.registry.url (https://user:password@host:port), or use USER_INFO with basic.auth.user.info")
		}
		fromURL()
		if haveInfo {
			warnings = append(warnings, fmt.Sprintf("%s %s: %s is not used: %s=URL takes the user and password from schema.registry.url", label, path, infoKey, srcKey))
		}
	case "SASL_INHERIT":
		r.inheritSASL = true
	default:
		return nil, bad(srcKey, "%q is not supported (want USER_INFO, URL or SASL_INHERIT)", src)
	}

	bsrcKey, bsrc, _ := either("bearer.auth.credentials.source")
	tokKey, tok, haveTok := either("bearer.auth.token")
	switch strings.ToUpper(bsrc) {
	case "", "STATIC_TOKEN":
		if haveTok && tok != "" {
			r.token, r.tokenSource = tok, tokKey+" in "+path
		} else if bsrc != "" {
			return nil, bad(bsrcKey, "STATIC_TOKEN needs bearer.auth.token")
		}
	default:
		return nil, bad(bsrcKey, "%q is not supported: kql sends a static token (STATIC_TOKEN with bearer.auth.token)", bsrc)
	}
	if r.token != "" && (r.user != "" || r.inheritSASL) {
		return nil, bad(tokKey, "give either basic authentication or a bearer token for the schema registry, not both")
	}
	if err := tlsProps(&r.tls, registryTLSPrefix, "--schema-registry-ca", path, get, rel, bad); err != nil {
		return nil, err
	}
	return warnings, nil
}

// resolveRegistry merges the registry's flags into the file's settings in
// s.registry; it runs after the Kafka settings are resolved (SASL_INHERIT
// takes their user and password).
func resolveRegistry(s *connSettings, o *options, getenv func(string) string, promptPassword func(what, user, env string) (string, error)) error {
	r := &s.registry
	if len(o.schemaRegistry) > 0 {
		if r.userFromURL { // they went with the file's URL
			r.user, r.password, r.havePassword, r.passwordSource, r.userFromURL = "", "", false, "", false
		}
		r.urls, r.urlSource = o.schemaRegistry, "--schema-registry"
	}
	if o.schemaRegistryCA != "" {
		r.tls.caFile, r.tls.caPEM, r.tls.caSource = o.schemaRegistryCA, nil, "--schema-registry-ca "+o.schemaRegistryCA
	}
	if o.schemaRegistryUser != "" {
		if o.schemaRegistryUser != r.user || r.inheritSASL {
			r.password, r.havePassword, r.passwordSource = "", false, ""
		}
		r.user, r.inheritSASL, r.token, r.tokenSource = o.schemaRegistryUser, false, "", ""
	}
	if len(r.urls) == 0 {
		switch {
		case o.schemaRegistryUser != "":
			return usagef("--schema-registry-user needs --schema-registry URL (or schema.registry.url in %s)", r.inFile())
		case o.schemaRegistryCA != "":
			return usagef("--schema-registry-ca needs --schema-registry URL (or schema.registry.url in %s)", r.inFile())
		}
		*r = registrySettings{} // credentials without a registry: nothing to use them on
		return nil
	}
	if r.inheritSASL {
		if s.oauth != nil {
			return usagef("basic.auth.credentials.source=SASL_INHERIT in %s: sasl.mechanism=OAUTHBEARER has no user and password to inherit; give the registry its own (basic.auth.user.info)", r.inFile())
		}
		if s.saslMechanism == "" {
			return usagef("basic.auth.credentials.source=SASL_INHERIT in %s needs the Kafka SASL settings (sasl.jaas.config, or --sasl-mechanism and --sasl-user) to inherit", r.inFile())
		}
		r.user, r.password, r.havePassword = s.saslUser, s.saslPassword, true
		r.passwordSource = "the SASL password (" + s.passwordSource + "; basic.auth.credentials.source=SASL_INHERIT)"
		return nil
	}
	if r.user == "" {
		return nil
	}
	if pw, ok := lookupEnv(getenv, registryPasswordEnv); ok {
		if r.havePassword && pw != r.password {
			r.overridden = r.passwordSource
		}
		r.password, r.havePassword, r.passwordSource = pw, true, "$"+registryPasswordEnv
	}
	if !r.havePassword {
		pw, err := promptPassword("schema registry user", r.user, registryPasswordEnv)
		if err != nil {
			return err
		}
		r.password, r.havePassword, r.passwordSource = pw, true, "the password prompt"
	}
	return nil
}

// inFile names, for a message, where the registry's keys are written:
// the file kql read, or both places they could be when it read none.
func (r *registrySettings) inFile() string {
	if r != nil && r.fileLabel != "" {
		return r.fileLabel
	}
	return "--command-config or a cluster profile"
}

func (r *registrySettings) https() bool {
	for _, u := range r.urls {
		if strings.HasPrefix(u, "https://") {
			return true
		}
	}
	return false
}

// schemaConfig is the schema package's Config for these settings.
func (r *registrySettings) schemaConfig() (schema.Config, error) {
	cfg := schema.Config{URLs: r.urls, User: r.user, Password: r.password, BearerToken: r.token}
	if r.https() {
		tc, err := r.tls.tlsConfig()
		if err != nil {
			return cfg, fmt.Errorf("schema registry: %w", err)
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

// describe is the banner's line: where the registry is and how kql
// authenticates to it and verifies it. Never a secret.
func (r *registrySettings) describe() string {
	parts := []string{strings.Join(r.urls, ",")}
	switch {
	case r.token != "":
		parts = append(parts, "bearer token from "+r.tokenSource)
	case r.user != "":
		parts = append(parts, fmt.Sprintf("as %s (basic authentication, password from %s)", r.user, r.passwordSource))
	}
	if r.https() {
		trust := "the system's root CAs"
		if r.tls.caSource != "" {
			trust = r.tls.caSource
		}
		parts = append(parts, "verified with "+trust)
	}
	return strings.Join(parts, ", ")
}

// authDesc says which credentials kql sent, for a refusal.
func (r *registrySettings) authDesc() string {
	switch {
	case r.token != "":
		return "the bearer token from " + r.tokenSource
	case r.user != "":
		src := r.passwordSource
		if r.overridden != "" {
			src += " (which takes precedence over " + r.overridden + ")"
		}
		return fmt.Sprintf("basic authentication as %q, password from %s", r.user, src)
	}
	return "no credentials"
}

// checkRegistry asks the registry for its global compatibility once, at the start, so
// that a wrong URL, password or CA is one warning naming the setting, before
// any record needs the registry. It returns "" when the registry answered.
// r is nil for the playground's registry.
func checkRegistry(ctx context.Context, reg *schema.Registry, r *registrySettings) string {
	// GET /config (the global compatibility level): an answer of a few
	// bytes whatever the registry holds, where GET /subjects lists every
	// subject and can outlast the check's timeout on a big registry.
	var err error
	for _, c := range reg.Client().Compatibility(ctx) {
		err = c.Err
	}
	var re *sr.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
		// Authenticated, not allowed to read the global config: with
		// role-based access a reader of subjects may lack that one
		// permission. GET /schemas/types needs none; if it answers, the
		// URL and credentials are right and there is nothing to warn of.
		if _, terr := reg.Client().SupportedTypes(ctx); terr == nil {
			return ""
		}
	}
	if err == nil {
		return ""
	}
	const after = "; keys and values in the registry's wire format will show as raw bytes"
	creds, hasCreds := "no credentials", r != nil && (r.token != "" || r.user != "")
	if hasCreds {
		creds = r.authDesc()
	}
	if errors.As(err, &re) && re.StatusCode < 500 {
		msg := strings.TrimSpace(re.Message)
		if msg == "" {
			msg = http.StatusText(re.StatusCode)
		}
		switch re.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint := "check the user and password"
			switch {
			case r != nil && r.token != "":
				hint = "check the token"
			case !hasCreds:
				hint = "it wants credentials: --schema-registry-user (password in $" + registryPasswordEnv + "), or basic.auth.user.info or bearer.auth.token in " + r.inFile()
			}
			return fmt.Sprintf("schema registry %s refused kql (HTTP %d: %s) with %s: %s%s", reg.URLs(), re.StatusCode, msg, creds, hint, after)
		case http.StatusNotFound:
			return fmt.Sprintf("schema registry %s answered HTTP 404 (%s) to GET /config: is this the URL of a schema registry?%s", reg.URLs(), msg, after)
		}
		return fmt.Sprintf("schema registry %s answered HTTP %d (%s) to GET /config%s", reg.URLs(), re.StatusCode, msg, after)
	}
	hint := ""
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &cv):
		trust := "the system's root CAs"
		if r != nil && r.tls.caSource != "" {
			trust = r.tls.caSource
		}
		hint = " (its certificate was checked against " + trust + ": give the CA that signed it with --schema-registry-ca FILE or schema.registry.ssl.truststore.location)"
	case errors.Is(err, context.DeadlineExceeded):
		hint = " (no answer in time)"
	case strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "bad certificate"):
		// The server's TLS alert: it wants a client certificate (or did
		// not accept the one sent). Go has no typed error for it.
		if r != nil && len(r.tls.certPEM)+len(r.tls.certFile)+len(r.tls.keystoreFile) > 0 {
			hint = " (it did not accept kql's client certificate: check that its CA trusts it)"
		} else {
			hint = " (it wants a client certificate: schema.registry.ssl.keystore.location, or schema.registry.ssl.certificate.location and schema.registry.ssl.key.location, in " + r.inFile() + ")"
		}
	}
	return fmt.Sprintf("schema registry %s could not be reached: %v%s%s", reg.URLs(), rootCause(err), hint, after)
}
