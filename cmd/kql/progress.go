package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kql-dev/kql/result"
)

// progress shows "N rows, R rows/s" on a terminal stderr while a long
// statement runs, and nothing anywhere else. The line is erased before any
// result output is written, so it never ends up mixed into the data.
type progress struct {
	res    result.Result
	active bool
	errOut io.Writer

	rows      atomic.Int64
	mu        sync.Mutex
	shown     bool
	lastWrite time.Time
	start     time.Time
	done      chan struct{}
	stopping  atomic.Bool
	wg        sync.WaitGroup
}

const (
	progressAfter = time.Second            // quick statements never show it
	progressEvery = 250 * time.Millisecond // refresh rate
	progressQuiet = 500 * time.Millisecond // not while results are streaming to the screen
)

func (a *app) startProgress(res result.Result) *progress {
	p := &progress{res: res, errOut: a.stderr, start: time.Now()}
	if !a.ios.ErrTTY || a.opts.quiet {
		return p
	}
	p.active = true
	p.done = make(chan struct{})
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case now := <-t.C:
			p.mu.Lock()
			if now.Sub(p.start) >= progressAfter && now.Sub(p.lastWrite) >= progressQuiet {
				n := p.rows.Load()
				secs := now.Sub(p.start).Seconds()
				if waits := p.res.Stats().Waiting(); len(waits) > 0 {
					// Nothing comes while a leader is gone: say why,
					// and for which partitions.
					fmt.Fprintf(p.errOut, "\r\033[K%s; %d %s so far (Ctrl-C cancels)", waitingLine(waits, now), n, plural(int(n), "row", "rows"))
				} else if read, scanning := p.res.Stats().Scanned(); scanning {
					// A scan with WHERE may read millions of records
					// for a few rows: say how far it has read.
					fmt.Fprintf(p.errOut, "\r\033[K%d records read, %d %s, %.0f records/s (Ctrl-C stops and keeps the rows shown)",
						read, n, plural(int(n), "match", "matches"), float64(read)/secs)
				} else {
					fmt.Fprintf(p.errOut, "\r\033[K%d rows so far, %.0f rows/s (Ctrl-C cancels)", n, float64(n)/secs)
				}
				p.shown = true
			}
			p.mu.Unlock()
		}
	}
}

// clear erases the progress line; the caller holds p.mu.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.errOut, "\r\033[K")
		p.shown = false
	}
}

// interrupt writes something else to the terminal (a warning): the
// progress line is erased first and not redrawn over it at once. p may be
// nil (no statement result yet).
func (p *progress) interrupt(write func()) {
	if p == nil || !p.active {
		write()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.lastWrite = time.Now()
	write()
}

// stop ends the progress line; it may be called more than once (the pager
// stops it when it takes the screen).
func (p *progress) stop() {
	if !p.active || !p.stopping.CompareAndSwap(false, true) {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

func (p *progress) result() result.Result {
	if !p.active {
		return p.res
	}
	if es, ok := p.res.(result.EncodingStream); ok {
		return countingEncoded{countingRecords{countingResult{p}, es}, es}
	}
	if rs, ok := p.res.(result.RecordStream); ok {
		return countingRecords{countingResult{p}, rs}
	}
	return countingResult{p}
}

// countingEncoded keeps a stream's encoding read (records encoded in the
// reader's lanes) while counting: on a terminal, where progress runs, a
// CONSUME written to a file as jsonl, csv or tsv is as fast as in a script.
type countingEncoded struct {
	countingRecords
	es result.EncodingStream
}

func (c countingEncoded) EncodeWith(newEncoder func() result.RecordEncoder) bool {
	return c.es.EncodeWith(newEncoder)
}

func (c countingEncoded) NextEncoded() ([]byte, bool) {
	b, ok := c.es.NextEncoded()
	if ok {
		c.p.rows.Add(1)
	}
	return b, ok
}

func (c countingEncoded) AppendEncoded(dst []byte, size int) ([]byte, int, bool) {
	dst, n, more := c.es.AppendEncoded(dst, size)
	c.p.rows.Add(int64(n))
	return dst, n, more
}

// countingRecords keeps a record stream's fast path while counting.
type countingRecords struct {
	countingResult
	rs result.RecordStream
}

func (c countingRecords) NextRecord() (*result.Record, bool) {
	rec, ok := c.rs.NextRecord()
	if ok {
		c.p.rows.Add(1)
	}
	return rec, ok
}

func (p *progress) writer(w io.Writer) io.Writer {
	if !p.active {
		return w
	}
	return progressWriter{p, w}
}

// countingResult counts the rows it hands out; the rest is the result's
// own (its Stats too: the table sees a FOLLOW turn live through it).
type countingResult struct{ p *progress }

func (c countingResult) Columns() []result.Column { return c.p.res.Columns() }
func (c countingResult) Err() error               { return c.p.res.Err() }
func (c countingResult) Close()                   { c.p.res.Close() }
func (c countingResult) Stats() *result.Stats     { return c.p.res.Stats() }
func (c countingResult) Next() (result.Row, bool) {
	row, ok := c.p.res.Next()
	if ok {
		c.p.rows.Add(1)
	}
	return row, ok
}

type progressWriter struct {
	p *progress
	w io.Writer
}

func (pw progressWriter) Write(b []byte) (int, error) {
	pw.p.mu.Lock()
	pw.p.clear()
	pw.p.lastWrite = time.Now()
	pw.p.mu.Unlock()
	return pw.w.Write(b)
}

// waitingLine says which partitions wait for a leader, by the broker they
// were last read from, and for how long: "waiting for a leader for t/1,
// t/4 (last read from broker 2 at 127.0.0.1:9093) for 4s".
func waitingLine(waits []result.Waiting, now time.Time) string {
	type group struct {
		who string
		tps []string
	}
	var groups []*group
	byWho := map[string]*group{}
	since := now
	for _, w := range waits {
		who := "no broker answered yet"
		if w.Broker >= 0 {
			who = fmt.Sprintf("last read from broker %d at %s", w.Broker, w.Addr)
		}
		g := byWho[who]
		if g == nil {
			g = &group{who: who}
			byWho[who] = g
			groups = append(groups, g)
		}
		g.tps = append(g.tps, w.Partition)
		if w.Since.Before(since) {
			since = w.Since
		}
	}
	const show = 6
	var parts []string
	for _, g := range groups {
		tps := g.tps
		more := ""
		if len(tps) > show {
			more = fmt.Sprintf(" +%d more", len(tps)-show)
			tps = tps[:show]
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s)", strings.Join(tps, ", "), more, g.who))
	}
	return fmt.Sprintf("waiting for a leader for %s for %s", strings.Join(parts, "; "), now.Sub(since).Round(time.Second))
}
