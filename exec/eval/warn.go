package eval

import "fmt"

// Warnings holds the one warning a statement's evaluation reports: the
// first expression that met values it could not handle (kinds that do not
// compare, text where a boolean was needed, a division by zero), and the
// first record (partition:offset) or row where it happened. Later cases
// are counted, not reported one by one, so a million bad records print one
// line.
type Warnings struct {
	msg   string
	count int64
}

// String returns the warning, or "" when there is none.
func (w *Warnings) String() string {
	if w == nil || w.msg == "" {
		return ""
	}
	if w.count > 1 {
		return fmt.Sprintf("%s; %d times in all", w.msg, w.count)
	}
	return w.msg
}

// Count is how many times a value could not be handled.
func (w *Warnings) Count() int64 { return w.count }

func (w *Warnings) add(e *env, format string, args ...any) {
	w.count++
	if w.msg != "" {
		return
	}
	where := ""
	switch {
	case e.rec != nil:
		where = fmt.Sprintf("first at partition %d offset %d", e.rec.Partition, e.rec.Offset)
	case e.rowNum > 0:
		where = fmt.Sprintf("first at row %d", e.rowNum)
	}
	w.msg = fmt.Sprintf(format, args...) + " (" + where + ")"
}

func article(k Kind) string {
	switch k {
	case Int, Headers:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func (w *Warnings) incomparable(e *env, text string, a, b Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s and %s cannot be compared or combined, so the result is NULL", text, article(a), article(b))
}

func (w *Warnings) notBoolean(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s is not TRUE or FALSE, so it counts as NULL", text, article(k))
}

func (w *Warnings) notText(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: it works on text, not on %s, so the result is NULL", text, article(k))
}

func (w *Warnings) divisionByZero(e *env, text string) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: division by zero, so the result is NULL", text)
}

func (w *Warnings) notNumber(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s is not a number, so it is left out", text, article(k))
}
