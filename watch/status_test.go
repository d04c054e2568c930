package watch

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// samples builds a window from lags, one sample every 2 s; committed and
// members are applied to every sample when given (committed: one per lag).
func samples(lags []float64, committed []float64, members int) []groupSample {
	var w []groupSample
	for i, l := range lags {
		s := groupSample{at: t0.Add(time.Duration(i) * 2 * time.Second), lag: l, hasLag: true, members: members}
		if committed != nil {
			s.committed, s.hasCommitted = committed[i], true
		}
		w = append(w, s)
	}
	return w
}

// rising is a full window's values from v, step apart; still, v throughout.
func rising(v, step float64) []float64 {
	out := make([]float64, Window)
	for i := range out {
		out[i] = v + float64(i)*step
	}
	return out
}

func still(v float64) []float64 { return rising(v, 0) }

func withLagMs(w []groupSample, ms ...float64) []groupSample {
	for i := range w {
		w[i].lagMs, w[i].hasLagMs = ms[i], true
	}
	return w
}

func TestGroupStatus(t *testing.T) {
	tests := []struct {
		name   string
		window []groupSample
		want   string
		eta    time.Duration
	}{
		{"caught up now", samples([]float64{50, 20, 0}, nil, 1), StatusOK, 0},
		{"zero once in the window (rule 1)", samples([]float64{0, 30, 40, 50}, []float64{10, 10, 10, 10}, 1), StatusOK, 0},
		{"lag unknown: nothing committed", []groupSample{{at: t0}}, "", 0},
		{"too few samples", samples([]float64{5, 6}, nil, 1), StatusMeasuring, 0},
		{"committed offset went back (rule 2)", samples([]float64{5, 6, 90}, []float64{100, 101, 10}, 1), StatusRewound, 0},
		{"no members, lag growing", samples([]float64{5, 6, 9}, nil, 0), StatusStopped, 0},
		{"no members, lag flat", samples([]float64{5, 5, 5}, []float64{7, 7, 7}, 0), StatusStopped, 0},
		{"committed offsets not moving (rule 4)", samples(rising(5, 4), still(7), 1), StatusStalled, 0},
		{"committed still, nothing written", samples(still(5), still(7), 1), StatusStalled, 0},
		// Refreshes every 2 s, commits every 5 s: 3 refreshes can fall
		// between two commits of a consumer that keeps up.
		{"committed still over the first refreshes only", samples([]float64{5, 9, 14}, []float64{7, 7, 7}, 1), StatusMeasuring, 0},
		{"oldest unconsumed record ages as fast as the clock", withLagMs(samples(rising(5, 4), nil, 3), rising(1000, 2000)...), StatusStalled, 0},
		{"oldest unconsumed record ages as fast as the clock, first refreshes", withLagMs(samples([]float64{5, 9, 14}, nil, 3), 1000, 3000, 5000), StatusMeasuring, 0},
		{"oldest unconsumed record ages slower: it moves", withLagMs(samples([]float64{5, 9, 14}, nil, 3), 1000, 2000, 3000), StatusFallingBehind, 0},
		{"oldest unconsumed record got younger", withLagMs(samples([]float64{5, 9, 14}, nil, 3), 1000, 200, 4400), StatusFallingBehind, 0},
		{"offsets move, lag grows (rule 5)", samples([]float64{10, 17, 24, 31}, []float64{5, 8, 11, 14}, 1), StatusFallingBehind, 0},
		{"lag grows, no committed offsets known", samples([]float64{10, 12, 30}, nil, 2), StatusFallingBehind, 0},
		// 1000 -> 600 in 4 s: 100/s, 600 left: 6 s.
		{"lag shrinks", samples([]float64{1000, 800, 600}, []float64{0, 200, 400}, 1), StatusCatchingUp, 6 * time.Second},
		// Commits every 5 s, refreshes every 2 s: the lag saws up and
		// down, and the window's ends say nothing (Burrow's example 4).
		{"busy topic: lag up and down, higher at the end", samples([]float64{100, 130, 90, 120, 140}, []float64{0, 0, 70, 70, 70}, 1), StatusOK, 0},
		{"keeps pace with a backlog", samples([]float64{100, 120, 100}, []float64{0, 50, 100}, 1), StatusOK, 0},
		// 2e9 left at 0.25/s: 253 years, past what a Duration holds.
		{"a huge lag shrinking slowly", samples([]float64{2e9 + 1, 2e9 + 0.5, 2e9}, nil, 1), StatusCatchingUp, maxETA},
		{"members unknown, lag shrinks", samples([]float64{900, 600, 300}, nil, -1), StatusCatchingUp, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, eta := groupStatus(tt.window)
			if got != tt.want || eta != tt.eta {
				t.Errorf("groupStatus = %q, eta %v; want %q, eta %v", got, eta, tt.want, tt.eta)
			}
		})
	}
}

func TestStatusText(t *testing.T) {
	tests := []struct {
		eta  time.Duration
		want string
	}{
		{1500 * time.Millisecond, "catching up (eta 2s)"},
		{4*time.Minute + 10*time.Second, "catching up (eta 4m)"},
		{80 * time.Minute, "catching up (eta 1h20m)"},
		{2 * time.Hour, "catching up (eta 2h)"},
		{119*time.Minute + 50*time.Second, "catching up (eta 2h)"},
		{100 * time.Hour, "catching up (eta 4d)"},
		{maxETA, "catching up (eta >99d)"},
	}
	for _, tt := range tests {
		if got := statusText(StatusCatchingUp, tt.eta); got != tt.want {
			t.Errorf("statusText(%v) = %q, want %q", tt.eta, got, tt.want)
		}
	}
	if got := statusText(StatusStalled, 0); got != "stalled" {
		t.Errorf("statusText(stalled) = %q", got)
	}
}
