package kafkatest

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The OAUTHBEARER test bed: NAV's mock-oauth2-server (an OpenID Connect
// provider, from Maven Central) on loopback, a small reverse proxy in front
// of it that checks client secrets (the mock never does, so without it a
// wrong secret would get a token), and a real Kafka cluster of its own with
// an OAUTHBEARER listener that validates tokens by the provider's JWKS
// (OAuthBearerValidatorCallbackHandler) and asks clients to re-authenticate
// often (connections.max.reauth.ms).

//go:embed files/oauth-pom.xml
var oauthPom []byte

// DefaultOAuthServerVersion is the mock-oauth2-server release the test bed
// runs unless KQL_OAUTH_SERVER_VERSION says otherwise.
const DefaultOAuthServerVersion = "2.1.10"

// OAuthServerVersion is $KQL_OAUTH_SERVER_VERSION or DefaultOAuthServerVersion.
func OAuthServerVersion() string {
	if v := strings.TrimSpace(os.Getenv("KQL_OAUTH_SERVER_VERSION")); v != "" {
		return v
	}
	return DefaultOAuthServerVersion
}

// The provider's tokens. A client asking for OAuthScope gets a token for
// OAuthAudience, the audience the OAUTH listener expects; any other scope
// gets one for OAuthOtherAudience, which the brokers refuse.
const (
	OAuthIssuerID      = "default"
	OAuthScope         = "kafka"
	OAuthAudience      = "kafka"
	OAuthOtherAudience = "elsewhere"
	OAuthClientID      = "kql-test"
	ListenerOAuth      = "OAUTH" // SASL_PLAINTEXT with OAUTHBEARER only
	oauthMainClass     = "no.nav.security.mock.oauth2.StandaloneMockOAuth2ServerKt"
	oauthLog           = "oauth-server.log"
)

// EnsureOAuthServer returns the directory of mock-oauth2-server's jars at
// version, fetched with Maven into
// ${XDG_CACHE_HOME:-$HOME/.cache}/kql/mock-oauth2-server-<version>/libs on
// first use, under a lock and renamed into place when complete, as
// EnsureJars does for Kafka's.
func EnsureOAuthServer(ctx context.Context, version string, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory for mock-oauth2-server (set XDG_CACHE_HOME or HOME): %w", err)
	}
	base := filepath.Join(cache, "kql", "mock-oauth2-server-"+version)
	libs := filepath.Join(base, "libs")
	check := func(dir string) error {
		if _, err := os.Stat(filepath.Join(dir, "mock-oauth2-server-"+version+".jar")); err != nil {
			return fmt.Errorf("%s has no mock-oauth2-server-%s.jar", dir, version)
		}
		if jars, _ := filepath.Glob(filepath.Join(dir, "*.jar")); len(jars) < 20 { // 2.1.10 needs 43
			return fmt.Errorf("%s has %d jars: not mock-oauth2-server with its dependencies", dir, len(jars))
		}
		return nil
	}
	if check(libs) == nil {
		return libs, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating the mock-oauth2-server cache: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(base, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("opening the mock-oauth2-server cache lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("locking the mock-oauth2-server cache %s: %w", base, err)
	}
	defer unlockFile(lock)
	if check(libs) == nil {
		return libs, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("mock-oauth2-server %s is not cached in %s and Maven (mvn) is not installed to fetch it: "+
			"run `make deps` (installs Java 17 and Maven on Debian/Ubuntu as root), or install Maven (apt-get install maven)", version, libs)
	}
	tmp, err := os.MkdirTemp(base, "libs.partial-")
	if err != nil {
		return "", fmt.Errorf("creating a download directory in the mock-oauth2-server cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	pom := filepath.Join(tmp, "pom.xml")
	if err := os.WriteFile(pom, oauthPom, 0o644); err != nil {
		return "", fmt.Errorf("writing the Maven project for mock-oauth2-server: %w", err)
	}
	fmt.Fprintf(log, "kafkatest: fetching mock-oauth2-server %s with Maven into %s\n", version, libs)
	start := time.Now()
	dl := filepath.Join(tmp, "libs")
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-Dstyle.color=never", "-f", pom, "-Dmock-oauth2-server.version="+version,
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+dl)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fetching mock-oauth2-server %s with Maven (%s) failed: %w\n%s\n"+
			"Check the version exists (KQL_OAUTH_SERVER_VERSION) and that Maven Central is reachable",
			version, strings.Join(cmd.Args, " "), err, tail(out.String(), 40))
	}
	if err := check(dl); err != nil {
		return "", fmt.Errorf("Maven finished but the mock-oauth2-server download is incomplete: %w", err)
	}
	if err := os.Rename(dl, libs); err != nil {
		return "", fmt.Errorf("moving mock-oauth2-server into the cache: %w", err)
	}
	fmt.Fprintf(log, "kafkatest: fetched mock-oauth2-server %s in %s\n", version, time.Since(start).Round(100*time.Millisecond))
	return libs, nil
}

// OAuthServerConfig says how to start the provider. The zero value: one
// client, OAuthClientID with a random secret, tokens valid for 12 s.
type OAuthServerConfig struct {
	Version       string            // default OAuthServerVersion()
	TokenLifetime time.Duration     // default 12s; whole seconds
	Clients       map[string]string // client id -> secret the proxy accepts; default OAuthClientID with a random one
	Log           io.Writer
	StartTimeout  time.Duration // default 1 minute, not counting the fetch
}

// OAuthServer is mock-oauth2-server behind a proxy that checks secrets.
// Every URL it hands out is the proxy's; the provider builds its issuer
// from the Host header, which the proxy passes on, so the issuer is the
// proxy's too.
type OAuthServer struct {
	cfg       OAuthServerConfig
	dir       string
	mockPort  int
	jvm       *jvm
	ln        net.Listener
	srv       *http.Server
	issued    atomic.Int64
	rejected  atomic.Int64
	closeOnce sync.Once
}

// StartOAuthServer starts the provider and its proxy on loopback. Close
// stops both.
func StartOAuthServer(ctx context.Context, cfg OAuthServerConfig) (*OAuthServer, error) {
	if cfg.Version == "" {
		cfg.Version = OAuthServerVersion()
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = 12 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.Clients == nil {
		var b [9]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		cfg.Clients = map[string]string{OAuthClientID: "secret-" + hex.EncodeToString(b[:])}
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	libs, err := EnsureOAuthServer(ctx, cfg.Version, cfg.Log)
	if err != nil {
		return nil, err
	}
	sweepStale()
	return retryPortTaken(ctx, cfg.Log, "mock-oauth2-server", func() (*OAuthServer, error) { return startOAuthOnce(ctx, cfg, java, libs) })
}

// oauthJSONConfig is the provider's JSON_CONFIG: tokens of the configured
// lifetime, sub = the client id, the audience chosen by the scope.
func oauthJSONConfig(lifetime time.Duration) (string, error) {
	mapping := func(match, aud string) map[string]any {
		return map[string]any{"requestParam": "scope", "match": match,
			"claims": map[string]any{"sub": "${clientId}", "aud": []string{aud}}}
	}
	b, err := json.Marshal(map[string]any{
		"interactiveLogin": false,
		"tokenCallbacks": []any{map[string]any{
			"issuerId":        OAuthIssuerID,
			"tokenExpiry":     int(lifetime.Seconds()),
			"requestMappings": []any{mapping(OAuthScope, OAuthAudience), mapping("*", OAuthOtherAudience)},
		}},
	})
	return string(b), err
}

func startOAuthOnce(ctx context.Context, cfg OAuthServerConfig, java, libs string) (_ *OAuthServer, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	// kql-kafka-*: sweepStale removes it if this process dies without
	// tearing down, and kills the JVM recorded in it.
	dir, err := ownedTempDir("kql-kafka-oauth-", "OAuth server")
	if err != nil {
		return nil, err
	}
	s := &OAuthServer{cfg: cfg, dir: dir}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	s.mockPort = ports[0]
	jsonConfig, err := oauthJSONConfig(cfg.TokenLifetime)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := os.OpenFile(filepath.Join(dir, oauthLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// The directory with a trailing separator on the command line is how
	// sweepStale knows this JVM as the one recorded in it (commandNames).
	argv := append(slices.Clone(DefaultRegistryJVMOpts), "-Dkql.oauth.dir="+dir+string(filepath.Separator), "-cp", filepath.Join(libs, "*"), oauthMainClass)
	cmd := exec.Command(java, argv...)
	cmd.Dir = dir
	// SERVER_HOSTNAME: without it the provider binds every address.
	cmd.Env = append(os.Environ(), "SERVER_HOSTNAME=127.0.0.1", "SERVER_PORT="+strconv.Itoa(s.mockPort), "JSON_CONFIG="+jsonConfig)
	cmd.Stdout, cmd.Stderr = out, out
	if err := startProcess(cmd); err != nil {
		return nil, fmt.Errorf("starting mock-oauth2-server (%s): %w", java, err)
	}
	j := &jvm{proc: cmd.Process, exited: make(chan struct{})}
	s.jvm = j
	go func() {
		j.err = cmd.Wait()
		close(j.exited)
	}()
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return nil, err
	}
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	s.srv = &http.Server{Handler: s.proxy(), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(s.ln)
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "kafkatest: mock-oauth2-server %s up in %s, behind the secret-checking proxy at %s\n",
		cfg.Version, time.Since(start).Round(100*time.Millisecond), s.BaseURL())
	return s, nil
}

// proxy passes every request to the provider, the Host header unchanged,
// but answers a token request whose Basic credentials are not a configured
// client's with 401 invalid_client, and counts the tokens issued.
func (s *OAuthServer) proxy() http.Handler {
	target := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.mockPort))}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		// The provider's refused connections while it starts are
		// waitReady's business, not noise in the test log.
		ErrorLog: log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method == http.MethodPost && strings.HasSuffix(resp.Request.URL.Path, "/token") && resp.StatusCode == http.StatusOK {
				s.issued.Add(1)
			}
			return nil
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
			id, secret, ok := r.BasicAuth()
			if want, known := s.cfg.Clients[id]; !ok || !known || secret != want {
				s.rejected.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("WWW-Authenticate", `Basic realm="kql test bed"`)
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":"invalid_client","error_description":"client authentication failed"}`)
				return
			}
		}
		rp.ServeHTTP(w, r)
	})
}

func (s *OAuthServer) waitReady(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	probe := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.mockPort)) + "/" + OAuthIssuerID + "/jwks"
	var last string
	for {
		if s.jvm.hasExited() {
			tailText := s.LogTail(30)
			err := fmt.Errorf("mock-oauth2-server exited: %v; its log ends:\n%s", s.jvm.err, tailText)
			if strings.Contains(tailText, "already in use") {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mock-oauth2-server did not answer GET %s in time (last: %s); its log ends:\n%s", probe, last, s.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// BaseURL is the proxy's root, http://127.0.0.1:PORT.
func (s *OAuthServer) BaseURL() string { return "http://" + s.ln.Addr().String() }

// Issuer is the tokens' iss claim (the provider names itself by the Host
// header the proxy passes on).
func (s *OAuthServer) Issuer() string { return s.BaseURL() + "/" + OAuthIssuerID }

// TokenURL is the token endpoint, what sasl.oauthbearer.token.endpoint.url takes.
func (s *OAuthServer) TokenURL() string { return s.Issuer() + "/token" }

// JWKSURL is where the brokers read the signing keys.
func (s *OAuthServer) JWKSURL() string { return s.Issuer() + "/jwks" }

// Secret is the client secret the proxy accepts for id.
func (s *OAuthServer) Secret(id string) string { return s.cfg.Clients[id] }

// TokensIssued is how many tokens the proxy let through; Rejected how many
// token requests it refused for a wrong secret.
func (s *OAuthServer) TokensIssued() int64 { return s.issued.Load() }
func (s *OAuthServer) Rejected() int64     { return s.rejected.Load() }

// LogTail returns the last n lines of the provider's log.
func (s *OAuthServer) LogTail(n int) string {
	data, err := os.ReadFile(filepath.Join(s.dir, oauthLog))
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return "(mock-oauth2-server wrote no log)"
	}
	return tail(string(data), n)
}

// Close stops the proxy and the provider and removes the directory.
func (s *OAuthServer) Close() {
	s.closeOnce.Do(func() {
		if s.srv != nil {
			s.srv.Close()
		} else if s.ln != nil {
			s.ln.Close()
		}
		if s.jvm != nil {
			s.jvm.kill()
		}
		os.RemoveAll(s.dir)
	})
}

// OAuthCluster is a real Kafka cluster with an OAUTHBEARER listener
// (ListenerOAuth) validating tokens of its own OAuthServer.
type OAuthCluster struct {
	*Real
	Server *OAuthServer
}

// OAuthClusterConfig says how to start one.
type OAuthClusterConfig struct {
	Server OAuthServerConfig
	// Reauth is the brokers' connections.max.reauth.ms: how often a client
	// must authenticate again on an open connection (default 10 s).
	Reauth time.Duration
	Nodes  int
	Log    io.Writer
}

// StartOAuthCluster starts the provider, then the brokers (which read the
// JWKS at start). Close stops both.
func StartOAuthCluster(ctx context.Context, cfg OAuthClusterConfig) (*OAuthCluster, error) {
	if cfg.Reauth <= 0 {
		cfg.Reauth = 10 * time.Second
	}
	if cfg.Server.Log == nil {
		cfg.Server.Log = cfg.Log
	}
	srv, err := StartOAuthServer(ctx, cfg.Server)
	if err != nil {
		return nil, err
	}
	l := "listener.name." + strings.ToLower(ListenerOAuth) + "."
	props := map[string]string{
		// The server callback handler and JAAS entry must be per listener
		// and mechanism; the validator's settings are read from the
		// broker's own.
		l + "sasl.enabled.mechanisms":                        "OAUTHBEARER",
		l + "oauthbearer.sasl.jaas.config":                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		l + "oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url":                 srv.JWKSURL(),
		"sasl.oauthbearer.expected.audience":                 OAuthAudience,
		"sasl.oauthbearer.expected.issuer":                   srv.Issuer(),
		"connections.max.reauth.ms":                          strconv.FormatInt(cfg.Reauth.Milliseconds(), 10),
	}
	jvmOpts := append(slices.Clone(DefaultJVMOpts),
		// Kafka 4 reaches only the URLs this names (KIP-1098's allow list).
		"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+srv.JWKSURL()+","+srv.TokenURL())
	r, err := StartReal(ctx, RealConfig{Nodes: cfg.Nodes, Props: props, JVMOpts: jvmOpts, Log: cfg.Log,
		Listeners: []Listener{{Name: ListenerOAuth, Protocol: "SASL_PLAINTEXT"}}})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("starting the OAUTHBEARER cluster: %w", err)
	}
	return &OAuthCluster{Real: r, Server: srv}, nil
}

// OAuthAddrs are the brokers' OAUTHBEARER listener addresses.
func (c *OAuthCluster) OAuthAddrs() []string { return c.ListenerAddrs(ListenerOAuth) }

// Close stops the brokers, then the provider.
func (c *OAuthCluster) Close() {
	c.Real.Close()
	c.Server.Close()
}
