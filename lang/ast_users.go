package lang

// The SCRAM user and client quota statements (issue 18). Like the
// administration statements they live in their own files and meet the
// rest of the language only at the statement lists.
//
// A password is never part of a statement: CREATE USER and ALTER USER ...
// PASSWORD name the user, and the executor asks for the password (a prompt
// without echo, or $KQL_NEW_PASSWORD), so no statement text (history,
// EXPLAIN, an error naming the statement) can hold one.

import "math"

// ScramMechanism is a SASL/SCRAM mechanism a user's credential is for.
type ScramMechanism int

const (
	ScramSHA256 ScramMechanism = iota + 1 // SCRAM-SHA-256
	ScramSHA512                           // SCRAM-SHA-512
)

// String is the mechanism's name, as Kafka and SASL spell it.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return "UNKNOWN"
}

// Kafka's bounds on a SCRAM credential's iterations (ScramMechanism's
// minIterations and maxIterations, the same for both mechanisms).
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// ShowUsers is SHOW USERS Query: one row per SCRAM credential (MetaColumns:
// user, mechanism, iterations). Salts and salted passwords are never read.
type ShowUsers struct{ Query }

// CreateUser is CREATE USER name [MECHANISM m] [ITERATIONS n]: a SCRAM
// credential for a user that has none for that mechanism.
type CreateUser struct {
	User       string
	Mechanism  ScramMechanism // 0: not written (the executor uses SCRAM-SHA-512)
	Iterations int32          // 0: not written (4096); else MinScramIterations to MaxScramIterations
}

// AlterUser is ALTER USER name PASSWORD [MECHANISM m] [ITERATIONS n]: a new
// password for the user's credential of mechanism m, or, without
// MECHANISM, for every mechanism the user has.
type AlterUser struct {
	User       string
	Mechanism  ScramMechanism // 0: not written (every mechanism the user has)
	Iterations int32          // 0: not written (each credential keeps its iterations)
}

// DropUser is DROP USER name [MECHANISM m]: the user's credential of
// mechanism m, or, without MECHANISM, all of them.
type DropUser struct {
	User      string
	Mechanism ScramMechanism // 0: not written (every mechanism the user has)
}

// QuotaKind is one part of a client quota entity, named as Kafka's entity
// types are.
type QuotaKind int

const (
	QuotaUser   QuotaKind = iota + 1 // user
	QuotaClient                      // client-id
	QuotaIP                          // ip
)

// EntityType is Kafka's name of the entity type: user, client-id, ip.
func (k QuotaKind) EntityType() string {
	switch k {
	case QuotaUser:
		return "user"
	case QuotaClient:
		return "client-id"
	}
	return "ip"
}

func (k QuotaKind) keyword() string {
	switch k {
	case QuotaUser:
		return "USER"
	case QuotaClient:
		return "CLIENT"
	}
	return "IP"
}

// QuotaPart is USER name, CLIENT id, IP address, or DEFAULT USER,
// DEFAULT CLIENT, DEFAULT IP (the default entity of that type).
type QuotaPart struct {
	Kind    QuotaKind
	Default bool
	Name    string // "" when Default
}

// QuotaEntity is what a quota is set for: a user, a client id, both (user
// first), or an IP address. The parser guarantees one or two parts, two
// only as USER then CLIENT.
type QuotaEntity struct{ Parts []QuotaPart }

// QuotaValue is one key = n of ALTER QUOTA ... SET.
type QuotaValue struct {
	Key   string
	Value float64
}

// ShowQuotas is SHOW QUOTAS [FOR entity] Query: one row per quota value
// (MetaColumns: user, client_id, ip, key, value). With FOR, the quotas of
// entities that include the named parts (FOR USER alice also lists alice's
// per-client quotas).
type ShowQuotas struct {
	For *QuotaEntity // nil: every quota
	Query
}

// AlterQuota is ALTER QUOTA FOR entity SET (key = n, ...) and/or UNSET
// (key, ...). Keys are Kafka's quota keys for the entity (QuotaKeys); at
// least one of Set and Unset is non-empty, and no key is in both.
type AlterQuota struct {
	Entity QuotaEntity
	Set    []QuotaValue // nil when not written
	Unset  []string     // nil when not written
}

// QuotaKey is one of Kafka's client quota keys (QuotaConfig).
type QuotaKey struct {
	Name  string
	Whole bool // Kafka types it LONG or INT: a whole number
	IP    bool // the key of IP entities; the others are for users and client ids
	Doc   string
	// Max is the largest value Kafka's controller takes (its type's range:
	// LONG, INT); 0: no bound. Every key must be greater than 0.
	Max int64
}

// QuotaKeys are Kafka's client quota keys (org.apache.kafka.server.config.QuotaConfig;
// the bounds are ClientQuotaControlManager's).
var QuotaKeys = []QuotaKey{
	{"producer_byte_rate", true, false, "bytes per second a user or client may produce, per broker", math.MaxInt64},
	{"consumer_byte_rate", true, false, "bytes per second a user or client may fetch, per broker", math.MaxInt64},
	{"request_percentage", false, false, "percentage of one request handler and network thread, per broker", 0},
	{"controller_mutation_rate", false, false, "partitions created or deleted per second", 0},
	{"connection_creation_rate", true, true, "new connections per second from one IP address, per broker", math.MaxInt32},
}

func (*ShowUsers) statement()  {}
func (*CreateUser) statement() {}
func (*AlterUser) statement()  {}
func (*DropUser) statement()   {}
func (*ShowQuotas) statement() {}
func (*AlterQuota) statement() {}
