package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/schema"
)

// These tests run the real kql binary on a pseudo-terminal, which is the only
// way to see line editing, Tab, Ctrl-C and Ctrl-D as a person does. The
// binary is the test binary that testscript installed on $PATH as "kql"
// (see TestMain): it runs Main when started under that name.

type ptySession struct {
	t    *testing.T
	pty  *os.File
	cmd  *osexec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer // everything the terminal showed, escapes stripped
	seen int          // how much of out expect has consumed
	done chan struct{}
	err  error // the process's exit, once done is closed
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-2]|\r`)

func startPTY(t *testing.T, env map[string]string, args ...string) *ptySession {
	t.Helper()
	bin, err := osexec.LookPath("kql")
	if err != nil {
		t.Fatalf("kql is not on $PATH (TestMain installs it): %v", err)
	}
	cmd := osexec.Command(bin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "TERM=xterm", "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "NO_COLOR=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.out.Write(buf[:n])
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			cmd.Process.Kill()
			<-s.done
		}
		f.Close()
		<-readDone
		if t.Failed() {
			t.Logf("terminal output:\n%s", s.text())
		}
	})
	return s
}

func (s *ptySession) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.ReplaceAllString(s.out.String(), "")
}

func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(keys)); err != nil {
		s.t.Fatalf("writing %q to the terminal: %v", keys, err)
	}
}

// expect waits until the output after the last match matches re, and
// consumes it up to the end of the match.
func (s *ptySession) expect(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for {
		txt := s.text()
		if s.seen > len(txt) {
			s.seen = len(txt)
		}
		if loc := rx.FindStringIndex(txt[s.seen:]); loc != nil {
			m := txt[s.seen+loc[0] : s.seen+loc[1]]
			s.seen += loc[1]
			return m
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q; after the last match it shows:\n%s", re, txt[s.seen:])
		}
		select {
		case <-s.done:
			if !rx.MatchString(s.text()[s.seen:]) {
				s.t.Fatalf("kql exited (%v) before the terminal showed %q; it shows:\n%s", s.err, re, s.text()[s.seen:])
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tryExpect is expect with a short deadline and no failure.
func (s *ptySession) tryExpect(re string, d time.Duration) bool {
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		txt := s.text()
		if loc := rx.FindStringIndex(txt[s.seen:]); loc != nil {
			s.seen += loc[1]
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// expectPasswordPrompt waits for a password prompt and checks that the
// terminal no longer echoes: a person types as soon as the prompt shows, so
// a prompt shown while the terminal still echoes shows their password.
func (s *ptySession) expectPasswordPrompt(re string) {
	s.t.Helper()
	s.expect(re)
	rc, err := s.pty.SyscallConn()
	if err != nil {
		s.t.Fatal(err)
	}
	var on bool
	if cerr := rc.Control(func(fd uintptr) { on, err = echoing(int(fd)) }); cerr != nil {
		s.t.Fatal(cerr)
	}
	if err != nil {
		s.t.Fatalf("reading the terminal's mode: %v", err)
	}
	if on {
		s.t.Fatalf("the terminal showed %q while it still echoed what is typed", re)
	}
}

func (s *ptySession) wait() error {
	s.t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(20 * time.Second):
		s.t.Fatal("kql did not exit")
		return nil
	}
}

// ptyCluster is a 3-broker kfake with a few topics.
func ptyCluster(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, name := range []string{"inventory-updates", "orders"} {
		if err := c.CreateTopic(name, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	return c, strings.Join(c.ListenAddrs(), ",")
}

const prompt = `kql> `

func TestPTYMultiLineStatementAndCtrlD(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(`connected to cluster \S+ \(3 brokers\)`)
	s.expect(prompt)
	s.send("SHOW\r")
	s.expect(`  -> `)
	s.send("  TOPICS\r")
	s.expect(`  -> `)
	s.send(";\r")
	s.expect(`inventory-updates`)
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\x04") // Ctrl-D on an empty line
	if err := s.wait(); err != nil {
		t.Fatalf("Ctrl-D: kql exited with %v, want 0", err)
	}
}

func TestPTYCtrlCWhileTypingClearsTheStatement(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("DESCRIBE\r")
	s.expect(`  -> `)
	s.send("\x03") // Ctrl-C: drop "DESCRIBE"
	s.expect(prompt)
	s.send("SHOW TOPICS;\r") // would be "DESCRIBE SHOW TOPICS;" if the buffer were kept
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\\q\r")
	if err := s.wait(); err != nil {
		t.Fatalf(`\q: kql exited with %v`, err)
	}
}

func TestPTYTabCompletesATopicName(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	// The names arrive in the background; Tab never waits for them, so
	// until they are there it completes nothing. Try until it does.
	completed := false
	for i := 0; i < 50 && !completed; i++ {
		s.send("describe topic inv\t")
		if completed = s.tryExpect(`describe topic inventory-updates `, 400*time.Millisecond); !completed {
			s.send("\x03")
			s.expect(prompt)
		}
	}
	if !completed {
		t.Fatal("Tab never completed the topic name")
	}
	s.send(";\r")
	s.expect(`partition`)
	s.expect(`\(3 rows\)`)
	s.expect(prompt)

	// Keywords complete in the case typed.
	s.send("sh\t")
	s.expect(`show `)
	s.send("CLU\t")
	s.expect(`show CLUSTER `)
	s.send("\x03")
	s.expect(prompt)
	s.send("\x04")
	s.wait()
}

// holdFirstFetch makes kfake hold the first Fetch until release is closed,
// as a slow or stuck broker would, without holding up other connections
// (SleepControl yields). kfake answers a whole partition in one Fetch, so
// this is what makes a CONSUME run long.
func holdFirstFetch(c *kfake.Cluster) (release func()) {
	ch := make(chan struct{})
	var held atomic.Bool
	c.ControlKey(kmsg.Fetch.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		if held.CompareAndSwap(false, true) {
			c.SleepControl(func() {
				select {
				case <-ch:
				case <-time.After(time.Minute):
				}
			})
		}
		return nil, nil, false
	})
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// createBig creates topic big, one partition of 5000 records keyed 0 to
// 4999: enough that a CONSUME of it runs long.
func createBig(t *testing.T, c *kfake.Cluster) {
	t.Helper()
	if err := c.CreateTopic("big", 1, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("big"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 5000)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte("value")}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestPTYCtrlCCancelsOnlyTheRunningStatement(t *testing.T) {
	c, boot := ptyCluster(t)
	createBig(t, c)
	release := holdFirstFetch(c)
	t.Cleanup(release)

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("CONSUME big LIMIT 1000000;\r")
	// A statement that runs long shows progress on the terminal's stderr.
	s.expect(`0 records read, 0 matches, 0 records/s \(Ctrl-C stops and keeps the rows shown\)`)
	s.send("\x03")
	s.expect(`cancelled \(Ctrl-C\)`)
	s.expect(prompt)
	if strings.Contains(s.text(), "(5000 rows)") {
		t.Fatal("the CONSUME ran to the end: Ctrl-C did not cancel it")
	}
	// The session is still usable, for metadata while the broker still
	// sits on the old Fetch, and for a new CONSUME once it answers.
	s.send("SHOW TOPICS;\r")
	s.expect(`big`)
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	release()
	s.send("CONSUME big FROM NEWEST LIMIT 2;\r")
	s.expect(`4999`)
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatalf("kql exited with %v after a cancelled statement", err)
	}
}

func TestPTYHistoryIsPrivateAndReloaded(t *testing.T) {
	_, boot := ptyCluster(t)
	hist := filepath.Join(t.TempDir(), "state", "kql", "history")
	env := map[string]string{"KQL_BOOTSTRAP": boot}

	s := startPTY(t, env, "--history-file", hist)
	s.expect(prompt)
	s.send("show\r")
	s.expect(`  -> `)
	s.send("topics;\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(hist)
	if err != nil {
		t.Fatalf("no history file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(hist)
	if got := strings.TrimSpace(string(data)); got != "SHOW TOPICS;" {
		t.Errorf("history holds %q, want the statement as one entry", got)
	}

	// A new session recalls it with the up arrow.
	s = startPTY(t, env, "--history-file", hist)
	s.expect(prompt)
	s.send("\x1b[A")
	s.expect(`SHOW TOPICS;`)
	s.send("\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestPTYSASLPasswordIsPromptedWithoutEcho(t *testing.T) {
	_, boot := ptyCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", "pw-0f-alice"))
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history", "--sasl-mechanism", "PLAIN", "--sasl-user", "alice")
	s.expectPasswordPrompt(`Password for SASL user alice: `)
	s.send("pw-0f-alice\r")
	s.expect(`connected to cluster`)
	s.expect(prompt)
	if strings.Contains(s.text(), "pw-0f-alice") {
		t.Fatal("the password was echoed")
	}
	s.send("SHOW TOPICS;\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt) // Ctrl-D before the prompt is back can be lost on a loaded machine
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestPTYSchemaRegistryPasswordIsPromptedWithoutEcho: --schema-registry-user
// without $KQL_SCHEMA_REGISTRY_PASSWORD asks on the terminal, as the SASL
// password does; the banner names the registry and the password's source.
func TestPTYSchemaRegistryPasswordIsPromptedWithoutEcho(t *testing.T) {
	c, boot := ptyCluster(t)
	fake := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("bob:pw-0f-bob"))))
	t.Cleanup(fake.Close)
	id, _, err := fake.RegisterSchema("orders-value", sr.Schema{Type: sr.TypeAvro, Schema: scriptAvroSchema})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := schema.Open(schema.Config{URLs: []string{fake.URL()}, User: "bob", Password: "pw-0f-bob"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	enc, err := reg.Encode(ctx, schema.Ref{ID: id}, []byte(`{"n":7,"amount":"7.25"}`))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("k"), Value: enc.Bytes}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history", "--schema-registry", fake.URL(), "--schema-registry-user", "bob")
	s.expectPasswordPrompt(`Password for schema registry user bob: `)
	s.send("pw-0f-bob\r")
	s.expect(`connected to cluster`)
	s.expect(`schema registry: http://127\.0\.0\.1:\d+, as bob \(basic authentication, password from the password prompt\)`)
	s.expect(prompt)
	s.send("\\format jsonl\r")
	s.expect(prompt)
	s.send("CONSUME orders;\r")
	s.expect(`"value":\{"n":7,"amount":7\.25\}`)
	s.expect(prompt)
	if strings.Contains(s.text(), "pw-0f-bob") || strings.Contains(s.text(), "warning") {
		t.Fatalf("the password was echoed, or a warning:\n%s", s.text())
	}
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestPTYPlayground(t *testing.T) {
	s := startPTY(t, nil, "--playground", "--playground-static", "--no-history")
	s.expect(`playground: .* running at 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+ with a schema registry at http://127\.0\.0\.1:\d+ `)
	s.expect(`connected to cluster kql-playground \(3 brokers\)`)
	s.expect(`schema registry: http://127\.0\.0\.1:\d+ \(the playground's\)`)
	s.expect(prompt)
	s.send("SHOW GROUPS;\r")
	s.expect(`warehouse-sync`)
	s.expect(`\(6 rows\)`)
	s.expect(prompt)
	s.send("CONSUME orders FROM NEWEST LIMIT 3;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	s.send("\\next\r")
	s.expect(`CONSUME orders FROM TAIL \(0:\d+, 1:\d+, 2:\d+, 3:\d+, 4:\d+, 5:\d+\) LIMIT 3;`)
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	// \trace shows the registry's HTTP requests as it shows the brokers'.
	s.send("\\trace on\r")
	s.expect(prompt)
	s.send(`SELECT value.amount FROM "payments-avro" PARTITION 0 LIMIT 1;` + "\r")
	s.expect(`trace: registry GET /schemas/ids/1 -> 127\.0\.0\.1:\d+ 200 `)
	s.expect(`\(1 row\)`)
	s.expect(prompt)
	s.send("\\trace off\r")
	s.expect(prompt)
	// Tab completes the registry's subjects (they arrive in the
	// background, as topic names do: try until they are there).
	completed := false
	for i := 0; i < 50 && !completed; i++ {
		s.send("DESCRIBE SUBJECT payments-a\t")
		if completed = s.tryExpect(`DESCRIBE SUBJECT payments-avro-value `, 400*time.Millisecond); !completed {
			s.send("\x03")
			s.expect(prompt)
		}
	}
	if !completed {
		t.Fatal("Tab never completed the subject name")
	}
	s.send(";\r")
	s.expect(`\(1 row\)`)
	s.expect(prompt)
	s.send("\\q\r")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// Ctrl-C while Tab's candidate list is shown only closes the list
// (chzyer/readline's completer swallows the interrupt): the typed text stays,
// and the next statement is glued to it.
func TestPTYCtrlCAfterTabCandidatesClearsTheLine(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	completed := false // wait until the background name cache has loaded
	for i := 0; i < 50 && !completed; i++ {
		s.send("describe topic inv\t")
		completed = s.tryExpect(`inventory-updates `, 400*time.Millisecond)
		s.send("\x03")
		s.expect(prompt)
	}
	if !completed {
		t.Fatal("Tab never completed the topic name")
	}
	s.send("describe topic \t\t") // two topics: the second Tab lists them
	s.expect(`orders`)
	time.Sleep(200 * time.Millisecond)
	s.send("\x03") // drop "describe topic "
	time.Sleep(200 * time.Millisecond)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(2 rows\)`)
}
