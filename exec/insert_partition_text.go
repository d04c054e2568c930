package exec

import "fmt"

// partitionText is a SELECT's partition column as a message names it:
// NULL as SQL writes it, text quoted, a number as itself.
func partitionText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}
