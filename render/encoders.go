package render

import (
	"fmt"

	"github.com/kql-dev/kql/result"
)

// RecordEncoderFor returns the constructor of the per-record encoder that
// writes format (jsonl, csv or tsv) for the six record columns: the very
// code a CONSUME runs in its lanes. It exists for kql-bench's reference
// contender, which times the least any client must do to write kql's
// output (a bare consumer plus this encoder), so that kql's own overhead
// can be told apart from the cost of the format itself.
func RecordEncoderFor(format string) (func() result.RecordEncoder, error) {
	switch format {
	case "jsonl":
		return newJSONLEncoder, nil
	case "csv":
		return newCSVEncoder, nil
	case "tsv":
		return newTSVEncoder, nil
	}
	return nil, fmt.Errorf("no per-record encoder for format %q (jsonl, csv or tsv)", format)
}
