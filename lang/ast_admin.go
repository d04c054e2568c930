package lang

import "time"

// The administration statements: configs, partitions, group offsets,
// groups and records. They live in their own files so that the language's
// other work (expressions) and this one meet only at the statement lists.

// ResourceKind says which config resource a statement names.
type ResourceKind int

const (
	ResourceTopic   ResourceKind = iota + 1 // TOPIC name
	ResourceBroker                          // BROKER id: that broker's own configs
	ResourceCluster                         // CLUSTER: the dynamic cluster-wide broker defaults
)

// ConfigResource is the TOPIC t, BROKER n or CLUSTER of SHOW CONFIGS and ALTER.
type ConfigResource struct {
	Kind   ResourceKind
	Topic  string // ResourceTopic
	Broker int32  // ResourceBroker
}

// ShowConfigs is SHOW CONFIGS FOR TOPIC t [ALL] | BROKER n [ALL] | CLUSTER,
// then Query like every SHOW.
type ShowConfigs struct {
	Resource ConfigResource
	All      bool // every config, defaults included; never set for CLUSTER
	Query
}

// AlterConfigs is ALTER TOPIC t | BROKER n | CLUSTER with SET (k = 'v', ...)
// and/or UNSET (k, ...). At least one of Set and Unset is non-empty, and no
// name is in both.
type AlterConfigs struct {
	Resource ConfigResource
	Set      []TopicConfig // nil when not written
	Unset    []string      // nil when not written
}

// AlterPartitions is ALTER TOPIC t PARTITIONS n: raise the partition count to n.
type AlterPartitions struct {
	Topic string
	Count int32
}

// ResetKind says where RESET GROUP moves the offsets.
type ResetKind int

const (
	ResetEarliest  ResetKind = iota + 1 // TO EARLIEST (OLDEST, BEGINNING, START)
	ResetLatest                         // TO LATEST (NEWEST, END)
	ResetOffset                         // TO OFFSET n
	ResetTimestamp                      // TO TIMESTAMP t
	ResetAgo                            // TO duration AGO
	ResetShift                          // TO SHIFT BY n (n may be negative)
)

// ResetTarget is the TO clause of RESET GROUP. Only the field of its Kind is set.
type ResetTarget struct {
	Kind      ResetKind
	Offset    int64         // ResetOffset
	Timestamp int64         // ResetTimestamp, epoch milliseconds
	Ago       time.Duration // ResetAgo, > 0
	Shift     int64         // ResetShift
}

// ResetGroup is RESET GROUP g [TOPIC t [PARTITION ...]] TO target [EXECUTE].
type ResetGroup struct {
	Group      string
	Topic      *string // nil: every topic the group has committed offsets for
	Partitions []int32 // nil: every partition of Topic; only with Topic
	To         ResetTarget
	Execute    bool // false: a dry run
}

// DeleteGroup is DELETE GROUP g.
type DeleteGroup struct{ Group string }

// DeleteRecords is DELETE RECORDS FROM t BEFORE (p:o, ...) or
// BEFORE OFFSET n [PARTITION ...], then [EXECUTE].
type DeleteRecords struct {
	Topic        string
	Before       []PartitionOffset // BEFORE (p:o, ...); nil with BeforeOffset
	BeforeOffset *int64            // BEFORE OFFSET n
	Partitions   []int32           // nil: every partition; only with BeforeOffset
	Execute      bool              // false: a dry run
}

func (*ShowConfigs) statement()     {}
func (*AlterConfigs) statement()    {}
func (*AlterPartitions) statement() {}
func (*ResetGroup) statement()      {}
func (*DeleteGroup) statement()     {}
func (*DeleteRecords) statement()   {}
