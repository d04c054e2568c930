package result

import "time"

// Record is one Kafka record as the record path carries it: typed fields,
// no boxing. A statement that reads records (CONSUME, SELECT) hands them out
// through RecordStream; renderers and the query engine read the fields
// directly, so a million-record scan allocates nothing per record.
//
// The slices (Key, Value, Headers and their bytes) belong to the stream and
// stay valid only until its next call to NextRecord: copy what must outlive
// that. A nil Key or Value is NULL (a tombstone's value); an empty non-nil
// one is the empty string.
type Record struct {
	Partition int32
	Offset    int64
	Timestamp int64 // milliseconds since the Unix epoch, as Kafka stores it
	Key       []byte
	Value     []byte
	Headers   []Header

	// KeySchema and ValueSchema are what the schema registry made of the
	// key and the value: the schema id of a Confluent wire-format header,
	// and whether Key or Value now holds the decoded value. Without a
	// registry they stay zero (key_schema_id reads the header itself).
	KeySchema, ValueSchema WireSchema
}

// WireSchema is what the schema registry made of a key or value.
type WireSchema struct {
	ID      int32 // the schema id of the wire-format header; meaningful when HasID
	HasID   bool  // the bytes began with the magic byte and a schema id
	Decoded bool  // the Key or Value field holds the decoded value as JSON text
}

// Time returns the record's timestamp as a UTC time.
func (r *Record) Time() time.Time { return time.UnixMilli(r.Timestamp).UTC() }

// RecordColumns are the six columns of a record, in the documented order;
// JSON output uses these names as keys.
var RecordColumns = []Column{
	{Name: "partition", Type: Int}, {Name: "offset", Type: Int}, {Name: "timestamp", Type: Time},
	{Name: "key", Type: Bytes}, {Name: "value", Type: Bytes}, {Name: "headers", Type: Headers},
}

// Row returns the record as a Row in RecordColumns order, for consumers
// that take any result (the row holds copies of nothing: its slices are the
// record's, valid as long as the record's).
func (r *Record) Row() Row {
	var k, v any
	if r.Key != nil {
		k = r.Key
		if r.KeySchema.Decoded {
			k = JSON(r.Key)
		}
	}
	if r.Value != nil {
		v = r.Value
		if r.ValueSchema.Decoded {
			v = JSON(r.Value)
		}
	}
	hs := r.Headers
	if hs == nil {
		hs = []Header{}
	}
	return Row{int64(r.Partition), r.Offset, r.Time(), k, v, hs}
}

// Clone returns a copy of r that owns its bytes, for keeping past the
// stream's next call. KeySchema and ValueSchema hold no references and are
// copied with the struct.
func (r *Record) Clone() *Record {
	c := *r
	c.Key = cloneBytes(r.Key)
	c.Value = cloneBytes(r.Value)
	c.Headers = make([]Header, len(r.Headers))
	for i, h := range r.Headers {
		c.Headers[i] = Header{Key: h.Key, Value: cloneBytes(h.Value)}
	}
	return &c
}

// cloneBytes copies b, keeping nil (NULL) apart from empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// RecordStream is a Result whose rows are records in RecordColumns order.
// Its NextRecord and the Result's Next read the same stream: a consumer uses
// one or the other. The returned *Record is reused by the next call.
type RecordStream interface {
	Result
	NextRecord() (*Record, bool)
}
