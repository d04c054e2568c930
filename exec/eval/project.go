package eval

import (
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Projection is a SELECT list without aggregates, over records.
type Projection struct {
	items []*Expr
	cols  []result.Column
}

// NewProjection compiles items on c.
func NewProjection(c *Compiler, items []lang.SelectItem) (*Projection, error) {
	p := &Projection{}
	for _, it := range items {
		x, err := c.Compile(it.X)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, x)
		p.cols = append(p.cols, result.Column{Name: it.Name(), Type: x.Type})
	}
	return p, nil
}

// Columns are the projection's output columns: named by AS, else by the
// expression's text.
func (p *Projection) Columns() []result.Column { return p.cols }

// Row evaluates the projection on the compiler's current record. The row
// owns its bytes (they are copied), so it outlives the record; call it
// only for records that passed WHERE.
func (p *Projection) Row() result.Row {
	row := make(result.Row, len(p.items))
	for i, x := range p.items {
		row[i] = x.Eval().Any(p.cols[i].Type)
	}
	return row
}

// Order is an ORDER BY over records or rows: Keys evaluates the sort keys
// of the current record or row, and Compare orders two key lists.
type Order struct {
	exprs []*Expr
	desc  []bool
}

// NewOrder compiles items on c; an item that names a projection's AS name
// (OrderItem.Alias) sorts by that item's expression.
func NewOrder(c *Compiler, items []lang.OrderItem, projection []lang.SelectItem) (*Order, error) {
	o := &Order{}
	for _, it := range items {
		e := it.X
		if it.Alias > 0 && it.Alias <= len(projection) {
			e = projection[it.Alias-1].X
		}
		x, err := c.Compile(e)
		if err != nil {
			return nil, err
		}
		o.exprs = append(o.exprs, x)
		o.desc = append(o.desc, it.Desc)
	}
	return o, nil
}

// Keys appends the current record's or row's sort keys to dst, copied so
// they outlive the record.
func (o *Order) Keys(dst []Value) []Value {
	for _, x := range o.exprs {
		dst = append(dst, x.Eval().Clone())
	}
	return dst
}

// Compare orders two key lists from Keys: negative when a sorts first.
// NULL sorts after every value ascending, before them descending.
func (o *Order) Compare(a, b []Value) int { return CompareKeys(a, b, o.desc) }
