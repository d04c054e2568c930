package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestACLOperationTwoPhaseCommitIsKafkas: TWO_PHASE_COMMIT (code 15, on a
// TRANSACTIONAL_ID) goes out as Kafka's code, not UNKNOWN, and a binding
// of it reads back by its name, in every request that carries operations.
func TestACLOperationTwoPhaseCommitIsKafkas(t *testing.T) {
	const twoPC kmsg.ACLOperation = 15
	if got := describeACLsRequest(ACLFilter{Operation: "TWO_PHASE_COMMIT"}).Operation; got != twoPC {
		t.Errorf("a DescribeAcls/DeleteAcls filter of TWO_PHASE_COMMIT sends operation %d, want %d", got, twoPC)
	}
	if got := describeACLsRequest(ACLFilter{Operation: "IDEMPOTENT_WRITE"}).Operation; got != kmsg.ACLOperationIdempotentWrite {
		t.Errorf("IDEMPOTENT_WRITE sends operation %d", got)
	}
	resp := kmsg.NewPtrDescribeACLsResponse()
	res := kmsg.NewDescribeACLsResponseResource()
	res.ResourceType, res.ResourceName, res.ResourcePatternType = kmsg.ACLResourceTypeTransactionalId, "tx", kmsg.ACLResourcePatternTypeLiteral
	a := kmsg.NewDescribeACLsResponseResourceACL()
	a.Principal, a.Host, a.Operation, a.PermissionType = "User:a", "*", twoPC, kmsg.ACLPermissionTypeAllow
	res.ACLs = append(res.ACLs, a)
	resp.Resources = append(resp.Resources, res)
	if got := describedBindings(resp); len(got) != 1 || got[0].Operation != "TWO_PHASE_COMMIT" {
		t.Errorf("a TWO_PHASE_COMMIT binding reads back as %+v", got)
	}
}
