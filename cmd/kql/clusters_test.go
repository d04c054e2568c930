package main

import (
	"os"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// profileHome makes $XDG_CONFIG_HOME/kql/clusters with the given profiles
// (name -> file text) in the harness's environment and returns the
// profile directory.
func profileHome(t *testing.T, h *harness, profiles map[string]string) string {
	t.Helper()
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "kql", "clusters")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range profiles {
		if err := os.WriteFile(filepath.Join(dir, name+".properties"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.env["XDG_CONFIG_HOME"] = cfg
	return dir
}

const (
	devProfile  = "bootstrap.servers=dev1:9092,dev2:9092\nclient.id=dev-kql\n"
	prodProfile = `bootstrap.servers=prod1:9093
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="s3cret";
ssl.endpoint.identification.algorithm=
kql.readonly=true
kql.prompt.color=red
`
)

func TestProfileSelectedByFlagAndByEnvironment(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile})

	r := h.run("-c", "dev", "-e", "SHOW TOPICS;")
	if r.code != 0 || len(h.dials) != 1 {
		t.Fatalf("%s", r)
	}
	if d := h.dials[0]; !reflect.DeepEqual(d.Bootstrap, []string{"dev1:9092", "dev2:9092"}) || d.ClientID != "dev-kql" || d.TLS != nil || d.SASL != nil {
		t.Fatalf("-c dev dialled %+v", d)
	}

	h.env["KQL_CLUSTER"] = "prod"
	r = h.run("-e", "SHOW TOPICS;")
	if r.code != 0 || len(h.dials) != 2 {
		t.Fatalf("%s", r)
	}
	if d := h.dials[1]; !reflect.DeepEqual(d.Bootstrap, []string{"prod1:9093"}) || d.TLS == nil || d.SASL == nil || d.SASL.Name() != "SCRAM-SHA-512" {
		t.Fatalf("$KQL_CLUSTER=prod dialled %+v", d)
	}

	// The flag beats the variable, and a flag that names the connection
	// another way (--command-config) beats it too.
	r = h.run("--cluster", "dev", "-e", "SHOW TOPICS;")
	if d := h.dials[2]; r.code != 0 || d.Bootstrap[0] != "dev1:9092" {
		t.Fatalf("--cluster dev with $KQL_CLUSTER=prod dialled %+v\n%s", d, r)
	}
	props := writeFile(t, t.TempDir(), "other.properties", "bootstrap.servers=other:9092\n")
	r = h.run("--command-config", props, "-e", "SHOW TOPICS;")
	if d := h.dials[3]; r.code != 0 || d.Bootstrap[0] != "other:9092" {
		t.Fatalf("--command-config with $KQL_CLUSTER=prod dialled %+v\n%s", d, r)
	}
}

func TestFlagsOverrideTheProfile(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"prod": prodProfile})
	h.env["KQL_SASL_PASSWORD"] = "from-env"
	r := h.run("-c", "prod", "-b", "flag:1", "--client-id", "flag-id", "--sasl-mechanism", "PLAIN", "--sasl-user", "carol", "-e", "SHOW TOPICS;")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	d := h.dials[0]
	if !reflect.DeepEqual(d.Bootstrap, []string{"flag:1"}) || d.ClientID != "flag-id" || d.SASL.Name() != "PLAIN" || d.TLS == nil {
		t.Fatalf("flags must override the profile (and keep what they do not name, its TLS): %+v", d)
	}
}

func TestUnknownProfileListsTheProfiles(t *testing.T) {
	h := newHarness(t)
	dir := profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile})
	r := h.run("-c", "staging", "-e", "SHOW TOPICS;")
	want := `kql: no cluster profile "staging" in ` + dir + `: the profiles are dev, prod`
	if r.code != exitUsage || !strings.Contains(r.stderr, want) || len(h.dials) != 0 {
		t.Fatalf("want exit 2 and %q:\n%s", want, r)
	}
	h.env["KQL_CLUSTER"] = "stagin"
	r = h.run("-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, `$KQL_CLUSTER=stagin: no cluster profile "stagin"`) {
		t.Fatalf("an unknown $KQL_CLUSTER must say where the name came from:\n%s", r)
	}

	empty := newHarness(t)
	emptyDir := profileHome(t, empty, nil)
	r = empty.run("-c", "prod", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, "there are no profiles in "+emptyDir) || !strings.Contains(r.stderr, filepath.Join(emptyDir, "prod.properties")) {
		t.Fatalf("with no profiles the error says where one goes:\n%s", r)
	}

	r = h.run("-c", "../etc/passwd", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, "a profile name is a file name") {
		t.Fatalf("a path is not a profile name:\n%s", r)
	}
}

func TestProfileDirectoryFallsBackToDotConfig(t *testing.T) {
	env := map[string]string{"HOME": "/home/ann"}
	dir, err := profileDir(func(k string) string { return env[k] })
	if err != nil || dir != "/home/ann/.config/kql/clusters" {
		t.Fatalf("got %q, %v", dir, err)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if dir, _ := profileDir(func(k string) string { return env[k] }); dir != "/xdg/kql/clusters" {
		t.Fatalf("got %q", dir)
	}
}

func TestProfileReadableByOthersIsWarnedAbout(t *testing.T) {
	h := newHarness(t)
	dir := profileHome(t, h, map[string]string{"prod": prodProfile})
	path := filepath.Join(dir, "prod.properties")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.run("-c", "prod", "-e", "SHOW TOPICS;")
	want := `warning: cluster profile "prod" ` + path + ` is readable by other users (mode 0644) and holds a secret (sasl.jaas.config): run chmod 600 ` + path
	if r.code != 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "s3cret") {
		t.Fatalf("want %q:\n%s", want, r)
	}
}

func TestProfileKQLKeys(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{
		"typo":   "bootstrap.servers=a:1\nkql.readonyl=true\nkql.schema.orders.value=protobuf:acme.Order\n",
		"bad":    "bootstrap.servers=a:1\nkql.readonly=yes\n",
		"colour": "bootstrap.servers=a:1\nkql.prompt.color=pink\n",
	})
	// An unknown kql.* key is named, not rejected, and kept for the
	// features that read their own keys.
	r := h.run("-c", "typo", "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "ignoring a key kql does not use: kql.readonyl") {
		t.Fatalf("%s", r)
	}
	p, err := loadProfile(func(k string) string { return h.env[k] }, "typo")
	if err != nil || p.cc.kql["kql.schema.orders.value"].value != "protobuf:acme.Order" || p.cc.readOnly {
		t.Fatalf("kql.* keys must stay reachable: %+v %v", p, err)
	}
	r = h.run("-c", "bad", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, `bad.properties:2: kql.readonly: want true or false, got "yes"`) || len(h.dials) != 1 {
		t.Fatalf("a kql.readonly kql cannot read must stop it, not be guessed:\n%s", r)
	}
	r = h.run("-c", "colour", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, `kql.prompt.color: unknown colour "pink" (want one of black, blue, cyan, green, magenta, red, white, yellow)`) {
		t.Fatalf("%s", r)
	}
}

func TestClusterFlagCombinations(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "dev", "--command-config", "x.properties"}, "--cluster dev and --command-config x.properties both name a properties file"},
		{[]string{"-c", "dev", "--playground"}, "cannot be combined with --cluster"},
		{[]string{"--cluster", ""}, "--cluster: empty profile name"},
	} {
		r := h.run(append(tc.args, "-e", "SHOW TOPICS;")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: want exit 2 and %q:\n%s", tc.args, tc.want, r)
		}
	}
}

func TestPromptNamesTheProfileInItsColour(t *testing.T) {
	a := &app{}
	if a.prompt() != "kql> " {
		t.Fatalf("without a profile: %q", a.prompt())
	}
	a.profile = &profile{name: "prod", cc: &commandConfig{promptColor: "red"}}
	if got := a.prompt(); got != "prod> " {
		t.Fatalf("colour off: %q", got)
	}
	a.colorOut = true
	if got := a.prompt(); got != "\x1b[31mprod\x1b[0m> " {
		t.Fatalf("colour on: %q", got)
	}
	a.profile.cc.promptColor = ""
	if got := a.prompt(); got != "prod> " {
		t.Fatalf("no kql.prompt.color: %q", got)
	}
}

func TestMetaClusters(t *testing.T) {
	h := newHarness(t)
	dir := profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile, "tls": "bootstrap.servers=t:9093\nsecurity.protocol=SSL\n",
		"broken": "sasl.jaas.config=\\u12\n", "typo": "bootstrap.servers=p:9092\nkql.readonly=yes\n"})
	r := h.repl("\\clusters\n", "-c", "prod")
	want := `  name    bootstrap            security                read-only
  broken  (error, below)       ?                       ?
  dev     dev1:9092,dev2:9092  PLAINTEXT               no
* prod    prod1:9093           SASL_SSL SCRAM-SHA-512  yes
  tls     t:9093               SSL                     no
  typo    (error, below)       ?                       ?
error: profile broken: ` + filepath.Join(dir, "broken.properties") + `: line 1: sasl.jaas.config: bad \u escape at character 1: want four hex digits (the value is not shown: it may hold a password)
error: profile typo: ` + filepath.Join(dir, "typo.properties") + `:2: kql.readonly: want true or false, got "yes"
Profiles are ` + dir + `/NAME.properties; \connect NAME switches.
`
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("want\n%s\n%s", want, r)
	}
	if !strings.Contains(r.stderr, "prod> ") {
		t.Errorf("the prompt must name the profile:\n%s", r)
	}

	none := newHarness(t)
	noneDir := profileHome(t, none, nil)
	r = none.repl("\\clusters\n")
	if !strings.Contains(r.stderr, "No cluster profiles in "+noneDir) {
		t.Fatalf("%s", r)
	}
}

func TestMetaConnectProfile(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile})
	r := h.repl("\\connect prod\nSHOW TOPICS;\n\\connect nope\nSHOW TOPICS;\n", "-b", "first:9092")
	if len(h.dials) != 2 || h.dials[1].Bootstrap[0] != "prod1:9093" || h.dials[1].SASL == nil {
		t.Fatalf(`\connect prod dialled %+v:\n%s`, h.dials, r)
	}
	// The prompt was kql> before and prod> after; a failed \connect NAME
	// keeps the connection and lists the profiles.
	if i, j := strings.Index(r.stderr, "kql> "), strings.Index(r.stderr, "prod> "); i < 0 || j < i {
		t.Fatalf("want kql> then prod>:\n%s", r)
	}
	if !strings.Contains(r.stderr, `\connect nope: no cluster profile "nope" in `) || !strings.Contains(r.stderr, "the profiles are dev, prod (still connected to prod (prod1:9093))") {
		t.Fatalf("%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics", "ShowTopics"}) {
		t.Fatalf("ran %v", got)
	}
}

func TestMetaConnectProfileFailureKeepsTheOldConnection(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile})
	h.tty = true
	h.stdin = "\\connect prod\nSHOW TOPICS;\n"
	origExec := h.exec
	r := h.runWithDial([]string{"--no-history", "--color", "never", "-c", "dev"}, func(cfg kafka.Config) (*connection, error) {
		if cfg.Bootstrap[0] == "prod1:9093" {
			return nil, &kafka.UnreachableError{Bootstrap: cfg.Bootstrap, Err: os.ErrDeadlineExceeded}
		}
		return &connection{exec: origExec, setTrace: origExec.setTrace, close: func() {}, bootstrap: cfg.Bootstrap}, nil
	})
	if !strings.Contains(r.stderr, `\connect prod: `) || !strings.Contains(r.stderr, "(still connected to dev (dev1:9092,dev2:9092))") {
		t.Fatalf("%s", r)
	}
	if got := origExec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics"}) {
		t.Fatalf("the old connection must still run statements: ran %v\n%s", got, r)
	}
	if strings.Contains(r.stderr, "prod> ") || strings.Count(r.stderr, "dev> ") < 2 {
		t.Fatalf("the prompt must stay dev> :\n%s", r)
	}
}

func TestCompletionOfProfileNames(t *testing.T) {
	c := newNameCache(newFakeExec())
	defer c.close()
	c.profiles = func() []string { return []string{"dev", "prod", "prod-eu"} }
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`\connect p`, []string{"rod", "rod-eu"}},
		{`\connect `, []string{"dev", "prod", "prod-eu"}},
		{`\connect prod-`, []string{"eu"}},
		{`\connect x`, nil},
	} {
		got, _ := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		if !reflect.DeepEqual(s, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.line, s, tc.want)
		}
	}
}

// The read-only guard follows the profile \connect switches to, while
// --read-only holds for the whole session.
func TestReadOnlyFollowsTheProfile(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile, "prod": prodProfile})
	r := h.repl("\\set confirm off\nDROP TOPIC a;\n\\connect dev\nDROP TOPIC b;\n\\connect prod\nDROP TOPIC c;\n", "-c", "prod")
	var dropped []string
	for _, st := range h.exec.ran {
		if d, ok := st.(*lang.DropTopic); ok {
			dropped = append(dropped, d.Topic)
		}
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"DropTopic"}) || !reflect.DeepEqual(dropped, []string{"b"}) {
		t.Fatalf("only dev's DROP may run, ran %v:\n%s", got, r)
	}
	if strings.Count(r.stderr, "refused, nothing was sent") != 2 {
		t.Fatalf("%s", r)
	}

	h = newHarness(t)
	profileHome(t, h, map[string]string{"dev": devProfile})
	r = h.repl("\\connect dev\nDROP TOPIC b;\n", "--read-only", "-b", "first:9092")
	if len(h.exec.ranKinds()) != 0 || !strings.Contains(r.stderr, "refused, nothing was sent: it writes to the cluster and kql runs with --read-only") {
		t.Fatalf("--read-only must hold across \\connect, ran %v:\n%s", h.exec.ranKinds(), r)
	}
}

// \connect host:port keeps the profile's settings and its guard, but the
// prompt no longer names a profile for a cluster that is not its.
func TestMetaConnectAddressAfterAProfile(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"prod": prodProfile})
	r := h.repl("\\connect other:9093\nDROP TOPIC a;\n", "-c", "prod")
	if len(h.dials) != 2 || h.dials[1].Bootstrap[0] != "other:9093" || h.dials[1].SASL == nil {
		t.Fatalf("dialled %+v:\n%s", h.dials, r)
	}
	after := r.stderr[strings.Index(r.stderr, "at other:9093"):]
	if !strings.Contains(after, "kql> ") || strings.Contains(after, "prod> ") || !strings.Contains(after, "refused, nothing was sent") {
		t.Fatalf("want the kql> prompt and the guard kept:\n%s", r)
	}
}

// A profile's warnings name the profile, not --command-config, which the
// user never gave: here the registry's basic.auth.user.info that
// basic.auth.credentials.source=URL leaves unused.
func TestProfileRegistryWarningNamesTheProfile(t *testing.T) {
	h := newHarness(t)
	dir := profileHome(t, h, map[string]string{"reg": "bootstrap.servers=dev1:9092\n" +
		"schema.registry.url=http://u:p@127.0.0.1:1\n" +
		"basic.auth.credentials.source=URL\n" +
		"basic.auth.user.info=other:secret\n"})
	r := h.run("-c", "reg", "-e", "SHOW TOPICS;")
	want := `cluster profile "reg" ` + filepath.Join(dir, "reg.properties") + `: basic.auth.user.info is not used: basic.auth.credentials.source=URL takes the user and password from schema.registry.url`
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "--command-config") {
		t.Fatalf("want %q (and no --command-config):\n%s", want, r)
	}
}

// TestProfileRegistryErrorsNameTheProfile: a registry setting a profile
// gets wrong is reported against that profile, not against a
// --command-config the user never gave.
func TestProfileRegistryErrorsNameTheProfile(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{
		"inherit": "bootstrap.servers=a:1\nschema.registry.url=https://sr:8081\nbasic.auth.credentials.source=SASL_INHERIT\n",
	})
	r := h.run("-c", "inherit", "-e", "SHOW TOPICS;")
	want := `basic.auth.credentials.source=SASL_INHERIT in cluster profile "inherit" needs the Kafka SASL settings`
	if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "--command-config") {
		t.Fatalf("want %q:\n%s", want, r)
	}
	r = h.run("--schema-registry-user", "bob", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--schema-registry-user needs --schema-registry URL (or schema.registry.url in --command-config or a cluster profile)") {
		t.Fatalf("%s", r)
	}
}
