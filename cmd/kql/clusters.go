package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// A cluster profile is a Kafka client properties file (what --command-config
// reads, with bootstrap.servers, the schema.registry.* keys and kql.* keys)
// named NAME.properties in the profile directory; `kql -c NAME`,
// $KQL_CLUSTER and `\connect NAME` select it.

// profile is a loaded cluster profile.
type profile struct {
	name string
	cc   *commandConfig
}

const profileExt = ".properties"

// profileNameRE is what a profile name may be: a file name without a path.
// Compiled on first use, not at every start.
var profileNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
})

// profileDir is where profiles live: $XDG_CONFIG_HOME/kql/clusters, else
// ~/.config/kql/clusters (the XDG default, as kaf's ~/.kaf is not).
func profileDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "kql", "clusters"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the cluster profiles: neither $XDG_CONFIG_HOME nor $HOME is set")
		}
		home = h
	}
	return filepath.Join(home, ".config", "kql", "clusters"), nil
}

// listProfiles returns the names of the profiles in dir, sorted; none (and
// no error) when the directory does not exist.
func listProfiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster profiles: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), profileExt)
		if ok && !e.IsDir() && profileNameRE().MatchString(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// loadProfile reads the profile name from the profile directory. An
// unknown name is an error that lists the profiles there are and where.
func loadProfile(getenv func(string) string, name string) (*profile, error) {
	dir, err := profileDir(getenv)
	if err != nil {
		return nil, err
	}
	if !profileNameRE().MatchString(name) {
		return nil, fmt.Errorf("cluster profile %q: a profile name is a file name without %s (letters, digits, '.', '_', '-'), as in kql -c prod for %s",
			name, profileExt, filepath.Join(dir, "prod"+profileExt))
	}
	path := filepath.Join(dir, name+profileExt)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, unknownProfileError(dir, name)
	}
	cc, err := loadConfigFile(path, fmt.Sprintf("cluster profile %q", name))
	if err != nil {
		return nil, err
	}
	return &profile{name: name, cc: cc}, nil
}

func unknownProfileError(dir, name string) error {
	names, err := listProfiles(dir)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no cluster profile %q: there are no profiles in %s (a profile is a Kafka client properties file, %s, with bootstrap.servers=host:port)",
			name, dir, filepath.Join(dir, name+profileExt))
	}
	return fmt.Errorf("no cluster profile %q in %s: the profiles are %s", name, dir, strings.Join(names, ", "))
}

// profileSummary is one line of \clusters, read from the file's properties
// alone (no certificate or key file is opened to list it).
type profileSummary struct {
	name, bootstrap, security, readOnly string
	err                                 error
}

func summarizeProfile(dir, name string) profileSummary {
	s := profileSummary{name: name}
	f, err := os.Open(filepath.Join(dir, name+profileExt))
	if err != nil {
		s.err = err
		return s
	}
	defer f.Close()
	props, err := parseProperties(f)
	if err != nil {
		s.err = fmt.Errorf("%s: %w", f.Name(), err)
		return s
	}
	kv := map[string]string{}
	line := map[string]int{}
	for _, p := range props {
		kv[p.key] = strings.TrimSpace(p.value)
		line[p.key] = p.line
	}
	// A kql.readonly kql -c would refuse is an error row, never "no": the
	// list must not call a profile meant to be read-only writable.
	if v, ok := kv["kql.readonly"]; ok && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		s.err = fmt.Errorf("%s:%d: kql.readonly: want true or false, got %q", f.Name(), line["kql.readonly"], v)
		return s
	}
	s.bootstrap = strings.Join(splitBootstrap(kv["bootstrap.servers"]), ",")
	if s.bootstrap == "" {
		s.bootstrap = "(none: $KQL_BOOTSTRAP or localhost:9092)"
	}
	proto := strings.ToUpper(kv["security.protocol"])
	if proto == "" {
		proto = "PLAINTEXT"
	}
	s.security = proto
	if strings.HasPrefix(proto, "SASL_") {
		mech := strings.ToUpper(kv["sasl.mechanism"])
		if mech == "" {
			mech = "(no sasl.mechanism)"
		}
		s.security += " " + mech
	}
	s.readOnly = "no"
	if strings.EqualFold(kv["kql.readonly"], "true") {
		s.readOnly = "yes"
	}
	return s
}
