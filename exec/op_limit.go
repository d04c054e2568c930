package exec

// limitFeed is the plan's Skip/Limit over a child feed: it leaves out the
// first skip rows, then passes at most limit and stops reading its child.
type limitFeed struct {
	rowFeed
	skip, limit int64
	passed      int64
}

func (l *limitFeed) advance() bool {
	for l.skip > 0 {
		if !l.rowFeed.advance() {
			return false
		}
		l.skip--
	}
	if l.passed >= l.limit {
		return false
	}
	if !l.rowFeed.advance() {
		return false
	}
	l.passed++
	return true
}
