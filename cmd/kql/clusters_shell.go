package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fatih/color"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/schema"
)

// readOnlyGuard says why writing statements are refused and what to do.
type readOnlyGuard struct {
	why string // "kql runs with --read-only", `cluster profile "prod" (FILE) has kql.readonly=true`
	fix string
}

// setGuard sets the read-only guard from --read-only and from the
// kql.readonly of the properties file connected with (cc, nil for none).
func (a *app) setGuard(cc *commandConfig) {
	switch {
	case a.opts.readOnly:
		a.guard = &readOnlyGuard{
			why: "kql runs with --read-only",
			fix: "run kql without --read-only to change the cluster",
		}
	case cc != nil && cc.readOnly && a.profile != nil && cc == a.profile.cc:
		a.guard = &readOnlyGuard{
			why: fmt.Sprintf("the cluster profile %q is read-only (kql.readonly=true in %s)", a.profile.name, cc.path),
			fix: "to change this cluster, use a profile without kql.readonly=true",
		}
	case cc != nil && cc.readOnly:
		a.guard = &readOnlyGuard{
			why: fmt.Sprintf("--command-config %s has kql.readonly=true", cc.path),
			fix: "to change this cluster, use a properties file without kql.readonly=true",
		}
	default:
		a.guard = nil
	}
}

// refusal is the read-only guard's error for stmt, or nil when it may run.
// It decides from the statement alone (exec.WritesToCluster), so nothing
// is sent for a refused statement: not even the confirmation's counts.
func (a *app) refusal(stmt lang.Statement) error {
	if a.guard == nil || !exec.WritesToCluster(stmt) {
		return nil
	}
	verb := "it writes to the cluster"
	if exec.StatementAccess(stmt) == exec.AccessUnknown {
		verb = "kql does not know it to be read-only"
	}
	return fmt.Errorf("refused, nothing was sent: %s and %s; %s (a dry run without EXECUTE, and every SHOW, DESCRIBE, CONSUME and EXPLAIN, still work)",
		verb, a.guard.why, a.guard.fix)
}

// prompt is the primary prompt: the profile's name ("prod> "), else kql's,
// coloured with kql.prompt.color when colour is on.
func (a *app) prompt() string {
	if a.profile == nil {
		return promptStart
	}
	name := a.profile.name
	if c := a.profile.cc.promptColor; c != "" && a.colorOut {
		col := color.New(promptColors[c])
		col.EnableColor()
		name = col.Sprint(name)
	}
	return name + "> "
}

// current names the connection for messages: `prod (host:port)` or `host:port`.
func (a *app) current() string {
	where := strings.Join(a.kcfg.Bootstrap, ",")
	if a.profile != nil {
		return fmt.Sprintf("%s (%s)", a.profile.name, where)
	}
	return where
}

// profileNames lists the profiles for completion; none when they cannot be
// read (a keystroke has nowhere to report an error).
func (a *app) profileNames() []string {
	dir, err := profileDir(a.ios.Getenv)
	if err != nil {
		return nil
	}
	names, _ := listProfiles(dir)
	return names
}

// connectProfile is \connect NAME: the profile alone decides how to
// connect (the command line's connection flags were for the first
// cluster); --read-only still holds. On any failure the old connection
// stays.
func (a *app) connectProfile(ctx context.Context, name string) error {
	still := func(err error) error {
		return fmt.Errorf(`\connect %s: %v (still connected to %s)`, name, err, a.current())
	}
	p, err := loadProfile(a.ios.Getenv, name)
	if err != nil {
		return still(err)
	}
	for _, w := range p.cc.warnings {
		a.warnf("%s", w)
	}
	s, err := resolveSettings(&options{}, a.ios.Getenv, p.cc, a.promptPassword)
	if err != nil {
		return still(err)
	}
	cfg, err := s.kafkaConfig()
	if err != nil {
		return still(err)
	}
	var reg *schema.Registry
	regDesc := ""
	if len(s.registry.urls) > 0 {
		rc, err := s.registry.schemaConfig()
		if err != nil {
			return still(err)
		}
		if reg, err = schema.Open(rc); err != nil {
			return still(err)
		}
		regDesc = s.registry.describe()
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := a.rt.dial(dctx, cfg)
	if err != nil {
		reg.Close()
		if se := kafka.AsSecurityError(err); se != nil {
			return still(fmt.Errorf("%s", s.securityMessage(se)))
		}
		return still(err)
	}
	a.kcfg, a.sett, a.profile = cfg, s, p
	if a.reg != reg {
		a.reg.Close() // its keep-alive sockets to the old registry
	}
	a.reg, a.regDesc = reg, regDesc
	a.setGuard(p.cc)
	// The new profile's local schemas (kql.schema.*, kql.proto.*) replace
	// the old file's; mappings made with \set in this session stay.
	ls := localSchemasFrom(a.opts, p.cc)
	if a.local != nil {
		ls.Session = a.local.Session
	}
	a.local = ls
	a.setConnection(conn)
	if w := s.insecureWarning(); w != "" {
		a.warnf("%s", w)
	}
	if a.ios.ErrTTY {
		a.banner(ctx)
	} else {
		a.noticef("connected to %s", a.current())
	}
	return nil
}

// metaClusters is \clusters: one line per profile, * on the current one.
func (a *app) metaClusters(context.Context, string) error {
	dir, err := profileDir(a.ios.Getenv)
	if err != nil {
		return fmt.Errorf(`\clusters: %v`, err)
	}
	names, err := listProfiles(dir)
	if err != nil {
		return fmt.Errorf(`\clusters: %v`, err)
	}
	if len(names) == 0 {
		fmt.Fprintf(a.stderr, "No cluster profiles in %s: a profile is NAME.properties there, a Kafka client properties file with bootstrap.servers=host:port.\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(a.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  name\tbootstrap\tsecurity\tread-only")
	var broken []string
	for _, n := range names {
		mark := " "
		if a.profile != nil && a.profile.name == n {
			mark = "*"
		}
		s := summarizeProfile(dir, n)
		if s.err != nil {
			// A row, not a gap; the message goes below the grid, which
			// it would otherwise stretch.
			fmt.Fprintf(tw, "%s %s\t(error, below)\t?\t?\n", mark, n)
			broken = append(broken, fmt.Sprintf("%s: %v", n, s.err))
			continue
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\n", mark, n, s.bootstrap, s.security, s.readOnly)
	}
	tw.Flush()
	for _, b := range broken {
		fmt.Fprintf(a.stderr, "error: profile %s\n", b)
	}
	fmt.Fprintf(a.stderr, "Profiles are %s/NAME.properties; \\connect NAME switches.\n", dir)
	return nil
}

func toRunes(ss []string) [][]rune {
	out := make([][]rune, len(ss))
	for i, s := range ss {
		out[i] = []rune(s)
	}
	return out
}
