package exec

import "github.com/kql-dev/kql/result"

// explainOffsetFetchNaming is the request kafka.FetchOffsets adds after an
// OffsetFetch on one condition: an OffsetFetch v10+ answer names topics by
// id only, and when it fails a partition of a topic the newest metadata
// does not know (SHOW GROUPS' ListGroups leaves metadata of no topics; a
// topic deleted since), it reads every topic once to name that partition
// in the error. Every statement whose EXPLAIN lists an OffsetFetch lists
// this step right after it.
func explainOffsetFetchNaming(p *planner) {
	p.step++
	p.rows = append(p.rows, result.Row{p.step, "Metadata", nil, "any broker",
		"all topics, only if OffsetFetch fails a partition of a topic it names by id only that the newest metadata does not know (to name it in the error)"})
}
