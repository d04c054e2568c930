package kafka

import (
	"reflect"
	"sync"

	"github.com/twmb/franz-go/pkg/sasl"
)

// A SASL mechanism with a Close (Kerberos's: it destroys the gokrb5
// client, credentials and all) is shared: by a Cluster's two kgo clients
// (the main one and the producer, which is closed and made again by
// resetProducer), and by Clusters dialled with the same Config (\connect
// reuses the current connection's, and on failure the old one stays).
// kgo closes a sasl.ClosingMechanism whenever one client using it closes,
// which would break every later login of the others. So kgo gets the
// mechanism without its Close (sharedMechanism), and the mechanism is
// closed when the last Cluster holding it closes.
type sharedMechanism struct{ sasl.Mechanism }

var saslRefs = struct {
	sync.Mutex
	n map[sasl.Mechanism]int
}{n: map[sasl.Mechanism]int{}}

// kgoSASL is what a kgo client of a Cluster is given for m.
func kgoSASL(m sasl.Mechanism) sasl.Mechanism {
	if _, ok := m.(sasl.ClosingMechanism); ok && reflect.TypeOf(m).Comparable() {
		return sharedMechanism{m}
	}
	return m // nothing to close, or kgo's own closing (an uncomparable type cannot be counted)
}

// retainSASL counts a Cluster holding m; releaseSASL undoes it and closes
// m after the last.
func retainSASL(m sasl.Mechanism) {
	if _, ok := kgoSASL(m).(sharedMechanism); !ok {
		return
	}
	saslRefs.Lock()
	saslRefs.n[m]++
	saslRefs.Unlock()
}

func releaseSASL(m sasl.Mechanism) {
	if _, ok := kgoSASL(m).(sharedMechanism); !ok {
		return
	}
	saslRefs.Lock()
	saslRefs.n[m]--
	last := saslRefs.n[m] <= 0
	if last {
		delete(saslRefs.n, m)
	}
	saslRefs.Unlock()
	if last {
		m.(sasl.ClosingMechanism).Close()
	}
}
