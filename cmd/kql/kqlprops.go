package main

import (
	"sort"
	"strings"

	"github.com/fatih/color"
)

// kqlKeys are the kql.* properties of a cluster profile (or a
// --command-config file) that kql acts on. Every kql.* key is kept in
// commandConfig.kql as written, so that a feature with keys of its own
// (kql.schema.<topic>.value) reads them there; one kql does not know is
// named in the "ignoring" warning like any other key, so that a typo in
// kql.readonly is never silent.
var kqlKeys = map[string]bool{
	"kql.readonly":     true,
	"kql.prompt.color": true,
}

// promptColors are the values kql.prompt.color takes.
var promptColors = map[string]color.Attribute{
	"black":   color.FgBlack,
	"red":     color.FgRed,
	"green":   color.FgGreen,
	"yellow":  color.FgYellow,
	"blue":    color.FgBlue,
	"magenta": color.FgMagenta,
	"cyan":    color.FgCyan,
	"white":   color.FgWhite,
}

func promptColorNames() string {
	names := make([]string, 0, len(promptColors))
	for n := range promptColors {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// kqlProps reads the kql.* keys of a properties file into cc.
func kqlProps(cc *commandConfig, kv map[string]property, bad func(key, format string, a ...any) error) error {
	for k, p := range kv {
		if strings.HasPrefix(k, "kql.") {
			cc.kql[k] = p
		}
	}
	if p, ok := kv["kql.readonly"]; ok {
		switch strings.ToLower(strings.TrimSpace(p.value)) {
		case "true":
			cc.readOnly = true
		case "false":
		default:
			// Refused rather than guessed: a read-only guard that is
			// silently off is worse than a profile that does not load.
			return bad("kql.readonly", "want true or false, got %q", p.value)
		}
	}
	if p, ok := kv["kql.prompt.color"]; ok {
		v := strings.ToLower(strings.TrimSpace(p.value))
		if _, ok := promptColors[v]; !ok {
			return bad("kql.prompt.color", "unknown colour %q (want one of %s)", p.value, promptColorNames())
		}
		cc.promptColor = v
	}
	return nil
}
