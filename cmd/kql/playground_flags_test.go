package main

import (
	"errors"
	"strings"
	"testing"
)

// --playground-static and $KQL_PLAYGROUND_STATIC say whether the
// playground's traffic runs; the flag wins over the environment.
func TestPlaygroundStatic(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		env    string
		static bool
	}{
		{[]string{"--playground"}, "", false},
		{[]string{"--playground", "--playground-static"}, "", true},
		{[]string{"--playground"}, "1", true},
		{[]string{"--playground"}, "yes", true},
		{[]string{"--playground"}, "0", false},
		{[]string{"--playground"}, "false", false},
		{[]string{"--playground", "--playground-static=false"}, "1", false},
	} {
		o, _, err := parseFlags(tc.args, func(k string) string {
			if k == playgroundStaticEnv {
				return tc.env
			}
			return ""
		})
		if err != nil {
			t.Fatalf("%v with %s=%q: %v", tc.args, playgroundStaticEnv, tc.env, err)
		}
		if o.playgroundStatic != tc.static {
			t.Errorf("%v with %s=%q: static %v, want %v", tc.args, playgroundStaticEnv, tc.env, o.playgroundStatic, tc.static)
		}
	}
	if _, _, err := parseFlags([]string{"--playground-static", "-e", "SHOW TOPICS;"}, func(string) string { return "" }); err == nil {
		t.Error("--playground-static without --playground was accepted")
	}
}

// The playground's traffic starts unless static, and a traffic that cannot
// start is a warning: the session goes on with the seeded data.
func TestPlaygroundTrafficStarts(t *testing.T) {
	h := newHarness(t)
	started := 0
	h.playgroundTraffic = func() error { started++; return nil }
	r := h.run("--playground", "-e", "SHOW TOPICS;")
	if r.code != 0 || started != 1 || !strings.Contains(r.stderr, "playground: live traffic:") {
		t.Fatalf("traffic started %d times:\n%s", started, r)
	}
	r = h.run("--playground", "--playground-static", "-e", "SHOW TOPICS;")
	if r.code != 0 || started != 1 || strings.Contains(r.stderr, "live traffic") {
		t.Fatalf("--playground-static started the traffic (%d):\n%s", started, r)
	}
	h.env[playgroundStaticEnv] = "1"
	r = h.run("--playground", "-e", "SHOW TOPICS;")
	if r.code != 0 || started != 1 {
		t.Fatalf("%s=1 started the traffic (%d):\n%s", playgroundStaticEnv, started, r)
	}
	delete(h.env, playgroundStaticEnv)
	h.playgroundTraffic = func() error { return errors.New("no producer") }
	r = h.run("--playground", "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: playground: no producer; its data stays as seeded") {
		t.Fatalf("a traffic that does not start must be a warning, the session going on:\n%s", r)
	}
}
