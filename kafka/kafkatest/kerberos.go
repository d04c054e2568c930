package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A Kerberos test bed: an MIT KDC (Debian's krb5-kdc and krb5-admin-server,
// which make deps installs) with a realm of its own in a temporary
// directory, and a real Kafka cluster with a SASL_PLAINTEXT GSSAPI listener
// whose brokers log in with a keytab from that realm.

const (
	// KerberosRealm is the test realm.
	KerberosRealm = "KQL.TEST"
	// ListenerKerberos is the GSSAPI listener's name. It is advertised as
	// localhost, the host of the brokers' service principal
	// kafka/localhost: franz-go asks the KDC for <service>/<host dialled>.
	ListenerKerberos = "KERBEROS"
	// KerberosServicePrincipal is the brokers' principal.
	KerberosServicePrincipal = "kafka/localhost@" + KerberosRealm
)

// KDC is a running krb5kdc on 127.0.0.1 with its own realm database,
// kdc.conf (KRB5_KDC_PROFILE) and a krb5.conf for clients. Close stops it
// and removes its directory.
type KDC struct {
	Dir      string // kql-kafka-kdc-* under $TMPDIR (swept like a cluster's)
	Port     int    // TCP (and UDP) port on 127.0.0.1
	Krb5Conf string // clients' krb5.conf: the realm, its KDC, TCP only
	cmd      *exec.Cmd
	exited   chan struct{}
}

// kdcTools are the MIT programs the bed runs; make deps installs them.
var kdcTools = []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit"}

func findKDCTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: the Kerberos tests need MIT Kerberos's KDC (run make deps, or apt-get install krb5-kdc krb5-admin-server krb5-user)", name)
}

// StartKDC creates the realm and starts the KDC, bounded by ctx. A port
// that another process took between being picked and krb5kdc binding it is
// retried on a new one, as for Kafka and the registry.
func StartKDC(ctx context.Context) (*KDC, error) {
	for _, t := range kdcTools {
		if _, err := findKDCTool(t); err != nil {
			return nil, err
		}
	}
	sweepStale()
	return retryPortTaken(ctx, os.Stderr, "krb5kdc", func() (*KDC, error) { return startKDCOnce(ctx) })
}

// kdcPort picks the KDC's port (a variable so a test can hand out a taken
// one).
var kdcPort = func() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

func startKDCOnce(ctx context.Context) (k *KDC, err error) {
	dir, err := ownedTempDir("kql-kafka-kdc-", "KDC")
	if err != nil {
		return nil, err
	}
	// made, not k: every failing return below sets k to nil before this
	// runs, and the KDC started and its directory must still go.
	made := &KDC{Dir: dir, Krb5Conf: filepath.Join(dir, "krb5.conf")}
	k = made
	defer func() {
		if err != nil {
			made.Close()
		}
	}()
	if k.Port, err = kdcPort(); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(k.Port))
	kdcConf := fmt.Sprintf(`[kdcdefaults]
	kdc_listen = %[2]s
	kdc_tcp_listen = %[2]s
[realms]
	%[3]s = {
		database_name = %[1]s/principal
		key_stash_file = %[1]s/stash
		acl_file = %[1]s/kadm5.acl
		kdc_listen = %[2]s
		kdc_tcp_listen = %[2]s
		max_life = 12h
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:%[1]s/kdc.log
`, dir, addr, KerberosRealm)
	// udp_preference_limit = 1: always TCP (Java and gokrb5 both honour it).
	krb5Conf := fmt.Sprintf(`[libdefaults]
	default_realm = %[2]s
	udp_preference_limit = 1
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	ticket_lifetime = 12h
	forwardable = false
[realms]
	%[2]s = {
		kdc = %[1]s
	}
[domain_realm]
	localhost = %[2]s
`, addr, KerberosRealm)
	if err := os.WriteFile(filepath.Join(dir, "kdc.conf"), []byte(kdcConf), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(k.Krb5Conf, []byte(krb5Conf), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kadm5.acl"), nil, 0o644); err != nil {
		return nil, err
	}
	if _, err := k.run(ctx, "kdb5_util", "-r", KerberosRealm, "-P", "kql-master-"+randomHex(8), "create", "-s"); err != nil {
		return nil, err
	}
	kdc, _ := findKDCTool("krb5kdc")
	// -n: stay in the foreground (no systemd here; the test bed owns it).
	// The pid file names the directory, so a stale sweep can match it.
	k.cmd = exec.Command(kdc, "-n", "-r", KerberosRealm, "-P", filepath.Join(dir, pidFile))
	k.cmd.Env = k.env()
	out, err := os.Create(filepath.Join(dir, "krb5kdc.out"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	k.cmd.Stdout, k.cmd.Stderr = out, out
	if err := startProcess(k.cmd); err != nil {
		return nil, fmt.Errorf("starting krb5kdc: %w", err)
	}
	k.exited = make(chan struct{})
	go func() { k.cmd.Wait(); close(k.exited) }()
	// Ready when krb5kdc itself says it has bound its sockets: a dial to
	// the port would also succeed if another process had taken it, and
	// krb5kdc then exits ("Address already in use"), which is retried.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if log, _ := os.ReadFile(filepath.Join(dir, "kdc.log")); strings.Contains(string(log), "commencing operation") {
			return k, nil
		}
		select {
		case <-k.exited:
			// The log is complete once the process has gone.
			if log := k.LogTail(); strings.Contains(log, "Address already in use") {
				return nil, fmt.Errorf("%w: krb5kdc on %s: %s", errPortTaken, addr, log)
			} else if strings.Contains(log, "commencing operation") {
				return nil, fmt.Errorf("krb5kdc on %s exited just after starting: %s", addr, log)
			}
			return nil, fmt.Errorf("krb5kdc exited at start: %s", k.LogTail())
		case <-ctx.Done():
			return nil, fmt.Errorf("krb5kdc: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("krb5kdc did not listen on %s within 30s: %s", addr, k.LogTail())
		}
	}
}

func (k *KDC) env() []string {
	return append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+filepath.Join(k.Dir, "kdc.conf"),
		"KRB5CCNAME=FILE:"+filepath.Join(k.Dir, "admin.ccache"))
}

// run runs one of MIT's tools with the realm's configuration.
func (k *KDC) run(ctx context.Context, tool string, args ...string) (string, error) {
	p, err := findKDCTool(tool)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = k.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Kadmin runs one kadmin.local query.
func (k *KDC) Kadmin(ctx context.Context, query string) error {
	out, err := k.run(ctx, "kadmin.local", "-r", KerberosRealm, "-q", query)
	if err != nil {
		return err
	}
	// kadmin.local exits 0 even when the query failed; it says so.
	if strings.Contains(out, "error") || strings.Contains(out, "Error") || strings.Contains(out, "failed") {
		return fmt.Errorf("kadmin.local -q %q: %s", query, out)
	}
	return nil
}

// AddPrincipal creates a principal (random key, pre-authentication
// required, so a stale key fails with PREAUTH_FAILED instead of handing out
// a ticket encrypted in a key the client cannot use) and writes its keytab.
func (k *KDC) AddPrincipal(ctx context.Context, principal, keytab string) error {
	if err := k.Kadmin(ctx, "addprinc -randkey +preauth "+principal); err != nil {
		return err
	}
	return k.WriteKeytab(ctx, principal, keytab)
}

// WriteKeytab writes principal's keys into keytab. Like kadmin's ktadd it
// gives the principal new random keys, so an older keytab of it goes stale.
func (k *KDC) WriteKeytab(ctx context.Context, principal, keytab string) error {
	return k.Kadmin(ctx, "ktadd -k "+keytab+" "+principal)
}

// Kinit fills the FILE ticket cache ccache for principal from its keytab,
// as a user's kinit would; extra arguments go to kinit (-l 2s: a ticket
// that expires soon).
func (k *KDC) Kinit(ctx context.Context, principal, keytab, ccache string, extra ...string) error {
	args := append([]string{"-k", "-t", keytab, "-c", "FILE:" + ccache}, extra...)
	_, err := k.run(ctx, "kinit", append(args, principal)...)
	return err
}

// LogTail is the end of the KDC's log, for failures.
func (k *KDC) LogTail() string {
	var b strings.Builder
	for _, f := range []string{"krb5kdc.out", "kdc.log"} {
		data, _ := os.ReadFile(filepath.Join(k.Dir, f))
		b.WriteString(tail(string(data), 20))
	}
	return b.String()
}

// Close stops the KDC and removes its directory.
func (k *KDC) Close() {
	if k.cmd != nil && k.cmd.Process != nil {
		k.cmd.Process.Kill()
		select {
		case <-k.exited:
		case <-time.After(5 * time.Second):
		}
	}
	os.RemoveAll(k.Dir)
}

// KerberosBed is a KDC and a 3-broker cluster with a GSSAPI listener
// (ListenerKerberos, SASL_PLAINTEXT, advertised as localhost) besides its
// PLAINTEXT one.
type KerberosBed struct {
	KDC  *KDC
	Real *Real
	// Client is the principal kql@KQL.TEST and ClientKeytab its keytab.
	Client, ClientKeytab string
}

// Bootstrap is the GSSAPI listener's addresses (localhost:PORT).
func (b *KerberosBed) Bootstrap() []string { return b.Real.ListenerAddrs(ListenerKerberos) }

// Close stops the brokers and the KDC.
func (b *KerberosBed) Close() {
	if b.Real != nil {
		b.Real.Close()
	}
	if b.KDC != nil {
		b.KDC.Close()
	}
}

// StartKerberos starts a KDC and a real cluster whose brokers accept GSSAPI.
func StartKerberos(ctx context.Context, cfg RealConfig) (b *KerberosBed, err error) {
	bed := &KerberosBed{Client: "kql@" + KerberosRealm}
	b = bed
	defer func() { // bed, not b: a failing return sets b to nil first
		if err != nil {
			bed.Close()
		}
	}()
	if b.KDC, err = StartKDC(ctx); err != nil {
		return nil, err
	}
	brokerKeytab := filepath.Join(b.KDC.Dir, "kafka.keytab")
	if err := b.KDC.AddPrincipal(ctx, KerberosServicePrincipal, brokerKeytab); err != nil {
		return nil, err
	}
	b.ClientKeytab = filepath.Join(b.KDC.Dir, "kql.keytab")
	if err := b.KDC.AddPrincipal(ctx, b.Client, b.ClientKeytab); err != nil {
		return nil, err
	}
	l := strings.ToLower(ListenerKerberos)
	props := map[string]string{
		"sasl.kerberos.service.name":                      "kafka",
		"listener.name." + l + ".sasl.enabled.mechanisms": "GSSAPI",
		"listener.name." + l + ".gssapi.sasl.jaas.config": fmt.Sprintf(
			`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" principal="%s";`,
			brokerKeytab, KerberosServicePrincipal),
	}
	for k, v := range cfg.Props {
		props[k] = v
	}
	cfg.Props = props
	cfg.Listeners = append(cfg.Listeners, Listener{Name: ListenerKerberos, Protocol: "SASL_PLAINTEXT", AdvertisedHost: "localhost"})
	if cfg.JVMOpts == nil {
		cfg.JVMOpts = DefaultJVMOpts
	}
	cfg.JVMOpts = append(append([]string{}, cfg.JVMOpts...), "-Djava.security.krb5.conf="+b.KDC.Krb5Conf)
	if b.Real, err = StartReal(ctx, cfg); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (KDC log: %s)", err, b.KDC.LogTail())
		}
		return nil, err
	}
	return b, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
