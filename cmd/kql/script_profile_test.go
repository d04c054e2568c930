package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdProfile is the testscript command
//
//	profile NAME [key=value ...]
//
// which writes the cluster profile $XDG_CONFIG_HOME/kql/clusters/NAME.properties
// (mode 0600) with those properties, one per line; $VARS in them are
// expanded by testscript, so bootstrap.servers=$KQL_BOOTSTRAP works.
func cmdProfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: profile NAME [key=value ...]")
	}
	cfg := ts.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(cfg) {
		// kql ignores a relative one, as the XDG spec says.
		ts.Fatalf("profile: set XDG_CONFIG_HOME to an absolute path first (env XDG_CONFIG_HOME=$WORK/config)")
	}
	dir := filepath.Join(cfg, "kql", "clusters")
	ts.Check(os.MkdirAll(dir, 0o700))
	text := ""
	if len(args) > 1 {
		text = strings.Join(args[1:], "\n") + "\n"
	}
	ts.Check(os.WriteFile(filepath.Join(dir, args[0]+".properties"), []byte(text), 0o600))
}
