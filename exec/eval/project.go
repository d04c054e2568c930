package eval

import (
	"fmt"

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
	if err := uniqueNames(items); err != nil {
		return nil, err
	}
	return p, nil
}

// uniqueNames refuses a SELECT list with two columns of one name: json
// and jsonl write a row as an object keyed by the names, and an object
// with a key twice keeps only one of them in most readers. Renaming one
// quietly (a _2 suffix) would hand a json reader a key nobody wrote, and
// could meet a real column of that name.
func uniqueNames(items []lang.SelectItem) error {
	first := map[string]int{}
	for i, it := range items {
		name := it.Name()
		j, ok := first[name]
		if !ok {
			first[name] = i
			continue
		}
		return fmt.Errorf("SELECT list: items %d and %d are both named %s; a row needs distinct column names (json and jsonl key each row's object by them): give one a name of its own with AS, as in %s AS %s",
			j+1, i+1, lang.QuoteName(name), lang.FormatExpr(it.X), lang.QuoteName(fmt.Sprintf("item%d", i+1)))
	}
	return nil
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
