package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/lang"
)

// boundResume gives a resume statement's SELECT the upper end of what the
// failed INSERT checked, when it checked (INSERT INTO TOPIC expr, whose
// write copies exactly the records its dry run saw): per source partition
// its last checked offset, as a WHERE the user can read and edit,
//
//	WHERE (<the INSERT's WHERE>) AND (partition = 0 AND offset <= 41 OR ...)
//
// Without it, records that arrived after the check would be read by the
// resume as well: past the end the failed INSERT would have stopped at,
// and, with a LIMIT, in place of checked records (newer partitions' older
// timestamps come first in the merge). A partition the check saw nothing
// of gets nothing. The resume's own dry run checks its records again.
func (p *insertPlan) boundResume(sel *lang.Consume) error {
	if p.upTo == nil {
		return nil
	}
	parts := make([]int32, 0, len(p.upTo))
	for sp := range p.upTo {
		parts = append(parts, sp)
	}
	slices.Sort(parts)
	var alts []string
	for _, sp := range parts {
		alts = append(alts, fmt.Sprintf("partition = %d AND offset <= %d", sp, p.upTo[sp]))
	}
	bound := strings.Join(alts, " OR ")
	if len(alts) == 0 {
		bound = "false"
	}
	where := bound
	if sel.Where != nil {
		where = "(" + lang.FormatExpr(sel.Where) + ") AND (" + bound + ")"
	}
	q, err := lang.Parse("SELECT * FROM x WHERE " + where)
	if err != nil {
		return fmt.Errorf("the resume's bound: %w", err)
	}
	sel.Where = q.(*lang.Consume).Where
	return nil
}
