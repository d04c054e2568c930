package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ACLs: DescribeAcls, CreateAcls and DeleteAcls go to any broker. On
// KRaft a broker answers DescribeAcls from its own authorizer's copy of
// the metadata log, and forwards CreateAcls and DeleteAcls to the active
// controller (KIP-590), which writes them to the log; every broker's
// authorizer then applies them a moment later (see WaitACLs).

// The Kafka API names, as kql's traces and EXPLAIN print them.
const (
	APIDescribeACLs = "DescribeAcls"
	APICreateACLs   = "CreateAcls"
	APIDeleteACLs   = "DeleteAcls"
)

// ACLBinding is one ACL: a principal may (ALLOW) or may not (DENY) do an
// operation on a resource pattern, from a host. Every field is Kafka's own
// text: operations READ, IDEMPOTENT_WRITE, ...; resource types TOPIC,
// GROUP, CLUSTER, TRANSACTIONAL_ID, ...; pattern types LITERAL, PREFIXED.
type ACLBinding struct {
	Principal    string
	Host         string
	Operation    string
	Permission   string // ALLOW or DENY
	ResourceType string
	ResourceName string
	PatternType  string
}

// String names the binding in messages.
func (b ACLBinding) String() string {
	return fmt.Sprintf("%s %s %s from host %s on %s %q (%s)", b.Permission, b.Principal, b.Operation, b.Host, b.ResourceType, b.ResourceName, b.PatternType)
}

// ACLFilter selects bindings, as Kafka's AclBindingFilter: an empty string
// or nil field matches anything (ANY). PatternType MATCH (DescribeAcls and
// DeleteAcls only) matches the LITERAL name, the LITERAL '*' and every
// PREFIXED pattern that starts the name.
type ACLFilter struct {
	ResourceType string  // "": ANY
	ResourceName *string // nil: any name
	PatternType  string  // "": ANY
	Principal    *string
	Host         *string
	Operation    string // "": ANY
	Permission   string // "": ANY
}

// CompareACLs orders bindings for output: resource type, name, pattern,
// principal, host, operation, permission.
func CompareACLs(a, b ACLBinding) int {
	return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
		cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
}

// ACLError is a broker's refusal of an ACL request (or of one binding or
// filter in it). errors.Is finds the Kafka error, so an authorization
// failure is reported with the principal kql is.
type ACLError struct {
	API     string
	Broker  int32
	Addr    string
	What    string // the binding or filter, "" for the whole request
	Err     error  // a *kerr.Error
	Message string // the broker's own explanation
}

func (e *ACLError) Error() string {
	msg := fmt.Sprintf("%s to broker %d (%s)", e.API, e.Broker, e.Addr)
	if e.What != "" {
		msg += ", " + e.What
	}
	if IsAuthorization(e.Err) {
		// The authorizer checks the CLUSTER resource for every ACL request.
		need := "DESCRIBE"
		if e.API != APIDescribeACLs {
			need = "ALTER"
		}
		return msg + fmt.Sprintf(": %s: not authorized: %s needs the %s operation on the CLUSTER resource (a super user can GRANT %s ON CLUSTER); ask the cluster's operator",
			kerrName(e.Err), e.API, need, need)
	}
	if IsSecurityDisabled(e.Err) {
		return msg + ": " + kerrName(e.Err) + ": the broker has no authorizer (authorizer.class.name is not set): it allows every request and keeps no ACLs; " +
			"to use ACLs, set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer on every broker and controller"
	}
	msg += ": " + describe(e.Err)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
func (e *ACLError) Unwrap() error { return e.Err }

// IsSecurityDisabled reports whether err is a broker's SECURITY_DISABLED:
// it runs no authorizer, so it allows every request.
func IsSecurityDisabled(err error) bool { return errors.Is(err, kerr.SecurityDisabled) }

func kerrName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

// aclOpTwoPhaseCommit is Kafka's TWO_PHASE_COMMIT operation (code 15, on a
// TRANSACTIONAL_ID: KIP-939), which kmsg v1.15 does not know: its
// ParseACLOperation refuses the name and its String prints UNKNOWN, so a
// GRANT or REVOKE of it would send UNKNOWN (refused as malformed) and
// SHOW ACLS would print its bindings as UNKNOWN. kql names it itself.
const aclOpTwoPhaseCommit kmsg.ACLOperation = 15

// opName is Kafka's name of an operation.
func opName(op kmsg.ACLOperation) string {
	if op == aclOpTwoPhaseCommit {
		return "TWO_PHASE_COMMIT"
	}
	return op.String()
}

func parseOp(s string) kmsg.ACLOperation {
	if s == "" {
		return kmsg.ACLOperationAny
	}
	if s == "TWO_PHASE_COMMIT" {
		return aclOpTwoPhaseCommit
	}
	v, err := kmsg.ParseACLOperation(s)
	if err != nil {
		return kmsg.ACLOperationUnknown
	}
	return v
}

func parsePerm(s string) kmsg.ACLPermissionType {
	if s == "" {
		return kmsg.ACLPermissionTypeAny
	}
	v, err := kmsg.ParseACLPermissionType(s)
	if err != nil {
		return kmsg.ACLPermissionTypeUnknown
	}
	return v
}

func parseResType(s string) kmsg.ACLResourceType {
	if s == "" {
		return kmsg.ACLResourceTypeAny
	}
	v, err := kmsg.ParseACLResourceType(s)
	if err != nil {
		return kmsg.ACLResourceTypeUnknown
	}
	return v
}

func parsePattern(s string) kmsg.ACLResourcePatternType {
	if s == "" {
		return kmsg.ACLResourcePatternTypeAny
	}
	v, err := kmsg.ParseACLResourcePatternType(s)
	if err != nil {
		return kmsg.ACLResourcePatternTypeUnknown
	}
	return v
}

func describeACLsRequest(f ACLFilter) *kmsg.DescribeACLsRequest {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = parseResType(f.ResourceType)
	req.ResourceName = f.ResourceName
	req.ResourcePatternType = parsePattern(f.PatternType)
	req.Principal = f.Principal
	req.Host = f.Host
	req.Operation = parseOp(f.Operation)
	req.PermissionType = parsePerm(f.Permission)
	return req
}

// String names the filter in traces and messages.
func (f ACLFilter) String() string {
	s := func(v string) string {
		if v == "" {
			return "ANY"
		}
		return v
	}
	p := func(v *string) string {
		if v == nil {
			return "ANY"
		}
		return fmt.Sprintf("%q", *v)
	}
	return fmt.Sprintf("%s %s %s, principal %s, host %s, operation %s, permission %s",
		s(f.ResourceType), p(f.ResourceName), s(f.PatternType), p(f.Principal), p(f.Host), s(f.Operation), s(f.Permission))
}

func (f ACLFilter) item() string {
	name := "*any*"
	if f.ResourceName != nil {
		name = *f.ResourceName
	}
	rt := f.ResourceType
	if rt == "" {
		rt = "ANY"
	}
	item := rt + " " + name
	if f.Operation != "" {
		item = f.Operation + " " + item
	}
	if f.Principal != nil {
		item += " for " + *f.Principal
	}
	return item
}

func describedBindings(resp *kmsg.DescribeACLsResponse) []ACLBinding {
	var out []ACLBinding
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, ACLBinding{Principal: a.Principal, Host: a.Host, Operation: opName(a.Operation),
				Permission: a.PermissionType.String(), ResourceType: r.ResourceType.String(), ResourceName: r.ResourceName,
				PatternType: r.ResourcePatternType.String()})
		}
	}
	slices.SortFunc(out, CompareACLs)
	return out
}

// DescribeACLs lists the bindings f matches, sorted (CompareACLs), from
// any broker; it returns the id of the broker that answered.
func (c *Cluster) DescribeACLs(ctx context.Context, f ACLFilter) ([]ACLBinding, int32, error) {
	resp, by, err := c.AnyBroker(ctx, APIDescribeACLs, []string{f.item()}, describeACLsRequest(f))
	if err != nil {
		return nil, by, err
	}
	r := resp.(*kmsg.DescribeACLsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, by, &ACLError{API: APIDescribeACLs, Broker: by, Addr: c.addr(by), Err: err, Message: deref(r.ErrorMessage)}
	}
	return describedBindings(r), by, nil
}

// ACLResult is one binding's answer to CreateAcls: Err nil when created
// (Kafka creates a binding that exists already without complaint).
type ACLResult struct {
	Binding ACLBinding
	Err     error // *ACLError
}

// CreateACLs creates the bindings with one CreateAcls to any broker (on
// KRaft the broker forwards it to the controller). The request error is
// for the whole request; each binding has its own result, in order.
func (c *Cluster) CreateACLs(ctx context.Context, bs []ACLBinding) ([]ACLResult, int32, error) {
	req := kmsg.NewPtrCreateACLsRequest()
	items := make([]string, len(bs))
	for i, b := range bs {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType = parseResType(b.ResourceType)
		cr.ResourceName = b.ResourceName
		cr.ResourcePatternType = parsePattern(b.PatternType)
		cr.Principal = b.Principal
		cr.Host = b.Host
		cr.Operation = parseOp(b.Operation)
		cr.PermissionType = parsePerm(b.Permission)
		req.Creations = append(req.Creations, cr)
		items[i] = b.Permission + " " + b.Operation + " " + b.ResourceType + " " + b.ResourceName + " " + b.Principal
	}
	resp, by, err := c.AnyBroker(ctx, APICreateACLs, items, req)
	if err != nil {
		return nil, by, err
	}
	r := resp.(*kmsg.CreateACLsResponse)
	if len(r.Results) != len(bs) {
		return nil, by, fmt.Errorf("%s to broker %d (%s): %d results for %d bindings", APICreateACLs, by, c.addr(by), len(r.Results), len(bs))
	}
	out := make([]ACLResult, len(bs))
	for i, res := range r.Results {
		out[i].Binding = bs[i]
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			out[i].Err = &ACLError{API: APICreateACLs, Broker: by, Addr: c.addr(by), What: bs[i].String(), Err: err, Message: deref(res.ErrorMessage)}
		}
	}
	return out, by, nil
}

// ACLDeletion is one filter's answer to DeleteAcls: the bindings it
// removed, each with its own error (nil: removed).
type ACLDeletion struct {
	Filter  ACLFilter
	Deleted []ACLResult
	Err     error // the whole filter failed; *ACLError
}

// DeleteACLs removes every binding each filter matches, with one
// DeleteAcls to any broker (forwarded to the controller on KRaft).
func (c *Cluster) DeleteACLs(ctx context.Context, fs []ACLFilter) ([]ACLDeletion, int32, error) {
	req := kmsg.NewPtrDeleteACLsRequest()
	items := make([]string, len(fs))
	for i, f := range fs {
		df := kmsg.NewDeleteACLsRequestFilter()
		d := describeACLsRequest(f)
		df.ResourceType, df.ResourceName, df.ResourcePatternType = d.ResourceType, d.ResourceName, d.ResourcePatternType
		df.Principal, df.Host, df.Operation, df.PermissionType = d.Principal, d.Host, d.Operation, d.PermissionType
		req.Filters = append(req.Filters, df)
		items[i] = f.item()
	}
	resp, by, err := c.AnyBroker(ctx, APIDeleteACLs, items, req)
	if err != nil {
		return nil, by, err
	}
	r := resp.(*kmsg.DeleteACLsResponse)
	if len(r.Results) != len(fs) {
		return nil, by, fmt.Errorf("%s to broker %d (%s): %d results for %d filters", APIDeleteACLs, by, c.addr(by), len(r.Results), len(fs))
	}
	out := make([]ACLDeletion, len(fs))
	for i, res := range r.Results {
		out[i].Filter = fs[i]
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			out[i].Err = &ACLError{API: APIDeleteACLs, Broker: by, Addr: c.addr(by), What: "filter " + fs[i].String(), Err: err, Message: deref(res.ErrorMessage)}
			continue
		}
		for _, m := range res.MatchingACLs {
			b := ACLBinding{Principal: m.Principal, Host: m.Host, Operation: opName(m.Operation), Permission: m.PermissionType.String(),
				ResourceType: m.ResourceType.String(), ResourceName: m.ResourceName, PatternType: m.ResourcePatternType.String()}
			ar := ACLResult{Binding: b}
			if err := kerr.ErrorForCode(m.ErrorCode); err != nil {
				ar.Err = &ACLError{API: APIDeleteACLs, Broker: by, Addr: c.addr(by), What: b.String(), Err: err, Message: deref(m.ErrorMessage)}
			}
			out[i].Deleted = append(out[i].Deleted, ar)
		}
		slices.SortFunc(out[i].Deleted, func(a, b ACLResult) int { return CompareACLs(a.Binding, b.Binding) })
	}
	return out, by, nil
}

// WaitACLs waits, up to bound, until every broker's own DescribeAcls
// shows the change: each binding of present listed (after CreateAcls), or
// none of gone (after DeleteAcls). The bindings share one resource
// pattern and principal (what one GRANT or REVOKE names), so each broker
// is asked one DescribeAcls per round, directly: its authorizer applies
// the controller's metadata log on its own schedule, and that is what
// decides the next request it serves. It reports whether every broker
// agreed in time.
func (c *Cluster) WaitACLs(ctx context.Context, present, gone []ACLBinding, bound time.Duration) bool {
	all := append(slices.Clone(present), gone...)
	if len(all) == 0 {
		return true
	}
	f := ACLFilter{ResourceType: all[0].ResourceType, ResourceName: &all[0].ResourceName, PatternType: all[0].PatternType,
		Principal: &all[0].Principal}
	m, err := c.Metadata(ctx, []string{})
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var wg sync.WaitGroup
	ok := make([]bool, len(m.Brokers))
	for i, b := range m.Brokers {
		wg.Go(func() {
			for {
				if c.brokerShows(ctx, b.ID, f, present, gone) {
					ok[i] = true
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}

func (c *Cluster) brokerShows(ctx context.Context, broker int32, f ACLFilter, present, gone []ACLBinding) bool {
	resp, err := c.send(ctx, APIDescribeACLs, broker, []string{f.item() + " (until this broker has applied the change)"}, describeACLsRequest(f))
	if err != nil {
		return false
	}
	r := resp.(*kmsg.DescribeACLsResponse)
	if r.ErrorCode != 0 {
		return false
	}
	has := map[ACLBinding]bool{}
	for _, b := range describedBindings(r) {
		has[b] = true
	}
	for _, b := range present {
		if !has[b] {
			return false
		}
	}
	for _, b := range gone {
		if has[b] {
			return false
		}
	}
	return true
}
