package main

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/kql-dev/kql/lang"
)

// nameCache holds topic and group names for Tab completion. It is filled in
// the background (at start, after each statement, and on a Tab when older
// than cacheMaxAge); a keystroke only ever reads what is there.
type nameCache struct {
	mu         sync.Mutex
	exec       executor
	topics     []string
	groups     []string
	subjects   []string // the schema registry's, when the executor has one
	loaded     time.Time
	refreshing bool
	// profiles lists the cluster profiles, for \connect NAME (nil: none).
	profiles func() []string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

const (
	cacheMaxAge     = 30 * time.Second
	cacheRefreshFor = 5 * time.Second // give up on a slow cluster; try again later
)

func newNameCache(ex executor) *nameCache {
	ctx, cancel := context.WithCancel(context.Background())
	return &nameCache{exec: ex, ctx: ctx, cancel: cancel}
}

// refresh starts a background reload unless one is running.
func (c *nameCache) refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refreshing || c.ctx.Err() != nil {
		return
	}
	c.refreshing = true
	ex := c.exec
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, cacheRefreshFor)
		defer cancel()
		topics, terr := ex.Topics(ctx)
		groups, gerr := ex.Groups(ctx)
		var subjects []string
		var serr error
		if sl, ok := ex.(subjectLister); ok {
			subjects, serr = sl.Subjects(ctx)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.refreshing = false
		if c.exec != ex { // \connect switched clusters meanwhile
			return
		}
		// A failed lookup keeps the names we had: stale completion
		// beats none, and an error has nowhere sensible to go mid-typing.
		if terr == nil {
			c.topics = sortedCopy(topics)
		}
		if gerr == nil {
			c.groups = sortedCopy(groups)
		}
		if serr == nil {
			c.subjects = sortedCopy(subjects)
		}
		if terr == nil && gerr == nil {
			c.loaded = time.Now()
		}
	}()
}

// reset switches to another cluster's names.
func (c *nameCache) reset(ex executor) {
	c.mu.Lock()
	c.exec, c.topics, c.groups, c.subjects, c.loaded = ex, nil, nil, nil, time.Time{}
	c.mu.Unlock()
	c.refresh()
}

// subjectLister is an executor that knows a schema registry's subjects.
type subjectLister interface {
	Subjects(ctx context.Context) ([]string, error)
}

// subjectNames are the registry subjects for completion (nil without one).
func (c *nameCache) subjectNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subjects
}

// close stops a running refresh and waits for it.
func (c *nameCache) close() {
	c.cancel()
	c.wg.Wait()
}

func (c *nameCache) names() (topics, groups []string) {
	c.mu.Lock()
	topics, groups = c.topics, c.groups
	stale := time.Since(c.loaded) > cacheMaxAge
	c.mu.Unlock()
	if stale {
		c.refresh()
	}
	return topics, groups
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// Do implements readline.AutoCompleter. readline appends what we return to
// the line, so each candidate is the rest of the word after what was typed,
// and keywords come back in the case the user is typing in.
func (c *nameCache) Do(line []rune, pos int) ([][]rune, int) {
	if pos > len(line) {
		pos = len(line)
	}
	start := pos
	for start > 0 && !isWordBreak(line[start-1]) {
		start--
	}
	word := string(line[start:pos])
	before := strings.Fields(string(line[:start]))
	if len(before) == 1 && before[0] == `\connect` && c.profiles != nil {
		return toRunes(suffixes(word, c.profiles(), false, "")), len([]rune(word))
	}
	topics, groups := c.names()
	cands := completions(word, before, topics, groups, c.subjectNames())
	out := make([][]rune, len(cands))
	for i, s := range cands {
		out[i] = []rune(s)
	}
	return out, len([]rune(word))
}

func isWordBreak(r rune) bool {
	return unicode.IsSpace(r) || r == '(' || r == ')' || r == ',' || r == ';'
}

// completions returns the suffixes that complete word, given the words
// before it on the line.
func completions(word string, before []string, topics, groups, subjects []string) []string {
	// Meta-commands: \form<Tab>, \format js<Tab>
	if len(before) == 0 && strings.HasPrefix(word, `\`) {
		var names []string
		for _, m := range metaCommands() {
			names = append(names, `\`+m.name)
		}
		return suffixes(word, names, true, " ")
	}
	if len(before) > 0 && strings.HasPrefix(before[0], `\`) {
		switch strings.TrimPrefix(before[0], `\`) {
		case "format":
			return suffixes(word, formatNames, true, "")
		case "help":
			var names []string
			for _, h := range statementHelp() {
				names = append(names, h.Name)
			}
			return keywordSuffixes(word, names)
		}
		return nil
	}

	prev, prev2 := "", ""
	if n := len(before); n > 0 {
		prev = strings.ToUpper(before[n-1])
		if n > 1 {
			prev2 = strings.ToUpper(before[n-2])
		}
	}
	quoted := strings.HasPrefix(word, `"`) || strings.HasPrefix(word, "'") || strings.HasPrefix(word, "`")
	switch {
	case prev == "TOPIC" || prev == "INTO" || prev == "EXISTS" || prev == "OF":
		return nameSuffixes(word, topics)
	case prev == "FROM" && selectFirstFrom(before):
		return nameSuffixes(word, topics) // SELECT key, value FROM t
	case prev == "GROUP":
		return nameSuffixes(word, groups)
	case prev == "SUBJECT" || prev == "SCHEMA":
		return nameSuffixes(word, subjects) // DESCRIBE SUBJECT s, VALUE SCHEMA s
	case prev == "FROM" && (prev2 == "CONSUME" || prev2 == "SELECT" || prev2 == "*" || prev2 == "RECORDS"):
		return nameSuffixes(word, topics) // CONSUME FROM t, SELECT * FROM t
	case prev == "CONSUME" || prev == "PRODUCE" || prev == "*":
		// Only a topic, or the optional keyword before it, can follow.
		out := nameSuffixes(word, topics)
		if !quoted {
			next := "FROM" // CONSUME FROM t, SELECT * FROM t
			if prev == "PRODUCE" {
				next = "INTO"
			}
			out = append(out, keywordSuffixes(word, []string{next})...)
		}
		return out
	case prev == "LIKE" || prev == "MESSAGE":
		return nil // a pattern, or a message name only the schema knows
	}
	if quoted {
		return nil
	}
	if len(before) == 0 {
		// A statement starts with its verb: sh<Tab> is SHOW, not SHIFT.
		return keywordSuffixes(word, statementVerbs)
	}
	if len(before) == 1 && prev == "EXPLAIN" {
		return keywordSuffixes(word, append([]string{"ACCESS"}, statementVerbs...))
	}
	return keywordSuffixes(word, contextKeywords(before))
}

// contextKeywords are the keywords worth offering after before: Kafka's
// multi-word ACL operations (CLUSTER_ACTION, ...) only in the statements
// that take them, so that SHOW CLU<Tab> is still CLUSTER.
func contextKeywords(before []string) []string {
	i := 0
	if len(before) > 1 && strings.EqualFold(before[0], "EXPLAIN") {
		i = 1
	}
	switch strings.ToUpper(before[i]) {
	case "GRANT", "DENY", "REVOKE", "ACCESS":
		return keywords()
	}
	out := keywords()
	return slices.DeleteFunc(out, func(k string) bool { return strings.Contains(k, "_") && slices.Contains(lang.ACLOperations, k) })
}

// selectFirstFrom reports whether the words before end with the first FROM
// of a SELECT with a projection: the topic comes next.
func selectFirstFrom(before []string) bool {
	i := 0
	if len(before) > 0 && strings.EqualFold(before[0], "EXPLAIN") {
		i = 1
	}
	if len(before) <= i || !strings.EqualFold(before[i], "SELECT") {
		return false
	}
	froms := 0
	for _, w := range before[i:] {
		if strings.EqualFold(w, "FROM") {
			froms++
		}
	}
	return froms == 1
}

var statementVerbs = []string{"ABORT", "ALTER", "CANCEL", "CONSUME", "CREATE", "DELETE", "DENY", "DESC", "DESCRIBE", "DROP", "ELECT", "EXPLAIN",
	"GRANT", "PRODUCE", "RESET", "REVOKE", "SELECT", "SHOW"}

// keywordSuffixes matches case-insensitively and answers in the typed case.
func keywordSuffixes(word string, kws []string) []string {
	lower := word != "" && strings.ToLower(word) == word && strings.ToUpper(word) != word
	var out []string
	seen := map[string]bool{}
	for _, k := range kws {
		if len(k) <= len(word) || !strings.EqualFold(k[:len(word)], word) {
			continue
		}
		rest := k[len(word):]
		if lower {
			rest = strings.ToLower(rest)
		} else {
			rest = strings.ToUpper(rest)
		}
		if !seen[rest] {
			seen[rest] = true
			out = append(out, rest+" ")
		}
	}
	sort.Strings(out)
	return out
}

// nameSuffixes completes topic or group names, case-sensitively (Kafka
// names are). A word opened with a quote gets its closing quote; a name that
// must be quoted (lang.QuoteName) is offered whole, quoted, on an empty
// word, since readline can only append to what was typed.
func nameSuffixes(word string, names []string) []string {
	var out []string
	if word != "" && strings.ContainsRune("\"'`", rune(word[0])) {
		q, prefix := word[:1], word[1:]
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n[len(prefix):]+q+" ")
			}
		}
		return out
	}
	for _, n := range names {
		switch quoted := lang.QuoteName(n); {
		case quoted != n && word == "":
			out = append(out, quoted+" ")
		case quoted == n && strings.HasPrefix(n, word) && len(n) > len(word):
			out = append(out, n[len(word):]+" ")
		}
	}
	return out
}

func suffixes(word string, names []string, fold bool, tail string) []string {
	var out []string
	for _, n := range names {
		if len(n) < len(word) {
			continue
		}
		if (fold && strings.EqualFold(n[:len(word)], word)) || (!fold && n[:len(word)] == word) {
			if len(n) > len(word) {
				out = append(out, n[len(word):]+tail)
			}
		}
	}
	sort.Strings(out)
	return out
}
