package lang

// The access-control statements (issue 18): SHOW ACLS, GRANT, DENY,
// REVOKE and EXPLAIN ACCESS. Like the administration statements they live
// in their own files and meet the rest of the language at the statement
// lists.
//
// Operations, resource types and pattern types are Kafka's own
// (org.apache.kafka.common.acl.AclOperation, resource.ResourceType,
// resource.PatternType), written as Kafka's enums print them: READ,
// IDEMPOTENT_WRITE, TRANSACTIONAL_ID, PREFIXED. A principal is Kafka's
// "Type:name" text, quoted: 'User:alice', 'User:*'.

// ACLOperations are Kafka's ACL operations, in Kafka's enum order. ALL
// stands for every operation in a binding; it is not a request's operation.
var ACLOperations = []string{"ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
	"DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

// ACLResourceKind is the kind of resource an ACL binding names.
type ACLResourceKind int

const (
	ACLTopic           ACLResourceKind = iota + 1 // TOPIC name
	ACLGroup                                      // GROUP name
	ACLCluster                                    // CLUSTER (Kafka's resource name kafka-cluster)
	ACLTransactionalID                            // TRANSACTIONAL ID name
)

// String is Kafka's name of the resource type: TOPIC, GROUP, CLUSTER,
// TRANSACTIONAL_ID.
func (k ACLResourceKind) String() string {
	switch k {
	case ACLTopic:
		return "TOPIC"
	case ACLGroup:
		return "GROUP"
	case ACLCluster:
		return "CLUSTER"
	case ACLTransactionalID:
		return "TRANSACTIONAL_ID"
	}
	return "UNKNOWN"
}

// ACLClusterName is the resource name of the CLUSTER resource.
const ACLClusterName = "kafka-cluster"

// ACLResource is the ON clause: a resource, and for GRANT, DENY and REVOKE
// whether the name is a PREFIXED pattern. The name '*' (LITERAL) is Kafka's
// wildcard: every resource of the kind.
type ACLResource struct {
	Kind     ACLResourceKind
	Name     string // ACLClusterName for ACLCluster
	Prefixed bool   // PREFIXED; never for ACLCluster, never in SHOW ACLS or EXPLAIN ACCESS
}

// ShowACLs is SHOW ACLS [ON resource] [FOR 'principal'] Query
// (MetaColumns: principal, host, operation, permission, resource_type,
// resource_name, pattern_type, matched_by). With ON, the bindings that
// apply to that resource: its own LITERAL ones, the LITERAL '*' of its
// kind and every PREFIXED one whose prefix starts its name; matched_by says
// which (LITERAL, WILDCARD, PREFIXED). Without ON every binding, matched_by
// NULL.
type ShowACLs struct {
	On        *ACLResource // nil: every resource
	Principal *string      // FOR 'principal'; nil: every principal
	Query
}

// Grant is GRANT ops ON resource [PREFIXED] TO 'principal' [HOST 'h'],
// and DENY the same with Deny set: one binding per operation.
type Grant struct {
	Deny       bool
	Operations []string // from ACLOperations, each once, in the order written
	Resource   ACLResource
	Principal  string
	Host       *string // nil: not written (every host, '*')
}

// Revoke is REVOKE ops ON resource [PREFIXED] FROM 'principal' [HOST 'h']
// [EXECUTE]: it removes the bindings of those operations on exactly that
// pattern (LITERAL name, or PREFIXED), for the principal, with either
// permission (ALLOW and DENY), from the host given or, without HOST, from
// every host. Without EXECUTE it is a dry run that lists them.
type Revoke struct {
	Operations []string
	Resource   ACLResource
	Principal  string
	Host       *string // nil: bindings of any host
	Execute    bool
}

// ExplainAccess is EXPLAIN ACCESS 'principal' op ON resource [HOST 'h']:
// would the authorizer let principal do op on resource (a LITERAL name),
// and which bindings decide. Operation is never ALL.
type ExplainAccess struct {
	Principal string
	Operation string
	Resource  ACLResource
	Host      *string // nil: not written (only bindings for every host apply)
}

func (*ShowACLs) statement()      {}
func (*Grant) statement()         {}
func (*Revoke) statement()        {}
func (*ExplainAccess) statement() {}
