package lang

// The share group statements (KIP-932, Kafka 4.x): a share group reads a
// topic as a queue, each record delivered to one member and acknowledged,
// with a share-partition start offset per partition instead of a committed
// consumer position. They live in their own files; the statement lists
// meet them in one place each.

// ShowShareGroups is SHOW SHARE GROUPS [LIKE 'glob'] Query.
type ShowShareGroups struct {
	Like *string
	Query
}

// DescribeShareGroup is DESCRIBE SHARE GROUP name Query (alias DESC).
type DescribeShareGroup struct {
	Group string
	Query
}

// ResetShareGroup is RESET SHARE GROUP g [TOPIC t [PARTITION ...]] TO
// target [EXECUTE]: it moves each partition's share-partition start offset.
// To is never ResetShift: a share group has no consumer position to shift.
type ResetShareGroup struct {
	Group      string
	Topic      *string // nil: every topic the group has start offsets for
	Partitions []int32 // nil: every partition of Topic; only with Topic
	To         ResetTarget
	Execute    bool // false: a dry run
}

// DeleteShareGroup is DELETE SHARE GROUP g [TOPIC t | TOPIC (t, ...)]:
// without TOPIC the whole group, else only its start offsets for those
// topics.
type DeleteShareGroup struct {
	Group  string
	Topics []string // nil: the whole group
}

func (*ShowShareGroups) statement()    {}
func (*DescribeShareGroup) statement() {}
func (*ResetShareGroup) statement()    {}
func (*DeleteShareGroup) statement()   {}
