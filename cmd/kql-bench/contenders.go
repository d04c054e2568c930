package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchEnv is what every contender needs to know about this run.
type benchEnv struct {
	cfg       *config
	tmp       string // scratch directory for outputs
	kql       string // kql binary
	self      string // this binary, re-executed for -floor and -exec-consume
	kcat      string // "" when kcat is not installed
	bootstrap string // host:port,...
	flatTopic string
	avroTopic string         // the Avro values in the Confluent wire format (issue 10)
	registry  *benchRegistry // the schema registry that decodes them; nil in tests
}

// goal is one target from issue 9 or 10 a contender is held to.
type goal struct {
	wallRef    string  // wall <= wallMax x this contender's wall ("" : no wall goal)
	wallMax    float64 //
	userMax    float64 // user CPU <= userMax x wallRef's user CPU (0: no CPU goal)
	rssMaxMiB  float64 // peak RSS <= this (0: no RSS goal)
	flatRef    string  // peak RSS <= flatMax x this contender's peak RSS ("": none)
	flatMax    float64 //
	writeStats bool    // count this contender's write syscalls once, with strace
	// registryMax: schema registry requests per run <= this (0: no goal).
	registryMax int
}

// contender is one program the bench times. Each run is its own process,
// its stdout goes to a file, and check validates that file after every run
// (untimed), so a run that read too little never counts.
type contender struct {
	name    string
	argv    []string
	records int64         // records one run reads; 0 for one-shot statements
	timeout time.Duration // kill the child after this
	check   func(path string) error
	goal    goal
	// prepare runs before each run, untimed (a writer's empty destination).
	prepare func(context.Context) error

	// registryLog is the schema registry requests of the contender's last
	// run, for the report.
	registryLog []string
}

const (
	floorName      = "floor (franz-go)"
	floorJSONLName = "floor + jsonl encode"
)

// contenders lists what this run times, in the order of the report, and
// notes on what was skipped or substituted.
func contenders(ctx context.Context, e *benchEnv) ([]*contender, []string, error) {
	c := e.cfg
	n := c.n
	limit := func(topic string, from string, lim int64) string {
		return fmt.Sprintf("CONSUME %s FROM %s LIMIT %d", topic, from, lim)
	}
	kqlArgv := func(stmt, format string) []string {
		return []string{e.kql, "-b", e.bootstrap, "-e", stmt, "--format", format}
	}
	var notes []string
	cs := []*contender{
		{name: floorName, argv: []string{e.self, "-floor", "-b", e.bootstrap, "-topic", c.topic},
			records: n, check: checkCount(n)},
		// No goal: the floor plus kql's own jsonl encoder, written in fetch
		// order. What kql jsonl costs beyond it is kql's own overhead (the
		// merge into order, the budget, the routing); what it costs beyond
		// the floor is the price of the format, which no reader escapes.
		{name: floorJSONLName, argv: []string{e.self, "-floor", "-floor-format", "jsonl", "-b", e.bootstrap, "-topic", c.topic},
			records: n, check: checkJSONL(n, true)},
		// Issue 22's goals: jsonl <= 1.3x the floor's wall and <= 1.6x its
		// user CPU, csv and tsv <= 1.5x, table <= 2.5x, all under 64 MiB.
		{name: "kql jsonl OLDEST", argv: kqlArgv(limit(c.topic, "OLDEST", n), "jsonl"),
			records: n, check: checkJSONL(n, true),
			goal: goal{wallRef: floorName, wallMax: 1.3, userMax: 1.6, rssMaxMiB: 64, writeStats: true}},
		{name: "kql jsonl NEWEST", argv: kqlArgv(limit(c.topic, "NEWEST", n), "jsonl"),
			records: n, check: checkJSONL(n, true),
			goal: goal{wallRef: floorName, wallMax: 1.3, userMax: 1.6, rssMaxMiB: 64}},
		{name: "kql csv", argv: kqlArgv(limit(c.topic, "OLDEST", n), "csv"),
			records: n, check: checkDelimited(n),
			goal: goal{wallRef: floorName, wallMax: 1.5, rssMaxMiB: 64}},
		{name: "kql tsv", argv: kqlArgv(limit(c.topic, "OLDEST", n), "tsv"),
			records: n, check: checkDelimited(n),
			goal: goal{wallRef: floorName, wallMax: 1.5, rssMaxMiB: 64}},
		{name: "kql table", argv: kqlArgv(limit(c.topic, "OLDEST", n), "table"),
			records: n, check: checkTable(n),
			goal: goal{wallRef: floorName, wallMax: 2.5, rssMaxMiB: 64}},
	}
	// Issue 8: a WHERE that matches nothing scans every record (the filter
	// runs on each value's bytes) and must be at least as fast as writing
	// them all as jsonl. value.p is 0..9, so p = 30 matches nothing but
	// still reads the JSON path of every record.
	for _, w := range []struct{ name, where string }{
		{"kql WHERE LIKE, no match", "value LIKE '%zzzz%'"},
		{"kql WHERE value.p, no match", "value.p = 30"},
	} {
		stmt := fmt.Sprintf("SELECT * FROM %s WHERE %s LIMIT ALL", c.topic, w.where)
		if !kqlAccepts(ctx, e.kql, stmt) {
			notes = append(notes, fmt.Sprintf("kql rejects %q: %s skipped", stmt, w.name))
			continue
		}
		cs = append(cs, &contender{name: w.name, argv: kqlArgv(stmt, "jsonl"), records: n, check: checkEmpty,
			goal: goal{wallRef: "kql jsonl OLDEST", wallMax: 1.0}})
	}
	avro, avroNotes := avroContenders(ctx, e)
	cs = append(cs, avro...)
	notes = append(notes, avroNotes...)
	if e.kcat != "" {
		cs = append(cs, &contender{name: "kcat -C -J", records: n, check: checkJSONL(n, false),
			argv: []string{e.kcat, "-C", "-J", "-e", "-q", "-o", "beginning", "-b", e.bootstrap, "-t", c.topic}})
	} else {
		notes = append(notes, fmt.Sprintf("%s is not on PATH: the kcat -C -J read and the kcat -L reference are skipped (apt-get install kcat)", c.kcat))
	}

	if c.flat {
		flatTimeout := c.timeout * time.Duration((c.flatN+n-1)/n)
		// LIMIT ALL reads the whole topic (the one seeded with flat-n
		// records); older kql only took LIMIT n up to 1000000.
		stmt := fmt.Sprintf("CONSUME %s FROM OLDEST LIMIT ALL", e.flatTopic)
		if !kqlAccepts(ctx, e.kql, stmt) {
			stmt = limit(e.flatTopic, "OLDEST", c.flatN)
		}
		if kqlAccepts(ctx, e.kql, stmt) {
			cs = append(cs, &contender{name: "kql jsonl flat", argv: kqlArgv(stmt, "jsonl"),
				records: c.flatN, timeout: flatTimeout, check: checkJSONL(c.flatN, true),
				goal: goal{flatRef: "kql jsonl OLDEST", flatMax: 1.10}})
		} else {
			// Until LIMIT ALL lands, kql's parser caps LIMIT at 1000000, so
			// both sides of the flatness check go through the exec API (the
			// same binary, so the same baseline RSS).
			notes = append(notes, fmt.Sprintf("kql rejects %q (LIMIT ALL is not there yet): the flatness check runs CONSUME through kql's exec API in this binary (-exec-consume), at %d and at %d records", stmt, n, c.flatN))
			exe := func(topic string, lim int64) []string {
				return []string{e.self, "-exec-consume", "-b", e.bootstrap, "-topic", topic, "-limit", strconv.FormatInt(lim, 10)}
			}
			cs = append(cs,
				&contender{name: "exec-api jsonl 1x", argv: exe(c.topic, n), records: n, check: checkJSONL(n, true)},
				&contender{name: "exec-api jsonl flat", argv: exe(e.flatTopic, c.flatN), records: c.flatN,
					timeout: flatTimeout, check: checkJSONL(c.flatN, true),
					goal: goal{flatRef: "exec-api jsonl 1x", flatMax: 1.10}})
		}
	}

	// One-shot start-up cost: SHOW TOPICS against kcat's metadata listing
	// (issue 22: at most kcat's wall time).
	topicLine := func(path string) error { return checkContains(path, c.topic) }
	if e.kcat != "" {
		cs = append(cs,
			&contender{name: "kql SHOW TOPICS", argv: []string{e.kql, "-b", e.bootstrap, "-e", "SHOW TOPICS"},
				check: topicLine, goal: goal{wallRef: "kcat -L", wallMax: 1.0}}, // issue 22
			&contender{name: "kcat -L", argv: []string{e.kcat, "-L", "-b", e.bootstrap},
				check: func(path string) error { return checkContains(path, fmt.Sprintf("topic %q", c.topic)) }})
	} else {
		cs = append(cs, &contender{name: "kql SHOW TOPICS", argv: []string{e.kql, "-b", e.bootstrap, "-e", "SHOW TOPICS"}, check: topicLine})
	}
	moves, moveNotes, err := moveContenders(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	cs = append(cs, moves...)
	notes = append(notes, moveNotes...)
	cs = slices.DeleteFunc(cs, func(k *contender) bool { return !c.wants(k.name) })
	if len(cs) == 0 {
		return nil, nil, fmt.Errorf("-only %q matches no contender", c.only)
	}
	if c.baseline != "" {
		// The same kql contenders run by the older binary, goals dropped:
		// a before/after comparison under the same load.
		for _, k := range slices.Clone(cs) {
			if !strings.HasPrefix(k.name, "kql ") || k.argv[0] != e.kql {
				continue
			}
			b := *k
			b.name = "base " + strings.TrimPrefix(k.name, "kql ")
			b.argv = append([]string{c.baseline}, k.argv[1:]...)
			b.goal = goal{}
			cs = append(cs, &b)
		}
	}
	seen := map[string]bool{}
	for _, k := range cs {
		if seen[k.name] {
			// Two contenders of one name would both run and be reported as
			// one, with twice the runs (the -baseline block was once merged
			// in twice).
			return nil, nil, fmt.Errorf("two contenders are named %q", k.name)
		}
		seen[k.name] = true
		if k.timeout == 0 {
			k.timeout = c.timeout
		}
	}
	return cs, notes, nil
}

// avroContenders are issue 10's: the Avro topic read as jsonl without a
// registry (the values come out as hex) and decoded through it (each value a
// nested JSON object), held to: decoding costs at most 2x the same read
// without it, in 64 MiB, with a handful of registry requests per run (the
// schema id is fetched once, not once per record).
func avroContenders(ctx context.Context, e *benchEnv) ([]*contender, []string) {
	c := e.cfg
	n := c.n
	var notes []string
	raw := &contender{records: n, check: checkAvroRaw(n)}
	decoded := &contender{records: n, check: checkAvroDecoded(n)}
	if kqlHasFlag(ctx, e.kql, "--schema-registry") {
		stmt := fmt.Sprintf("CONSUME %s FROM OLDEST LIMIT %d", e.avroTopic, n)
		raw.name = "kql jsonl Avro raw"
		raw.argv = []string{e.kql, "-b", e.bootstrap, "-e", stmt, "--format", "jsonl"}
		decoded.name = "kql jsonl Avro decoded"
		decoded.argv = append(slices.Clone(raw.argv), "--schema-registry", e.registry.URL())
	} else {
		// Both sides through the exec API in this binary, so the ratio
		// compares like with like (the same process, renderer and
		// start-up); only Session.Registry differs.
		notes = append(notes, "kql has no --schema-registry flag yet: the Avro contenders run CONSUME through kql's exec API in this binary (-exec-consume), raw and decoded alike, the decoded one with Session.Registry set")
		exe := []string{e.self, "-exec-consume", "-b", e.bootstrap, "-topic", e.avroTopic, "-limit", strconv.FormatInt(n, 10)}
		raw.name = "exec-api jsonl Avro raw"
		raw.argv = exe
		decoded.name = "exec-api jsonl Avro decoded"
		decoded.argv = append(slices.Clone(exe), "-registry", e.registry.URL())
	}
	decoded.goal = goal{wallRef: raw.name, wallMax: 2.0, rssMaxMiB: 64, registryMax: 5}
	return []*contender{raw, decoded}, notes
}

// kqlHasFlag reports whether kql's --help lists flag.
func kqlHasFlag(ctx context.Context, kql, flag string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, kql, "--help").CombinedOutput()
	return bytes.Contains(out, []byte(flag+" ")) || bytes.Contains(out, []byte(flag+"="))
}

// kqlAccepts reports whether kql's parser takes stmt (kql --check connects
// to nothing).
func kqlAccepts(ctx context.Context, kql, stmt string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, kql, "--check", "-e", stmt).Run() == nil
}

// validateOnce runs k once, untimed, and checks its output.
func validateOnce(ctx context.Context, e *benchEnv, k *contender) error {
	out := filepath.Join(e.tmp, "out")
	defer os.Remove(out)
	if _, err := runContender(ctx, e, k, out); err != nil {
		return err
	}
	return k.check(out)
}

// --- output validators ---

// lineStats is what scanLines learns from a file in one pass: its size, how
// many lines it has (a last line without a newline counts), and its first and
// last lines (each capped at 64 KiB). Outputs reach gigabytes (-flat), so it
// counts newlines a megabyte at a time instead of splitting lines.
type lineStats struct {
	size        int64
	lines       int64
	first, last string
}

func scanLines(path string) (lineStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return lineStats{}, err
	}
	defer f.Close()
	var (
		st        lineStats
		buf       = make([]byte, 1<<20)
		firstDone bool
		first     []byte
		last      []byte // the last complete line so far
		cur       []byte // the bytes after the last newline so far
	)
	for {
		m, err := f.Read(buf)
		chunk := buf[:m]
		st.size += int64(m)
		if nl := bytes.Count(chunk, []byte{'\n'}); nl == 0 {
			cur = appendCapped(cur, chunk)
			if !firstDone {
				first = appendCapped(first, chunk)
			}
		} else {
			st.lines += int64(nl)
			if !firstDone {
				first = appendCapped(first, chunk[:bytes.IndexByte(chunk, '\n')])
				firstDone = true
			}
			j := bytes.LastIndexByte(chunk, '\n')
			if k := bytes.LastIndexByte(chunk[:j], '\n'); k < 0 {
				last = appendCapped(append(last[:0], cur...), chunk[:j])
			} else {
				last = appendCapped(last[:0], chunk[k+1:j])
			}
			cur = appendCapped(cur[:0], chunk[j+1:])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
	}
	if len(cur) > 0 { // a last line without a newline
		st.lines++
		last = cur
	}
	st.first, st.last = string(first), string(last)
	return st, nil
}

func appendCapped(dst, src []byte) []byte {
	if room := 64<<10 - len(dst); len(src) > room {
		src = src[:max(room, 0)]
	}
	return append(dst, src...)
}

// checkCount: the floor prints the number of records it read.
func checkCount(n int64) func(string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || got != n {
			return fmt.Errorf("read %q records, want %d", strings.TrimSpace(string(b)), n)
		}
		return nil
	}
}

// jsonlKeys are the keys of kql's jsonl record (README, CONSUME's columns).
var jsonlKeys = []string{"headers", "key", "offset", "partition", "timestamp", "value"}

// checkJSONL: exactly n lines, the first a JSON object; for kql also with
// exactly the six documented keys.
func checkJSONL(n int64, kqlKeys bool) func(string) error {
	return func(path string) error {
		st, err := scanLines(path)
		if err != nil {
			return err
		}
		if st.lines != n {
			return fmt.Errorf("%d lines, want %d records (one per line)", st.lines, n)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(st.first), &obj); err != nil {
			return fmt.Errorf("first line is not a JSON object (%v): %.200s", err, st.first)
		}
		if kqlKeys {
			if got := slices.Sorted(maps.Keys(obj)); !slices.Equal(got, jsonlKeys) {
				return fmt.Errorf("first line has keys %v, want exactly %v: %.200s", got, jsonlKeys, st.first)
			}
		}
		return nil
	}
}

// checkEmpty: a WHERE that matches nothing writes nothing.
func checkEmpty(path string) error {
	st, err := scanLines(path)
	if err != nil {
		return err
	}
	if st.lines != 0 {
		return fmt.Errorf("%d lines, want none (the WHERE matches no record): %.200s", st.lines, st.first)
	}
	return nil
}

// checkDelimited: csv and tsv are a header line and one line per record
// (the seeded values hold no newline, so no field spans lines).
func checkDelimited(n int64) func(string) error {
	return func(path string) error {
		st, err := scanLines(path)
		if err != nil {
			return err
		}
		if st.lines != n+1 {
			return fmt.Errorf("%d lines, want %d (a header and %d records)", st.lines, n+1, n)
		}
		if !strings.HasPrefix(st.first, "partition") {
			return fmt.Errorf("first line is not the header: %.200s", st.first)
		}
		return nil
	}
}

// checkTable: kql's table is a header, a rule, a line per record and a
// "(N rows)" footer (render/table.go).
func checkTable(n int64) func(string) error {
	return func(path string) error {
		st, err := scanLines(path)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("(%d rows)", n); st.last != want {
			return fmt.Errorf("last line %.200q, want %q", st.last, want)
		}
		if st.lines != n+3 {
			return fmt.Errorf("%d lines, want %d (header, rule, %d rows, footer)", st.lines, n+3, n)
		}
		return nil
	}
}

// checkContains: a one-shot statement's output mentions s.
func checkContains(path, s string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("output does not mention %q", s)
}
