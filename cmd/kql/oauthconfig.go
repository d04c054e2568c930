package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/oauth"
)

// OAUTHBEARER with OAuth 2 client credentials, from Kafka's own client
// properties (KIP-768, and Kafka 4.3's sasl.oauthbearer.client.credentials.*
// spelling). The token is fetched before kql dials a broker and renewed by
// kafka/oauth on the re-authentications the brokers ask for.

// oauthKeys are the client properties of OAUTHBEARER kql acts on.
var oauthKeys = []string{
	"sasl.oauthbearer.token.endpoint.url",
	"sasl.oauthbearer.client.credentials.client.id",
	"sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.scope",
	"sasl.oauthbearer.scope.claim.name",
	"sasl.oauthbearer.sub.claim.name",
	"sasl.oauthbearer.header.urlencode",
	"sasl.login.callback.handler.class",
	"sasl.oauthbearer.jwt.retriever.class",
	"sasl.login.connect.timeout.ms",
	"sasl.login.read.timeout.ms",
}

func init() {
	for _, k := range oauthKeys {
		knownConfigKeys[k] = true
	}
}

// isOAuthBearer reports whether a properties file asks for OAUTHBEARER.
func isOAuthBearer(get func(string) (string, bool)) bool {
	m, _ := get("sasl.mechanism")
	return strings.EqualFold(strings.TrimSpace(m), "OAUTHBEARER")
}

// oauthProps reads the OAUTHBEARER settings of a properties file. The client
// id, secret and scope come from Kafka 4.3's
// sasl.oauthbearer.client.credentials.client.id / .client.secret and
// sasl.oauthbearer.scope when given, else from the options of
// sasl.jaas.config's OAuthBearerLoginModule (clientId, clientSecret, scope).
// The token endpoint's TLS trust comes from ssl.* options inside
// sasl.jaas.config (where Kafka's Java client reads it), else from the
// file's own ssl.truststore.* settings, else the system's roots.
func oauthProps(path string, get func(string) (string, bool), bad func(key, format string, a ...any) error) (*oauth.Config, error) {
	c := &oauth.Config{}
	endpoint, ok := get("sasl.oauthbearer.token.endpoint.url")
	if !ok || endpoint == "" {
		return nil, bad("sasl.mechanism", "OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url (kql speaks OAuth 2 client credentials to it; unsecured JWTs are not supported)")
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, bad("sasl.oauthbearer.token.endpoint.url", "want an http:// or https:// URL of the token endpoint, got %q (a file: token is not supported)", endpoint)
	}
	c.TokenURL = endpoint
	if v, ok := get("sasl.oauthbearer.jwt.retriever.class"); ok && v != "" && !strings.HasSuffix(v, ".ClientCredentialsJwtRetriever") {
		return nil, bad("sasl.oauthbearer.jwt.retriever.class", "%s is not supported: kql fetches tokens by client credentials (ClientCredentialsJwtRetriever)", v)
	}
	if v, ok := get("sasl.login.callback.handler.class"); ok && v != "" && !strings.HasSuffix(v, ".OAuthBearerLoginCallbackHandler") {
		return nil, bad("sasl.login.callback.handler.class", "%s is not supported: kql does what OAuthBearerLoginCallbackHandler does (client credentials)", v)
	}

	j := &jaasConfig{options: map[string]string{}}
	if jv, ok := get("sasl.jaas.config"); ok {
		if j, err = parseJAAS(jv); err != nil {
			return nil, bad("sasl.jaas.config", "%v", err)
		}
		if j.module != "OAuthBearerLoginModule" {
			return nil, bad("sasl.jaas.config", "%s does not go with sasl.mechanism=OAUTHBEARER (want OAuthBearerLoginModule)", j.module)
		}
	}
	pick := func(key, option string) (string, string) {
		if v, ok := get(key); ok && v != "" {
			return v, key + " in " + path
		}
		if v, ok := j.options[option]; ok && v != "" {
			return v, "sasl.jaas.config in " + path
		}
		return "", ""
	}
	c.ClientID, _ = pick("sasl.oauthbearer.client.credentials.client.id", "clientId")
	c.ClientSecret, c.SecretSource = pick("sasl.oauthbearer.client.credentials.client.secret", "clientSecret")
	c.Scope, _ = pick("sasl.oauthbearer.scope", "scope")
	if c.ClientID == "" || c.ClientSecret == "" {
		return nil, bad("sasl.jaas.config", `OAUTHBEARER needs a client id and secret: clientId="..." clientSecret="..." in sasl.jaas.config's OAuthBearerLoginModule, or sasl.oauthbearer.client.credentials.client.id and .client.secret`)
	}
	for k, v := range j.options {
		if name, ok := strings.CutPrefix(k, "extension_"); ok {
			if c.Extensions == nil {
				c.Extensions = map[string]string{}
			}
			c.Extensions[name] = v
		}
	}
	c.ScopeClaim, _ = get("sasl.oauthbearer.scope.claim.name")
	c.SubClaim, _ = get("sasl.oauthbearer.sub.claim.name")
	if v, ok := get("sasl.oauthbearer.header.urlencode"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad("sasl.oauthbearer.header.urlencode", "want true or false, got %q", v)
		}
		c.URLEncode = b
	}
	for _, k := range []string{"sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms"} {
		if v, ok := get(k); ok && v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return nil, bad(k, "want a positive number of milliseconds, got %q", v)
			}
			c.Timeout += time.Duration(ms) * time.Millisecond
		}
	}

	if u.Scheme == "https" {
		dir := filepath.Dir(path)
		rel := func(p string) string {
			if p == "" || filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(dir, p)
		}
		var t tlsSettings
		src := get
		for k := range j.options {
			if strings.HasPrefix(k, "ssl.") {
				// The JAAS options are the token endpoint's TLS settings, as
				// for Kafka's Java client; errors name them as such.
				src = func(key string) (string, bool) { v, ok := j.options[key]; return v, ok }
				bad = func(key, format string, a ...any) error {
					return fmt.Errorf("--command-config %s: sasl.jaas.config option %s (the token endpoint's TLS): %s", path, key, fmt.Sprintf(format, a...))
				}
				break
			}
		}
		if err := tlsProps(&t, "", "ssl.truststore.location", path, src, rel, bad); err != nil {
			return nil, err
		}
		tc, err := t.tlsConfig()
		if err != nil {
			return nil, fmt.Errorf("--command-config %s: the token endpoint's TLS: %w", path, err)
		}
		c.TLS = tc
	}
	return c, nil
}

// prefetchToken gets the first token before any broker is dialled, so a
// wrong secret or an unreachable endpoint is said as what it is, once,
// instead of as a failure at each bootstrap broker.
func (s *connSettings) prefetchToken(ctx context.Context) error {
	if s.oauthSource == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := s.oauthSource.Token(ctx)
	return err
}

// oauthRefused explains a broker's refusal of kql's token.
func (s *connSettings) oauthRefused(se *kafka.SecurityError) string {
	return fmt.Sprintf("OAUTHBEARER at broker %s: %s (token from %s for client id %q)", se.Addr,
		s.oauthSource.Diagnose(s.oauthSource.Current()), s.oauth.TokenURL, s.oauth.ClientID)
}

// oauthDesc is the banner's account of OAUTHBEARER.
func (s *connSettings) oauthDesc() string {
	d := fmt.Sprintf("as client id %s (OAUTHBEARER, tokens from %s, secret from %s", s.oauth.ClientID, s.oauth.TokenURL, s.oauth.SecretSource)
	if s.oauth.Scope != "" {
		d += ", scope " + s.oauth.Scope
	}
	return d + ")"
}

// oauthPrincipal is who the broker sees: the token's sub claim (or the one
// sasl.oauthbearer.sub.claim.name names, on the broker).
func (s *connSettings) oauthPrincipal() string {
	sub := "?"
	claim := s.oauthSource.Config().SubClaim
	if t := s.oauthSource.Current(); t != nil {
		if v, ok := t.Claims[claim].(string); ok {
			sub = v
		}
	}
	return fmt.Sprintf("User:%s (the token's %s claim, OAUTHBEARER)", sub, claim)
}
