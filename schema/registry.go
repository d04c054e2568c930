// Package schema reads and writes record keys and values in the Confluent
// wire format through a schema registry: a zero byte, a 4-byte big-endian
// schema id, then the encoded record (Protobuf puts its message-index path
// between the two). The registry's REST API is franz-go's pkg/sr; schemas
// are parsed by hamba/avro (Avro), bufbuild/protocompile (Protobuf) and
// google/jsonschema-go (JSON Schema).
//
// Decoding turns a payload into compact JSON text, so every output format
// and every path expression (value.amount) works on decoded records exactly
// as on JSON ones. Each schema id is fetched and compiled once per session.
package schema

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Config is how to reach a schema registry.
type Config struct {
	// URLs are the registry's nodes (the client tries them in turn).
	URLs []string
	// User and Password are HTTP basic authentication, when User is set.
	User, Password string
	// BearerToken is sent as "Authorization: Bearer ..." when set.
	BearerToken string
	// TLS is used for https URLs; nil means the system's roots.
	TLS *tls.Config
	// Timeout bounds each HTTP request (default 10 s).
	Timeout time.Duration
}

// Registry is a schema registry client with a per-session cache of
// compiled schemas by id. It is safe for concurrent use.
type Registry struct {
	cl        *sr.Client
	urls      string
	trace     atomic.Pointer[func(TraceEvent)]
	transport *http.Transport // its idle sockets, closed by Close

	mu   sync.Mutex
	byID map[int]*codecEntry
}

// codecEntry is one schema id's compiled codec, or the error that compiling
// it gave (a schema that does not compile will not compile on a second try).
type codecEntry struct {
	once  sync.Once
	done  atomic.Bool // codec and err are set
	codec codec
	err   error
}

// Open checks cfg and returns a client; it does not contact the registry.
func Open(cfg Config) (*Registry, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("no schema registry URL")
	}
	if cfg.BearerToken != "" && cfg.User != "" {
		return nil, errors.New("schema registry: give a user and password or a bearer token, not both (the token would win silently)")
	}
	urls := make([]string, len(cfg.URLs))
	for i, u := range cfg.URLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("schema registry URL %q: want http://host:port[/path] or https://...", u)
		}
		if port := p.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("schema registry URL %q: port %s is not a number from 1 to 65535", u, port)
			}
		}
		// A user and password in the URL become basic authentication and
		// leave the URL: kept in it, the password was in every message
		// that named the registry, here and in pkg/sr's own error text.
		if p.User != nil {
			pass, _ := p.User.Password()
			switch {
			case cfg.User == "" && cfg.BearerToken == "":
				cfg.User, cfg.Password = p.User.Username(), pass
			case cfg.User != p.User.Username() || cfg.Password != pass:
				return nil, fmt.Errorf("schema registry URL %s: its user and password differ from the ones given otherwise", p.Redacted())
			}
			p.User = nil
		}
		urls[i] = p.String()
	}
	cfg.URLs = urls
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a registry on loopback or an internal network: $HTTP_PROXY would only get in the way
	tr.DialContext = (&net.Dialer{Timeout: timeout}).DialContext
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	r := &Registry{urls: strings.Join(cfg.URLs, ","), byID: map[int]*codecEntry{}, transport: tr}
	opts := []sr.ClientOpt{
		sr.URLs(cfg.URLs...),
		sr.HTTPClient(&http.Client{Timeout: timeout, Transport: &tracingTransport{next: tr, r: r}}),
		sr.UserAgent("kql"),
	}
	if cfg.User != "" {
		opts = append(opts, sr.BasicAuth(cfg.User, cfg.Password))
	}
	if cfg.BearerToken != "" {
		opts = append(opts, sr.BearerToken(cfg.BearerToken))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	r.cl = cl
	return r, nil
}

// Close drops the client's idle connections to the registry. The shell
// calls it when \connect replaces the registry (the old one's keep-alive
// sockets would otherwise stay open for the rest of the session) and at
// exit. The Registry must not be used afterwards.
func (r *Registry) Close() {
	if r != nil && r.transport != nil {
		r.transport.CloseIdleConnections()
	}
}

// TraceEvent is one HTTP request to the registry, for \trace.
type TraceEvent struct {
	Method, Path string // GET, /schemas/ids/3
	Host         string // host:port it went to
	Status       int    // 0 when no answer
	Duration     time.Duration
	Err          error
}

// SetTrace calls fn after every registry request (nil: stop).
func (r *Registry) SetTrace(fn func(TraceEvent)) {
	if fn == nil {
		r.trace.Store(nil)
		return
	}
	r.trace.Store(&fn)
}

// tracingTransport reports each request to the registry's trace hook.
type tracingTransport struct {
	next http.RoundTripper
	r    *Registry
}

func (t *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	if fn := t.r.trace.Load(); fn != nil {
		ev := TraceEvent{Method: req.Method, Path: req.URL.Path, Host: req.URL.Host, Duration: time.Since(start), Err: err}
		if resp != nil {
			ev.Status = resp.StatusCode
		}
		(*fn)(ev)
	}
	return resp, err
}

// URLs names the registry for messages.
func (r *Registry) URLs() string { return r.urls }

// Client is the underlying pkg/sr client, for browsing subjects.
func (r *Registry) Client() *sr.Client { return r.cl }

// codecFor returns the compiled codec of schema id, fetching and compiling
// it on first use. Concurrent callers for one id wait for one fetch.
func (r *Registry) codecFor(ctx context.Context, id int) (codec, error) {
	r.mu.Lock()
	e := r.byID[id]
	if e == nil {
		e = &codecEntry{}
		r.byID[id] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		e.codec, e.err = r.compile(ctx, id)
		e.done.Store(true)
	})
	// An id the registry does not know is forgotten too: it may be
	// registered later (imported with its id, or a registry node that had
	// not caught up), and kept, it failed every statement of the session
	// until kql was restarted. A Decoder keeps the failure for the rest of
	// its statement, so it is still asked once per statement.
	if e.err != nil && (statementWide(e.err) || errors.Is(e.err, context.Canceled) || idNotFound(e.err)) {
		// A registry that could not be reached, or refused us, may answer
		// later, and a fetch cut short by its statement's cancellation
		// says nothing about the schema: forget the failure so the next
		// statement asks again. (A cancelled fetch was kept, and every
		// later statement of the session failed its records with
		// "context canceled" without asking; so was a 401 or 403.)
		r.mu.Lock()
		if r.byID[id] == e {
			delete(r.byID, id)
		}
		r.mu.Unlock()
	}
	return e.codec, e.err
}

// compiled returns schema id's codec if it is compiled already, without
// asking the registry.
func (r *Registry) compiled(id int) codec {
	r.mu.Lock()
	e := r.byID[id]
	r.mu.Unlock()
	if e == nil || !e.done.Load() || e.err != nil {
		return nil
	}
	return e.codec
}

// compile fetches schema id with its references and compiles it. Its
// errors do not name the id: the callers (Decode, Encode) do, once.
func (r *Registry) compile(ctx context.Context, id int) (codec, error) {
	s, err := r.cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, r.wrap("", err)
	}
	refs, err := r.references(ctx, s.References, map[string]bool{})
	if err != nil {
		return nil, &referenceError{err}
	}
	return compileSchema(s, refs)
}

// referenceError is a failure to fetch one of a schema's references. A 404
// in it is the reference's: the schema id itself is known, and "the
// registry does not know this schema id" (what Decode and Encode said for
// any 404) sent the user looking for the wrong thing.
type referenceError struct{ err error }

func (e *referenceError) Error() string { return e.err.Error() }
func (e *referenceError) Unwrap() error { return e.err }

// idNotFound reports whether err is the registry not knowing the schema id
// asked for (not one of its references).
func idNotFound(err error) bool {
	var re *referenceError
	return IsNotFound(err) && !errors.As(err, &re)
}

// reference is one schema a schema imports, by the name it imports it as.
type reference struct {
	name   string
	schema sr.Schema
}

// references fetches refs and, depth first, what they reference in turn:
// dependencies come before the schemas that use them (Avro needs its named
// types defined before use). seen stops cycles and repeats.
func (r *Registry) references(ctx context.Context, refs []sr.SchemaReference, seen map[string]bool) ([]reference, error) {
	var out []reference
	for _, ref := range refs {
		if seen[ref.Name] {
			continue
		}
		seen[ref.Name] = true
		version := ref.Version
		if version == 0 {
			version = -1
		}
		ss, err := r.cl.SchemaByVersion(ctx, ref.Subject, version)
		if err != nil {
			return nil, r.wrap(fmt.Sprintf("reference %q (subject %s version %d)", ref.Name, ref.Subject, ref.Version), err)
		}
		deeper, err := r.references(ctx, ss.References, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, deeper...)
		out = append(out, reference{name: ref.Name, schema: ss.Schema})
	}
	return out, nil
}

// wrap gives a registry error its context: what was asked and of whom.
func (r *Registry) wrap(what string, err error) error {
	if IsUnreachable(err) {
		if what == "" {
			return &UnreachableError{URLs: r.urls, Err: err}
		}
		// What was asked stays in the message: SHOW SUBJECTS names the
		// subject whose details a failing registry did not give.
		return fmt.Errorf("%s: %w", what, &UnreachableError{URLs: r.urls, Err: err})
	}
	var re *sr.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden) {
		// The registry's own text ("User not authorized") names neither
		// the registry nor the credentials.
		err = fmt.Errorf("schema registry %s refused kql's credentials (HTTP %d %s): %w", r.urls, re.StatusCode, http.StatusText(re.StatusCode), err)
	}
	if what == "" {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// UnreachableError is a registry that did not answer (connection refused,
// timeout, TLS failure): unlike an unknown id, it says nothing about the
// record, and it may answer later.
type UnreachableError struct {
	URLs string
	Err  error
}

func (e *UnreachableError) Error() string {
	var re *sr.ResponseError
	if errors.As(e.Err, &re) {
		// It answered, with a server error (or a proxy did, for it).
		return fmt.Sprintf("schema registry %s answered HTTP %d: %v", e.URLs, re.StatusCode, re)
	}
	return fmt.Sprintf("schema registry %s could not be reached: %v", e.URLs, innermost(e.Err))
}

// innermost is the root of an error chain (dial tcp ...: connection
// refused): pkg/sr and net/http each repeat the URL on their way out.
func innermost(err error) error {
	for {
		var op *net.OpError
		if errors.As(err, &op) {
			return op
		}
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err means the registry did not answer, as
// opposed to answering with an error.
func IsUnreachable(err error) bool {
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return true
	}
	var re *sr.ResponseError
	if errors.As(err, &re) {
		// An HTTP answer: the registry is there. A 5xx from a proxy in
		// front of a dead registry is still "not reachable" for us.
		return re.StatusCode >= 500
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	var ue2 *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue2) || errors.Is(err, context.DeadlineExceeded)
}

// IsNotFound reports whether the registry answered that the schema, subject
// or version does not exist.
func IsNotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

func typeName(t sr.SchemaType) string {
	switch t {
	case sr.TypeProtobuf:
		return "PROTOBUF"
	case sr.TypeJSON:
		return "JSON"
	default:
		return "AVRO"
	}
}
