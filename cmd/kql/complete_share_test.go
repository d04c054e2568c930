package main

import (
	"context"
	"sort"
	"testing"
	"time"
)

// Tab completes the share group statements' keywords, and group names
// after SHARE GROUP (the names come from ListGroups, share groups among them).
func TestCompletionOfShareGroupStatements(t *testing.T) {
	c := &nameCache{topics: []string{"orders"}, groups: []string{"billing", "work-queue"}, loaded: time.Now(), ctx: context.Background()}
	for line, want := range map[string]string{
		"SHOW SH":                               "ARE ",
		"show share gr":                         "oups ",
		"DESCRIBE SHARE GROUP wo":               "rk-queue ",
		"RESET SHARE GROUP wo":                  "rk-queue ",
		"DELETE SHARE GROUP work-":              "queue ",
		"RESET SHARE GROUP work-queue TOPIC or": "ders ",
	} {
		got, _ := c.Do([]rune(line), len(line))
		var strs []string
		for _, g := range got {
			strs = append(strs, string(g))
		}
		sort.Strings(strs)
		if !contains(strs, want) {
			t.Errorf("%q: want %q among %q", line, want, strs)
		}
	}
}
