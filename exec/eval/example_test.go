package eval_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The record scan's use of the package: compile WHERE, the SELECT list
// and ORDER BY once on one Compiler, then per record SetRecord, test
// WHERE, and build a row only for records that match. The warning (if
// any) is printed once, after the scan.
func Example() {
	st, _ := lang.Parse("SELECT key, value.total AS total FROM orders WHERE value.total > 100 OR key = 42 ORDER BY total DESC LIMIT 2")
	c := st.(*lang.Consume)

	comp := eval.NewRecordCompiler(eval.Options{Now: time.Now()}) // Now fixes `15m AGO`
	where, _ := comp.Compile(c.Where)
	proj, _ := eval.NewProjection(comp, c.Projection)
	order, _ := eval.NewOrder(comp, c.OrderBy, c.Projection)

	records := []result.Record{
		{Partition: 0, Offset: 7, Key: []byte("a"), Value: []byte(`{"total": 120}`)},
		{Partition: 1, Offset: 3, Key: []byte("b"), Value: []byte(`{"total": 90}`)},
		{Partition: 2, Offset: 5, Key: []byte("c"), Value: []byte(`{"total": 300}`)},
	}
	for i := range records {
		comp.SetRecord(&records[i])
		if !where.True() {
			continue
		}
		keys := order.Keys(nil) // a real scan keeps the top LIMIT by these keys in a heap
		row := proj.Row()
		fmt.Printf("%s %s %d\n", row[0], row[1], keys[0].I)
	}
	var names []string
	for _, col := range proj.Columns() {
		names = append(names, col.Name)
	}
	fmt.Println(strings.Join(names, " "))
	fmt.Println(comp.Warnings.String())
	// Output:
	// a 120 120
	// c 300 300
	// key total
	// key = 42: a text and an integer cannot be compared or combined, so the result is NULL (first at partition 1 offset 3)
}
