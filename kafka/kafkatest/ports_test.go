package kafkatest

import (
	"testing"
)

// A broker restarted on its old ports must not find one taken by a bind to
// port 0 made while it was down: the ports come from below the kernel's
// ephemeral range, where such binds never land.
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	room := lo > portFloor+1000 // else the kernel picks; the ports must still be distinct
	ports, err := freePorts(15)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if room && (p < portFloor || p >= lo) {
			t.Errorf("port %d is outside [%d, %d)", p, portFloor, lo)
		}
		if seen[p] {
			t.Errorf("port %d given twice", p)
		}
		seen[p] = true
	}
}
