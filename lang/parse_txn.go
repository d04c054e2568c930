package lang

import (
	"math"
	"strings"
	"time"
)

const (
	producerIDRange = "a producer id is 0 to 9223372036854775807"
	epochRange      = "a producer epoch is 0 to 32767"
)

// showTxn converts SHOW TRANSACTIONS and SHOW HANGING TRANSACTIONS.
func (ps *parseState) showTxn(g *gShow) (Statement, *Error) {
	var st Queryable = &ShowTransactions{}
	if h := g.Txn.Hanging; h != nil {
		sh := &ShowHangingTransactions{}
		seen := clauses{}
		for _, cl := range h.Clauses {
			if cl.Topic != nil {
				if e := ps.once(seen, "ON TOPIC", "ON TOPIC", cl.Pos); e != nil {
					return nil, e
				}
				name, e := ps.name(cl.Topic, "topic")
				if e != nil {
					return nil, e
				}
				sh.Topic = &name
				continue
			}
			if e := ps.once(seen, "OLDER THAN", "OLDER THAN", cl.Pos); e != nil {
				return nil, e
			}
			d, err := time.ParseDuration(cl.Older.Text)
			if err != nil {
				e := ps.errAt(cl.Older.Pos, "%s is not a duration", cl.Older.Text)
				e.Hint = "a duration is a number and a unit (ns, us, ms, s, m, h), as in 15m, 1h30m or 1.5h"
				return nil, e
			}
			if d <= 0 {
				e := ps.errAt(cl.Older.Pos, "OLDER THAN %s is not positive", cl.Older.Text)
				e.Hint = "OLDER THAN is how long ago a transaction last wrote, as in OLDER THAN 15m"
				return nil, e
			}
			sh.OlderThan = &d
		}
		st = sh
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) describeTransaction(g *gDescribe) (Statement, *Error) {
	if g.Name.Str != "" && len(g.Name.Str) <= 2 { // '' or ""
		return nil, ps.errAt(g.Name.Pos, "a transactional id cannot be empty")
	}
	id, e := ps.name(g.Name, "transactional id")
	if e != nil {
		return nil, e
	}
	st := &DescribeTransaction{ID: id}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

// abort converts ABORT TRANSACTION: PARTITION, PRODUCER and EPOCH in any
// order, each once, all three required (an abort marker names exactly one
// producer epoch on exactly one partition).
func (ps *parseState) abort(g *gAbort) (Statement, *Error) {
	topic, e := ps.name(g.Topic, "topic")
	if e != nil {
		return nil, e
	}
	st := &AbortTransaction{Topic: topic, Execute: g.Execute}
	seen := clauses{}
	for _, cl := range g.Clauses {
		switch {
		case cl.Part != nil:
			if e := ps.once(seen, "PARTITION", "PARTITION", cl.Pos); e != nil {
				return nil, e
			}
			if st.Partition, e = ps.partition(cl.Part); e != nil {
				return nil, e
			}
		case cl.Producer != nil:
			if e := ps.once(seen, "PRODUCER", "PRODUCER", cl.Pos); e != nil {
				return nil, e
			}
			if st.ProducerID, e = ps.number(cl.Producer, 0, math.MaxInt64, "producer id", producerIDRange); e != nil {
				return nil, e
			}
		default:
			if e := ps.once(seen, "EPOCH", "EPOCH", cl.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(cl.Epoch, 0, math.MaxInt16, "producer epoch", epochRange)
			if e != nil {
				return nil, e
			}
			st.ProducerEpoch = int16(v)
		}
	}
	var missing []string
	for _, c := range []string{"PARTITION", "PRODUCER", "EPOCH"} {
		if _, ok := seen[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		i := len(ps.toks) - 1
		if g.Execute {
			i-- // point at EXECUTE: the clauses belong before it
		}
		e := ps.errAtToken(i, "ABORT TRANSACTION needs %s: an abort names one producer epoch on one partition", joinAnd(missing))
		for _, c := range missing {
			e.Expected = append(e.Expected, c+" n")
		}
		e.Hint = "SHOW HANGING TRANSACTIONS ON TOPIC " + QuoteName(topic) + " lists them; for example: ABORT TRANSACTION ON TOPIC " +
			QuoteName(topic) + " PARTITION 0 PRODUCER 4001 EPOCH 0 (a dry run; add EXECUTE to abort)"
		return nil, e
	}
	return st, nil
}

func joinAnd(words []string) string {
	switch len(words) {
	case 1:
		return words[0]
	case 2:
		return words[0] + " and " + words[1]
	}
	out := ""
	for i, w := range words {
		switch {
		case i == len(words)-1:
			out += ", and " + w
		case i > 0:
			out += ", " + w
		default:
			out = w
		}
	}
	return out
}

// txnHint explains the slips around the transaction statements that the
// grammar alone reports badly.
func (ps *parseState) txnHint(i int, word string) string {
	prev := strings.ToUpper(ps.toks[i-1].text)
	switch {
	case prev == "TRANSACTIONS" && (word == "ON" || word == "OLDER") && i == 2:
		return "ON TOPIC and OLDER THAN go with SHOW HANGING TRANSACTIONS, as in SHOW HANGING TRANSACTIONS ON TOPIC orders OLDER THAN 30m"
	case prev == "TRANSACTION" && i >= 2 && strings.EqualFold(ps.toks[i-2].text, "ABORT"):
		return "ABORT TRANSACTION ON TOPIC t PARTITION p PRODUCER id EPOCH e: SHOW HANGING TRANSACTIONS lists the producers and epochs to abort"
	case prev == "DESCRIBE" || prev == "DESC":
		if word == "TRANSACTIONS" {
			return "DESCRIBE TRANSACTION 'transactional.id' describes one; SHOW TRANSACTIONS lists them"
		}
	}
	return ""
}
