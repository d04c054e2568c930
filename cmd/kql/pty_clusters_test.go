package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPTYConnectProfile: on a terminal, \connect NAME switches to the
// profile (Tab completes the name) and the prompt names it; a \connect
// that fails leaves the old connection and prompt; \clusters marks the
// current profile; the read-only profile refuses a DROP without asking.
func TestPTYConnectProfile(t *testing.T) {
	_, devBoot := ptyCluster(t)
	prodCluster, prodBoot := ptyCluster(t)
	if err := prodCluster.CreateTopic("payments", 1, nil); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "kql", "clusters")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"dev":     "bootstrap.servers=" + devBoot + "\n",
		"prod":    "bootstrap.servers=" + prodBoot + "\nkql.readonly=true\nkql.prompt.color=red\n",
		"offline": "bootstrap.servers=127.0.0.1:1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".properties"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startPTY(t, map[string]string{"XDG_CONFIG_HOME": cfg}, "--no-history", "-c", "dev")
	s.expect(`cluster profile: dev `)
	s.expect(`dev> `)

	s.send("\\connect pr\t")
	s.expect(`\\connect prod`)
	s.send("\r")
	s.expect(`connected to cluster \S+ \(3 brokers\) at ` + prodBoot)
	s.expect(`read-only: the cluster profile "prod" is read-only`)
	s.expect(`prod> `)
	s.send("SHOW TOPICS;\r")
	s.expect(`payments`)
	s.expect(`prod> `)

	s.send("\\connect offline\r")
	s.expect(`\\connect offline: .*\(still connected to prod \(` + prodBoot + `\)\)`)
	s.expect(`prod> `)
	s.send("SHOW TOPICS;\r")
	s.expect(`payments`)
	s.expect(`\(3 rows\)`)
	s.expect(`prod> `)

	s.send("DROP TOPIC payments;\r")
	s.expect(`error: DROP TOPIC payments: refused, nothing was sent`)
	if s.tryExpect(`\[y/N\]`, 200*time.Millisecond) {
		t.Fatal("a refused statement must not be asked about")
	}
	s.expect(`prod> `)

	s.send("\\clusters\r")
	s.expect(`  dev +` + devBoot + ` +PLAINTEXT +no`)
	s.expect(`\* prod +` + prodBoot + ` +PLAINTEXT +yes`)
	s.expect(`prod> `)

	s.send("\\connect dev\r")
	s.expect(`dev> `)
	s.send("DROP TOPIC orders;\r") // dev is not read-only: the shell asks
	s.expect(`\[y/N\] `)
	s.send("n\r")
	s.expect(`not run`)
	s.expect(`dev> `)
	s.send("\\q\r")
	if err := s.wait(); err != nil {
		t.Fatalf(`\q: kql exited with %v`, err)
	}
}
