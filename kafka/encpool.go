package kafka

import "sync"

// encPool is an encoding reader's pool of the chunks' output buffers (and
// their ends): the merge hands a chunk back once the writer has copied its
// last record out, and a lane copies a later chunk's output into it, so a
// chunk costs no new buffer (an allocation of its size, zeroed first).
// Like keyPool it belongs to one reader and is bounded (max bytes, a
// quarter of the budget): what it holds is live heap the budget does not
// count.
type encPool struct {
	mu     sync.Mutex
	bufs   [][]byte
	ends   [][]int32
	pooled int64
	max    int64
}

func newEncPool(budget int64) *encPool { return &encPool{max: budget / 4} }

// buffers returns a buffer of n bytes and an ends array of k, from the
// pool when one is large enough.
func (p *encPool) buffers(n, k int) ([]byte, []int32) {
	var buf []byte
	var ends []int32
	p.mu.Lock()
	for i := len(p.bufs) - 1; i >= 0; i-- {
		if cap(p.bufs[i]) >= n {
			buf = p.bufs[i][:n]
			p.pooled -= int64(cap(buf))
			p.bufs[i] = p.bufs[len(p.bufs)-1]
			p.bufs[len(p.bufs)-1] = nil
			p.bufs = p.bufs[:len(p.bufs)-1]
			break
		}
	}
	for i := len(p.ends) - 1; i >= 0; i-- {
		if cap(p.ends[i]) >= k {
			ends = p.ends[i][:k]
			p.pooled -= 4 * int64(cap(ends))
			p.ends[i] = p.ends[len(p.ends)-1]
			p.ends[len(p.ends)-1] = nil
			p.ends = p.ends[:len(p.ends)-1]
			break
		}
	}
	if buf == nil {
		p.evictSmallestLocked()
	}
	p.mu.Unlock()
	if buf == nil {
		// A little spare, so that the next chunks, a little longer,
		// reuse it.
		buf = make([]byte, n, n+n/8)
	}
	if ends == nil {
		ends = make([]int32, k, k+k/8)
	}
	return buf, ends
}

// put hands back a spent chunk's buffers; what does not fit under max is
// left to the GC.
func (p *encPool) put(buf []byte, ends []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := int64(cap(buf)); c > 0 && p.pooled+c <= p.max {
		p.bufs = append(p.bufs, buf)
		p.pooled += c
	}
	if c := 4 * int64(cap(ends)); c > 0 && p.pooled+c <= p.max {
		p.ends = append(p.ends, ends)
		p.pooled += c
	}
}

// evictSmallestLocked drops the smallest pooled buffer when none was large
// enough for a chunk: the one allocated instead comes back later, and a
// pool full of buffers smaller than the chunks would turn it away and
// allocate for every chunk (measured: a quarter of a read's chunks).
func (p *encPool) evictSmallestLocked() {
	if len(p.bufs) == 0 {
		return
	}
	small := 0
	for i, b := range p.bufs {
		if cap(b) < cap(p.bufs[small]) {
			small = i
		}
	}
	p.pooled -= int64(cap(p.bufs[small]))
	p.bufs[small] = p.bufs[len(p.bufs)-1]
	p.bufs[len(p.bufs)-1] = nil
	p.bufs = p.bufs[:len(p.bufs)-1]
}
