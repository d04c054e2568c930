package lang

// The cluster operation statements: disks, replica moves, leader
// elections, the KRaft quorum and features. They live in their own files
// and meet the others only at the statement lists.

// ShowLogDirs is SHOW LOG DIRS [FOR BROKER n] Query: every broker's log
// directories (or one broker's).
type ShowLogDirs struct {
	Broker *int32 // nil: every broker
	Query
}

// ShowReassignments is SHOW REASSIGNMENTS Query: the replica moves in progress.
type ShowReassignments struct{ Query }

// ShowQuorum is SHOW QUORUM Query: the KRaft metadata quorum's voters and observers.
type ShowQuorum struct{ Query }

// ShowFeatures is SHOW FEATURES Query: the cluster's finalized feature levels.
type ShowFeatures struct{ Query }

// AlterReplicas is ALTER TOPIC t PARTITION p REPLICAS (b, ...) [EXECUTE]:
// move a partition's replicas to these brokers, the first being the
// preferred leader. The parser guarantees at least one broker and no
// broker twice.
type AlterReplicas struct {
	Topic     string
	Partition int32
	Replicas  []int32
	Execute   bool // false: a dry run
}

// CancelReassignment is CANCEL REASSIGNMENT ON TOPIC t PARTITION p [EXECUTE].
type CancelReassignment struct {
	Topic     string
	Partition int32
	Execute   bool // false: a dry run
}

// ElectLeaders is ELECT LEADERS [PREFERRED | UNCLEAN] [FOR TOPIC t
// [PARTITION p, ...]] [EXECUTE]. PREFERRED is the default.
type ElectLeaders struct {
	Unclean    bool
	Topic      *string // nil: every partition of the cluster
	Partitions []int32 // nil: every partition of Topic; only with Topic
	Execute    bool    // false: a dry run
}

func (*ShowLogDirs) statement()        {}
func (*ShowReassignments) statement()  {}
func (*ShowQuorum) statement()         {}
func (*ShowFeatures) statement()       {}
func (*AlterReplicas) statement()      {}
func (*CancelReassignment) statement() {}
func (*ElectLeaders) statement()       {}
