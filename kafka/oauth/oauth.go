// Package oauth fetches OAUTHBEARER tokens for kql with OAuth 2's client
// credentials grant, the way Kafka's own Java client does
// (OAuthBearerLoginModule with sasl.oauthbearer.token.endpoint.url): one
// POST to the token endpoint with the client id and secret as HTTP Basic,
// not URL-encoded (what Kafka sends unless sasl.oauthbearer.header.urlencode
// is true). golang.org/x/oauth2 URL-encodes them (RFC 6749 2.3.1), so a
// secret with '+', '%' or ':' would authenticate differently from Kafka's
// client; this small client does exactly what Kafka's does.
//
// A Source hands franz-go's pkg/sasl/oauth a token on every authentication
// (each new connection and each KIP-368 re-authentication the broker's
// connections.max.reauth.ms asks for), reusing the current token until 80%
// of its lifetime has passed (Kafka's sasl.login.refresh.window.factor) and
// fetching a new one after that, so a long FOLLOW keeps running across
// token expiry.
package oauth

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// Config says how to get tokens.
type Config struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scope        string            // "" sends no scope
	Extensions   map[string]string // SASL extensions (JAAS extension_NAME options)
	URLEncode    bool              // sasl.oauthbearer.header.urlencode=true: URL-encode id and secret in the Basic header
	TLS          *tls.Config       // trust for an https token endpoint; nil: the system's roots
	Timeout      time.Duration     // one token request, connect to last byte; default 10s

	// ScopeClaim and SubClaim name the token's claims kql reports when the
	// broker refuses it (sasl.oauthbearer.scope.claim.name, .sub.claim.name);
	// defaults "scope" and "sub".
	ScopeClaim, SubClaim string

	// SecretSource says where the secret came from, for messages
	// ("sasl.jaas.config in client.properties").
	SecretSource string
}

// refreshFactor is the share of a token's lifetime after which a new one is
// fetched at the next authentication (Kafka's default refresh window).
const refreshFactor = 0.8

// Source fetches and caches tokens. Safe for concurrent use: franz-go
// authenticates each broker connection on its own goroutine.
type Source struct {
	cfg    Config
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	current *Token
	fetched int // tokens fetched, for \conninfo-like messages and tests

	// renewErr is the last failed renewal while the current token was
	// still valid, and renewAt when the endpoint is asked again.
	renewErr error
	renewAt  time.Time
}

// Token is one access token and what kql read from it.
type Token struct {
	Raw      string
	Fetched  time.Time
	Expires  time.Time // from the JWT's exp, else the response's expires_in; zero: unknown
	Claims   map[string]any
	Response string // the endpoint's token_type and scope, for messages
}

// New returns a Source for cfg.
func New(cfg Config) *Source {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.ScopeClaim == "" {
		cfg.ScopeClaim = "scope"
	}
	if cfg.SubClaim == "" {
		cfg.SubClaim = "sub"
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	tr.Proxy = nil // Kafka's client ignores HTTPS_PROXY too; a token request never leaves through a proxy unasked
	return &Source{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}, now: time.Now}
}

// Config returns the source's settings.
func (s *Source) Config() Config { return s.cfg }

// Mechanism is the SASL mechanism for kgo.SASL: OAUTHBEARER with a token
// from this source on every authentication.
func (s *Source) Mechanism() sasl.Mechanism {
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		t, err := s.Token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: t.Raw, Extensions: s.cfg.Extensions}, nil
	})
}

// renewRetry is how long a failed renewal keeps the still-valid token
// before the endpoint is asked again.
const renewRetry = time.Second

// Token returns the current token, fetching a new one if there is none or
// 80% of its lifetime has passed. A renewal that fails while the current
// token is still valid keeps it (the token endpoint may be back before it
// expires, as Kafka's client retries its refresh); once it has expired the
// failure is returned, saying when the token expired.
func (s *Source) Token(ctx context.Context) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.current
	if cur != nil && !s.stale(cur) {
		return cur, nil
	}
	valid := cur != nil && !cur.Expires.IsZero() && s.now().Before(cur.Expires)
	if valid && s.renewErr != nil && s.now().Before(s.renewAt) {
		return cur, nil
	}
	t, err := s.fetch(ctx)
	if err != nil {
		if valid {
			s.renewErr, s.renewAt = err, s.now().Add(renewRetry)
			return cur, nil
		}
		if e := AsError(err); e != nil && cur != nil {
			e.Expired = cur.Expires
		}
		return nil, err
	}
	s.current, s.renewErr = t, nil
	s.fetched++
	return t, nil
}

// RenewError is the last failed renewal, while the current token was still
// valid and kept; nil once a renewal succeeds.
func (s *Source) RenewError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewErr
}

// Current is the last token fetched, or nil.
func (s *Source) Current() *Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Fetched is how many tokens the source has fetched.
func (s *Source) Fetched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched
}

func (s *Source) stale(t *Token) bool {
	if t.Expires.IsZero() {
		return true // no lifetime known: one token per authentication
	}
	life := t.Expires.Sub(t.Fetched)
	return s.now().After(t.Fetched.Add(time.Duration(float64(life) * refreshFactor)))
}

// ErrorKind says what went wrong getting a token.
type ErrorKind int

const (
	Unreachable ErrorKind = iota + 1 // no HTTP answer: connection refused, DNS, TLS, timeout
	Rejected                         // 401, or 400 invalid_client / unauthorized_client: wrong id or secret
	Refused                          // any other error answer (invalid_scope, 5xx, ...)
	BadResponse                      // 200 without a usable access_token
)

// Error is a failed token request. It never holds the client secret.
type Error struct {
	Kind     ErrorKind
	URL      string
	ClientID string
	Status   int    // HTTP status; 0 when unreachable
	Detail   string // the endpoint's error and error_description, or the transport error
	Source   string // where the secret came from
	// Expired is when the token kql had expired, for a renewal that failed
	// after it (zero for the first token).
	Expired time.Time
	Err     error
}

func (e *Error) Error() string {
	if !e.Expired.IsZero() {
		return fmt.Sprintf("kql's OAuth token expired at %s and could not be renewed: %s", e.Expired.UTC().Format(time.RFC3339), e.message())
	}
	return e.message()
}

func (e *Error) message() string {
	switch e.Kind {
	case Unreachable:
		return fmt.Sprintf("cannot reach the OAuth token endpoint %s (sasl.oauthbearer.token.endpoint.url): %s", e.URL, e.Detail)
	case Rejected:
		src := ""
		if e.Source != "" {
			src = "; the secret came from " + e.Source
		}
		return fmt.Sprintf("the OAuth token endpoint %s rejected client id %q (HTTP %d%s): wrong client secret or client id%s",
			e.URL, e.ClientID, e.Status, detail(e.Detail), src)
	case Refused:
		return fmt.Sprintf("the OAuth token endpoint %s refused a token to client id %q (HTTP %d%s)", e.URL, e.ClientID, e.Status, detail(e.Detail))
	}
	return fmt.Sprintf("the OAuth token endpoint %s answered without a usable token: %s", e.URL, e.Detail)
}

// Unwrap exposes a cancellation only. The token endpoint's transport
// error (a refused dial, a reset) must not read as a broker's: kgo and kql
// take a wrapped *net.OpError for a broker that cannot be reached. Err
// holds it for those who want it.
func (e *Error) Unwrap() error {
	if errors.Is(e.Err, context.Canceled) {
		return e.Err
	}
	return nil
}

// CredentialFailure marks a failed token request as kql's credentials
// failing, for kafka's routing: no broker and no retry a second later
// cures it. A first token that cannot be had is as permanent as an
// expired one that cannot be renewed (Source keeps a valid token while its
// renewal fails).
func (e *Error) CredentialFailure() bool { return true }

func detail(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}

// AsError returns the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

func (s *Source) fetch(ctx context.Context) (*Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if s.cfg.Scope != "" {
		form.Set("scope", s.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &Error{Kind: Unreachable, URL: s.cfg.TokenURL, ClientID: s.cfg.ClientID, Detail: err.Error(), Err: err}
	}
	id, secret := s.cfg.ClientID, s.cfg.ClientSecret
	if s.cfg.URLEncode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	mkErr := func(kind ErrorKind, status int, d string, err error) *Error {
		return &Error{Kind: kind, URL: s.cfg.TokenURL, ClientID: s.cfg.ClientID, Status: status, Detail: s.scrub(d), Source: s.cfg.SecretSource, Err: err}
	}
	start := s.now()
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, mkErr(Unreachable, 0, transportDetail(err), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, mkErr(Unreachable, resp.StatusCode, "reading the answer: "+err.Error(), err)
	}
	var tr struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
		Scope       string      `json:"scope"`
		Error       string      `json:"error"`
		Description string      `json:"error_description"`
	}
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		d := strings.TrimSpace(tr.Error + " " + tr.Description)
		if jsonErr != nil || d == "" {
			d = firstLine(string(body))
		}
		kind := Refused
		if resp.StatusCode == http.StatusUnauthorized || tr.Error == "invalid_client" || tr.Error == "unauthorized_client" {
			kind = Rejected
		}
		return nil, mkErr(kind, resp.StatusCode, d, nil)
	}
	if jsonErr != nil {
		return nil, mkErr(BadResponse, resp.StatusCode, "not JSON: "+jsonErr.Error(), jsonErr)
	}
	if tr.AccessToken == "" {
		return nil, mkErr(BadResponse, resp.StatusCode, "no access_token in the answer", nil)
	}
	t := &Token{Raw: tr.AccessToken, Fetched: start, Response: strings.TrimSpace(tr.TokenType + " scope=" + tr.Scope)}
	t.Claims, _ = Claims(tr.AccessToken)
	if exp, ok := numClaim(t.Claims, "exp"); ok {
		t.Expires = time.Unix(int64(exp), 0)
	} else if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		t.Expires = start.Add(time.Duration(n) * time.Second)
	}
	return t, nil
}

// scrub keeps the secret out of any text an endpoint echoes back.
func (s *Source) scrub(d string) string {
	if s.cfg.ClientSecret != "" {
		d = strings.ReplaceAll(d, s.cfg.ClientSecret, "<secret>")
	}
	return d
}

func transportDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return fmt.Sprintf("%s %s: %v", op.Op, op.Addr, op.Err)
	}
	return err.Error()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Claims decodes a JWT's payload without verifying it: kql reads its own
// token to explain a refusal, the broker is the one that verifies.
func Claims(jwt string) (map[string]any, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT (%d dot-separated parts, want 3)", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, fmt.Errorf("JWT payload is not base64url: %w", err)
	}
	var c map[string]any
	d := json.NewDecoder(strings.NewReader(string(payload)))
	d.UseNumber()
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("JWT payload is not a JSON object: %w", err)
	}
	return c, nil
}

func numClaim(c map[string]any, name string) (float64, bool) {
	n, ok := c[name].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
