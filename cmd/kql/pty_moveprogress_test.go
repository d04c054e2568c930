package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// An import on a terminal shows its progress while it writes (held here on
// the first Produce, so the line is up for as long as the test needs) and
// ends with a summary line on stderr; the result table follows.
func TestPTYImportShowsProgressAndASummary(t *testing.T) {
	c, boot := ptyCluster(t)
	file := filepath.Join(t.TempDir(), "in.jsonl")
	var in strings.Builder
	for range 3 {
		in.WriteString(`{"key":"k","value":"v"}` + "\n")
	}
	if err := os.WriteFile(file, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	var held atomic.Bool
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		if held.CompareAndSwap(false, true) {
			c.SleepControl(func() {
				select {
				case <-ch:
				case <-time.After(time.Minute):
				}
			})
		}
		return nil, nil, false
	})
	var once sync.Once
	release := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("PRODUCE INTO orders FROM FILE '" + file + "';\r")
	s.expect(`\d records, \d B, \d+ records/s, 100%, ETA 0s \(Ctrl-C aborts the open transaction\)`)
	release()
	s.expect(`wrote 3 records, 6 B in `)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatalf("kql exited with %v", err)
	}
}

func TestMoveLine(t *testing.T) {
	for _, tc := range []struct {
		s    result.MoveSnapshot
		want string
	}{
		{result.MoveSnapshot{Records: 500, Bytes: 2048, TotalRecords: 1000}, "500 of 1000 records, 2.0 KiB, 250 records/s, 50%, ETA 2s"},
		{result.MoveSnapshot{Records: 10, Bytes: 100, Input: 25, TotalInput: 100}, "10 records, 100 B, 5 records/s, 25%, ETA 6s"},
		{result.MoveSnapshot{Records: 10, Bytes: 3 << 20}, "10 records, 3.0 MiB, 5 records/s"},
		// An INSERT ... EXECUTE half way through its source range (WHERE
		// kept 40 of the 50 records passed): the ETA is against the range.
		{result.MoveSnapshot{Records: 40, Bytes: 4096, Input: 50, TotalInput: 100}, "40 records, 4.0 KiB, 20 records/s, 50%, ETA 2s"},
		// INSERT ... LIMIT 100 EXECUTE of a range of 10000 offsets: done at
		// 100 records (or at the range's end, WHERE keeping fewer).
		{result.MoveSnapshot{Records: 50, Bytes: 50, Input: 50, TotalRecords: 100, TotalInput: 10000}, "50 of at most 100 records, 50 B, 25 records/s, 50%, ETA 2s"},
		{result.MoveSnapshot{Records: 10, Bytes: 10, Input: 5000, TotalRecords: 100, TotalInput: 10000}, "10 of at most 100 records, 10 B, 5 records/s, 50%, ETA 2s"},
	} {
		if got := moveLine(tc.s, 2*time.Second); got != tc.want {
			t.Errorf("moveLine(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
