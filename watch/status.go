package watch

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// The group statuses, in Burrow's sense (linkedin/Burrow wiki, "Consumer Lag
// Evaluation Rules"), computed from the samples \watch took rather than from
// every commit as Burrow does.
const (
	StatusOK            = "ok"
	StatusCatchingUp    = "catching up"
	StatusFallingBehind = "falling behind"
	StatusStalled       = "stalled"
	StatusStopped       = "stopped"
	StatusRewound       = "rewound"
	StatusMeasuring     = "measuring"
)

// groupSample is what one refresh said about one group row: its lag, and
// when the result has them its committed offset, the age of its oldest
// unconsumed record (lag_ms, max_lag_ms) and its member count.
type groupSample struct {
	at           time.Time
	lag          float64
	hasLag       bool
	committed    float64
	hasCommitted bool
	lagMs        float64
	hasLagMs     bool
	members      int // -1: the result does not say
}

// minSamples is how many samples with a lag a status needs beyond "ok".
const minSamples = 3

// stallRate is how fast the age of the oldest unconsumed record must grow,
// in ms per second, to count as "committed offsets not moving": a group
// that commits nothing sees that record age exactly as fast as the clock.
const stallRate = 900

// groupStatus evaluates the window (oldest first, the latest last), after
// Burrow's rules where they fit samples taken at each refresh:
//
//  1. lag zero at any sample of the window: ok;
//  2. the committed offset went back between two samples: rewound;
//  3. no members and lag not shrinking: stopped (Burrow's "stop" is "no
//     commits for longer than the window"; without members nothing commits);
//  4. committed offsets the same over the whole window while lag > 0:
//     stalled, once the window is full (measuring before); where the
//     result has no committed offset, an oldest
//     unconsumed record that ages as fast as the clock says the same;
//  5. lag grew over the window and went down at no sample of it: falling
//     behind (Burrow: lag increasing between every pair of offsets while
//     they move; a lag that goes up and down, as a busy topic's does
//     between commits, is ok however its ends compare); lag shrank:
//     catching up, with the time to zero at the window's rate; neither: ok.
//
// The second result is the eta of "catching up" (0 otherwise).
func groupStatus(window []groupSample) (string, time.Duration) {
	var w []groupSample
	for _, s := range window {
		if s.hasLag {
			w = append(w, s)
		}
	}
	if len(w) == 0 || !window[len(window)-1].hasLag {
		return "", 0 // lag unknown (nothing committed): nothing to say
	}
	for _, s := range w {
		if s.lag <= 0 {
			return StatusOK, 0
		}
	}
	if len(w) < minSamples {
		return StatusMeasuring, 0
	}
	first, last := w[0], w[len(w)-1]
	for i := 1; i < len(w); i++ {
		if w[i].hasCommitted && w[i-1].hasCommitted && w[i].committed < w[i-1].committed {
			return StatusRewound, 0
		}
	}
	if last.members == 0 && last.lag >= first.lag {
		return StatusStopped, 0
	}
	if stalled(w) {
		// Burrow judges a stall over its whole window of commits; over
		// the first refreshes a healthy consumer between two commits
		// (every 5 s by default) looks the same.
		if len(w) < Window {
			return StatusMeasuring, 0
		}
		return StatusStalled, 0
	}
	secs := last.at.Sub(first.at).Seconds()
	change := last.lag - first.lag
	switch {
	case change > 0 && neverShrank(w):
		return StatusFallingBehind, 0
	case change < 0 && secs > 0:
		rate := -change / secs
		// A big lag shrinking slowly is years away: a float past
		// MaxInt64 nanoseconds would convert to a negative eta.
		eta := last.lag / rate
		if eta >= maxETA.Seconds() {
			return StatusCatchingUp, maxETA
		}
		return StatusCatchingUp, time.Duration(eta * float64(time.Second))
	}
	return StatusOK, 0
}

// neverShrank reports whether the lag went down at no step of the window.
func neverShrank(w []groupSample) bool {
	for i := 1; i < len(w); i++ {
		if w[i].lag < w[i-1].lag {
			return false
		}
	}
	return true
}

// stalled reports Burrow's rule 4 over a window with lag > 0 throughout.
func stalled(w []groupSample) bool {
	committed := true
	for _, s := range w {
		committed = committed && s.hasCommitted
	}
	if committed {
		for _, s := range w[1:] {
			if s.committed != w[0].committed {
				return false
			}
		}
		return true
	}
	for _, s := range w {
		if !s.hasLagMs {
			return false // no way to tell a stall from a slow consumer
		}
	}
	first, last := w[0], w[len(w)-1]
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return false
	}
	for i := 1; i < len(w); i++ {
		if w[i].lagMs < w[i-1].lagMs {
			return false // the oldest unconsumed record got younger: it moved
		}
	}
	return (last.lagMs-first.lagMs)/secs >= stallRate
}

// statusText is the status as shown: "catching up (eta 4m)".
func statusText(status string, eta time.Duration) string {
	if status == StatusCatchingUp {
		return fmt.Sprintf("%s (eta %s)", status, formatETA(eta))
	}
	return status
}

// maxETA is the longest eta shown as a number; longer is ">99d".
const maxETA = 99 * 24 * time.Hour

// formatETA rounds to what a person plans with: 40s, 4m, 1h20m, 3d.
func formatETA(d time.Duration) string {
	switch {
	case d >= maxETA:
		return ">" + strconv.Itoa(int(maxETA.Hours()/24)) + "d"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(math.Ceil(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(math.Round(d.Minutes())))
	case d < 48*time.Hour:
		h := int(d.Hours())
		m := int(math.Round(d.Minutes())) - 60*h
		if m == 60 {
			h, m = h+1, 0
		}
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	default:
		return fmt.Sprintf("%dd", int(math.Round(d.Hours()/24)))
	}
}
