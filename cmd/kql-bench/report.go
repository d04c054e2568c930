package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// median of xs (the mean of the middle two for an even count); xs is not
// modified.
func median[T ~int64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// stats are a contender's medians.
type stats struct {
	runs             int
	wall, user, sys  time.Duration
	minWall, maxWall time.Duration
	rssKiB           int64
	registryMax      int64 // the most schema registry requests of a run
}

func summarize(ss []sample) stats {
	col := func(f func(sample) time.Duration) time.Duration {
		v := make([]time.Duration, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		return median(v)
	}
	rss := make([]int64, len(ss))
	for i, s := range ss {
		rss[i] = s.rssKiB
	}
	walls := make([]time.Duration, len(ss))
	var reg int64
	for i, s := range ss {
		walls[i] = s.wall
		reg = max(reg, s.registry)
	}
	return stats{
		runs:    len(ss),
		minWall: slices.Min(walls),
		maxWall: slices.Max(walls),
		wall:    col(func(s sample) time.Duration { return s.wall }),
		user:    col(func(s sample) time.Duration { return s.user }),
		sys:     col(func(s sample) time.Duration { return s.sys }),
		rssKiB:  median(rss),

		registryMax: reg,
	}
}

func fmtSec(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func mib(kib int64) float64 { return float64(kib) / 1024 }

// verdict says whether measured <= target, and by how much it is missed or
// met, relative to the target.
func verdict(measured, target float64) string {
	if target <= 0 {
		return ""
	}
	pct := (measured/target - 1) * 100
	if measured <= target {
		return fmt.Sprintf("met (%.0f%% under)", max(-pct, 0)) // no "-0%"
	}
	return fmt.Sprintf("MISSED by %.0f%%", pct)
}

// verdictAtLeast is verdict for a goal that is a minimum.
func verdictAtLeast(measured, target float64) string {
	if measured >= target {
		return fmt.Sprintf("met (%.0f%% over)", (measured/target-1)*100)
	}
	return fmt.Sprintf("MISSED by %.0f%%", (1-measured/target)*100)
}

// goalRow is one line of the goals table.
type goalRow struct{ what, measured, target, verdict string }

// report prints the medians of every contender and each of issue 9's and
// issue 10's goals, met or missed and by how much.
func report(w io.Writer, clusterName string, c *config, cs []*contender, res map[string][]sample, ws writeStats) {
	st := make(map[string]stats)
	for _, k := range cs {
		st[k.name] = summarize(res[k.name])
	}
	floor := st[floorName]

	fmt.Fprintf(w, "%s: %d records of %d B values in %d partitions; medians of %d interleaved rounds, each run its own process\n",
		clusterName, c.n, valueSize, c.partitions, c.runs)
	width := len("contender")
	for _, k := range cs {
		width = max(width, len(k.name))
	}
	// "wall range" is the fastest and slowest run: on a shared machine it
	// says how far to trust the medians.
	fmt.Fprintf(w, "%-*s  %4s  %8s  %15s  %8s  %8s  %9s  %10s  %7s\n", width, "contender", "runs", "wall", "wall range", "user", "sys", "peak RSS", "records/s", "x floor")
	for _, k := range cs {
		s := st[k.name]
		rate, ratio := "-", "-"
		if k.records > 0 && s.wall > 0 {
			rate = fmt.Sprintf("%.0fk", float64(k.records)/s.wall.Seconds()/1000)
		}
		if k.records == c.n && floor.wall > 0 {
			ratio = fmt.Sprintf("%.2f", s.wall.Seconds()/floor.wall.Seconds())
		}
		fmt.Fprintf(w, "%-*s  %4d  %8s  %15s  %8s  %8s  %5.0f MiB  %10s  %7s\n", width, k.name, s.runs,
			fmtSec(s.wall), fmtSec(s.minWall)+"-"+fmtSec(s.maxWall), fmtSec(s.user), fmtSec(s.sys), mib(s.rssKiB), rate, ratio)
	}

	var rows []goalRow
	for _, k := range cs {
		g, s := k.goal, st[k.name]
		if ref, ok := st[g.wallRef]; ok && g.wallRef != "" && ref.wall > 0 {
			r := s.wall.Seconds() / ref.wall.Seconds()
			rows = append(rows, goalRow{k.name + ": wall / " + g.wallRef, fmt.Sprintf("%.2fx", r), fmt.Sprintf("<= %.1fx", g.wallMax), verdict(r, g.wallMax)})
		}
		if ref, ok := st[g.wallRef]; ok && g.userMax > 0 && ref.user > 0 {
			r := s.user.Seconds() / ref.user.Seconds()
			rows = append(rows, goalRow{k.name + ": user CPU / " + g.wallRef, fmt.Sprintf("%.2fx", r), fmt.Sprintf("<= %.1fx", g.userMax), verdict(r, g.userMax)})
		}
		if g.rssMaxMiB > 0 {
			rows = append(rows, goalRow{k.name + ": peak RSS", fmt.Sprintf("%.0f MiB", mib(s.rssKiB)), fmt.Sprintf("<= %.0f MiB", g.rssMaxMiB), verdict(mib(s.rssKiB), g.rssMaxMiB)})
		}
		if g.registryMax > 0 {
			rows = append(rows, goalRow{k.name + ": registry requests per run",
				registryMeasured(s, k.registryLog), fmt.Sprintf("<= %d", g.registryMax), verdict(float64(s.registryMax), float64(g.registryMax))})
		}
		if ref, ok := st[g.flatRef]; ok && g.flatRef != "" && ref.rssKiB > 0 {
			r := float64(s.rssKiB) / float64(ref.rssKiB)
			rows = append(rows, goalRow{fmt.Sprintf("%s: peak RSS at %d / at %d records", k.name, k.records, c.n),
				fmt.Sprintf("%.2fx (%.0f / %.0f MiB)", r, mib(s.rssKiB), mib(ref.rssKiB)), fmt.Sprintf("<= %.2fx", g.flatMax), verdict(r, g.flatMax)})
		}
	}
	// "About one write per 64 KiB": a 64 KiB buffer also flushed at the end
	// of each batch writes a little more often than that; at most 4 writes
	// per 3 x 64 KiB (48 KiB a write on average) counts as met.
	const writeTarget = "~64 KiB/write (>= 48)"
	if ws.note != "" {
		rows = append(rows, goalRow{"write syscalls", "not measured", writeTarget, ws.note})
	} else if ws.writes > 0 {
		per := float64(ws.bytes) / float64(ws.writes) / 1024
		rows = append(rows, goalRow{ws.contender + ": write syscalls to stdout",
			fmt.Sprintf("%d writes, %.1f KiB/write", ws.writes, per), writeTarget, verdictAtLeast(per, 48)})
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "goals (issues 9 and 10):")
	cols := [3]int{len("goal"), len("measured"), len("target")}
	for _, r := range rows {
		cols[0], cols[1], cols[2] = max(cols[0], len(r.what)), max(cols[1], len(r.measured)), max(cols[2], len(r.target))
	}
	fmt.Fprintf(w, "  %-*s  %-*s  %-*s  %s\n", cols[0], "goal", cols[1], "measured", cols[2], "target", "verdict")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %-*s  %-*s  %s\n", cols[0], r.what, cols[1], r.measured, cols[2], r.target, r.verdict)
	}
}

// registryMeasured is the most requests a run made, and what the last run
// asked for: "1 (most of 3 runs; last: GET /schemas/ids/1)".
func registryMeasured(s stats, last []string) string {
	m := fmt.Sprintf("%d (most of %d runs", s.registryMax, s.runs)
	if len(last) > 0 {
		shown := last[:min(len(last), 3)]
		m += "; last: " + strings.Join(shown, ", ")
		if len(last) > len(shown) {
			m += fmt.Sprintf(", ... %d more", len(last)-len(shown))
		}
	}
	return m + ")"
}

// machine describes where the numbers come from.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%s; %d CPUs (%s); %s %s; Linux %s", time.Now().Format(time.RFC3339), runtime.NumCPU(), model,
		runtime.Version(), runtime.GOARCH, strings.TrimSpace(string(kernel)))
}

// loadavg is /proc/loadavg, so a reader can tell a quiet run from a busy one.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
