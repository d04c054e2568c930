package schema

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kql-dev/kql/jsontext"
)

// avroCodec transcodes Avro binary straight to JSON text, walking the schema
// hamba/avro parsed. It does not go through hamba's generic decoder
// (map[string]any): that loses the field order of records and allocates per
// field, where this writes fields in schema order into one reused buffer.
// hamba's decoder is the reference the tests compare against.
//
// JSON shapes, chosen so paths read naturally (value.amount, not
// value.amount.double): a union is its branch's value, without Avro's
// {"type": value} wrapper; bytes and fixed are base64 strings; an enum is its
// symbol; logical types as a person reads them: timestamp-millis/micros and
// local-timestamp-* as RFC 3339 text in UTC, date as 2006-01-02, time-millis/
// micros as 15:04:05.000, decimal as an exact JSON number, uuid as text.
type avroCodec struct {
	schema avro.Schema
}

func compileAvro(s sr.Schema, refs []reference) (codec, error) {
	// A cache of its own per schema id: the global cache would mix two
	// versions of one record name (schema evolution) into one definition.
	cache := &avro.SchemaCache{}
	for _, ref := range refs {
		if _, err := avro.ParseWithCache(ref.schema.Schema, "", cache); err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref.name, err)
		}
	}
	sch, err := avro.ParseWithCache(s.Schema, "", cache)
	if err != nil {
		return nil, fmt.Errorf("the Avro schema does not compile: %w", err)
	}
	return &avroCodec{schema: sch}, nil
}

func (c *avroCodec) kind() sr.SchemaType { return sr.TypeAvro }

func (c *avroCodec) appendJSON(dst, payload []byte) ([]byte, error) {
	r := avroReader{b: payload}
	dst = r.value(dst, c.schema)
	if r.err != nil {
		return dst, r.err
	}
	if r.pos != len(r.b) {
		return dst, fmt.Errorf("%d bytes left over after the value: the schema does not describe these bytes", len(r.b)-r.pos)
	}
	return dst, nil
}

// errAvroShort is a payload that ends before its schema does.
var errAvroShort = errors.New("the bytes end before the value does: the schema does not describe these bytes")

// maxAvroDepth bounds records nested in records. A recursive schema (a
// linked list, a tree) reading bytes it does not describe nests one record
// per byte or two, and Go cannot recover from the stack overflow that a
// 1 MiB payload then causes: it ends the whole process. 10000 is what
// google.golang.org/protobuf allows.
const maxAvroDepth = 10000

// maxAvroFreeItems bounds the array and map items that take no bytes
// (null, an empty record) in one payload. Every other item takes a byte at
// least, so a payload holds at most len(b) of them; without a bound over the
// whole payload, a few bytes per block of counts near the per-block limit
// made hundreds of megabytes of "null,null,..." from a 3 kB payload.
const maxAvroFreeItems = 1 << 16

// avroReader walks Avro binary; the first error sticks and stops output.
type avroReader struct {
	b     []byte
	pos   int
	err   error
	depth int   // records open
	items int64 // array and map items so far
}

func (r *avroReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *avroReader) long() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.pos:])
	if n <= 0 {
		r.fail(errAvroShort)
		return 0
	}
	r.pos += n
	return v
}

func (r *avroReader) take(n int64) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > int64(len(r.b)-r.pos) {
		r.fail(errAvroShort)
		return nil
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *avroReader) value(dst []byte, s avro.Schema) []byte {
	if r.err != nil {
		return dst
	}
	switch s := s.(type) {
	case *avro.NullSchema:
		return append(dst, "null"...)
	case *avro.PrimitiveSchema:
		return r.primitive(dst, s)
	case *avro.RecordSchema:
		if r.depth++; r.depth > maxAvroDepth {
			r.fail(fmt.Errorf("records nested more than %d deep: the schema does not describe these bytes", maxAvroDepth))
			return dst
		}
		dst = append(dst, '{')
		for i, f := range s.Fields() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONText(dst, f.Name())
			dst = append(dst, ':')
			dst = r.value(dst, f.Type())
			if r.err != nil {
				r.err = fieldError(f.Name(), r.err)
				return dst
			}
		}
		r.depth--
		return append(dst, '}')
	case *avro.RefSchema:
		return r.value(dst, s.Schema())
	case *avro.EnumSchema:
		i := r.long()
		sym, ok := s.Symbol(int(i))
		if r.err == nil && !ok {
			r.fail(fmt.Errorf("enum %s has no symbol %d", s.FullName(), i))
		}
		return appendJSONText(dst, sym)
	case *avro.UnionSchema:
		i := r.long()
		types := s.Types()
		if r.err == nil && (i < 0 || i >= int64(len(types))) {
			r.fail(fmt.Errorf("union branch %d of %d", i, len(types)))
		}
		if r.err != nil {
			return dst
		}
		return r.value(dst, types[i])
	case *avro.ArraySchema:
		dst = append(dst, '[')
		first := true
		r.blocks(func() {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = r.value(dst, s.Items())
		})
		return append(dst, ']')
	case *avro.MapSchema:
		dst = append(dst, '{')
		first := true
		r.blocks(func() {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = r.string(dst)
			dst = append(dst, ':')
			dst = r.value(dst, s.Values())
		})
		return append(dst, '}')
	case *avro.FixedSchema:
		b := r.take(int64(s.Size()))
		if r.err != nil {
			return dst
		}
		if l := s.Logical(); l != nil && l.Type() == avro.Decimal {
			return appendDecimal(dst, b, l.(*avro.DecimalLogicalSchema).Scale())
		}
		return appendBase64(dst, b)
	}
	r.fail(fmt.Errorf("unsupported Avro schema type %s", s.Type()))
	return dst
}

// blocks reads an array's or map's blocks, calling item per element.
func (r *avroReader) blocks(item func()) {
	for r.err == nil {
		n := r.long()
		if n == 0 || r.err != nil {
			return
		}
		if n < 0 { // a negative count is followed by the block's size in bytes
			n = -n
			r.long()
			if n < 0 || r.err != nil { // -MinInt64 is still negative
				r.fail(errAvroShort)
				return
			}
		}
		// Items can take no bytes (null, an empty record), so the count
		// is not bounded by what is left; a wrong schema reading huge
		// counts must still end, and soon: the bound is over the whole
		// payload, not per block (see maxAvroFreeItems).
		if n > int64(len(r.b))+maxAvroFreeItems-r.items {
			r.fail(fmt.Errorf("a block of %d items in %d bytes: the schema does not describe these bytes", n, len(r.b)-r.pos))
			return
		}
		r.items += n
		for ; n > 0 && r.err == nil; n-- {
			item()
		}
	}
}

func (r *avroReader) string(dst []byte) []byte {
	b := r.take(r.long())
	if r.err != nil {
		return dst
	}
	return appendJSONBytes(dst, b)
}

func (r *avroReader) primitive(dst []byte, s *avro.PrimitiveSchema) []byte {
	var logical avro.LogicalType
	if l := s.Logical(); l != nil {
		logical = l.Type()
	}
	switch s.Type() {
	case avro.Boolean:
		b := r.take(1)
		if r.err != nil {
			return dst
		}
		if b[0] != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case avro.Int, avro.Long:
		v := r.long()
		if r.err != nil {
			return dst
		}
		// An int is 32 bits (hamba says "int overflow"): a bigger one is
		// bytes the schema does not describe, and shown as it was it
		// would not write back (PRODUCE refuses it for an int).
		if s.Type() == avro.Int && (v < math.MinInt32 || v > math.MaxInt32) {
			r.fail(fmt.Errorf("%d does not fit an int (32 bits): the schema does not describe these bytes", v))
			return dst
		}
		switch logical {
		case avro.Date:
			return appendQuotedTime(dst, time.Unix(v*86400, 0).UTC(), "2006-01-02")
		case avro.TimeMillis:
			return appendQuotedTime(dst, time.UnixMilli(v).UTC(), "15:04:05.000")
		case avro.TimeMicros:
			return appendQuotedTime(dst, time.UnixMicro(v).UTC(), "15:04:05.000000")
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			return appendTimestamp(dst, v, 1e3, logical == avro.LocalTimestampMillis)
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return appendTimestamp(dst, v, 1e6, logical == avro.LocalTimestampMicros)
		}
		return strconv.AppendInt(dst, v, 10)
	case avro.Float:
		b := r.take(4)
		if r.err != nil {
			return dst
		}
		return appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 32)
	case avro.Double:
		b := r.take(8)
		if r.err != nil {
			return dst
		}
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)), 64)
	case avro.String:
		return r.string(dst)
	case avro.Bytes:
		b := r.take(r.long())
		if r.err != nil {
			return dst
		}
		if logical == avro.Decimal {
			return appendDecimal(dst, b, s.Logical().(*avro.DecimalLogicalSchema).Scale())
		}
		return appendBase64(dst, b)
	case avro.Null:
		return append(dst, "null"...)
	}
	r.fail(fmt.Errorf("unsupported Avro type %s", s.Type()))
	return dst
}

// fieldError puts a record field's name in front of an error from inside
// it, so a bad payload says where: "field items[].price: ...".
func fieldError(name string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Path: name + "." + fe.Path, Err: fe.Err}
	}
	return &FieldError{Path: name, Err: err}
}

// FieldError is an error at a field path of a decoded or encoded value.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return "field " + e.Path + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// appendJSONText writes s as a JSON string. Avro's field names and enum
// symbols, which is what it writes, are [A-Za-z_][A-Za-z0-9_]*: they need
// no escaping and no UTF-8 check, and they are written once per field per
// record, so they skip both.
func appendJSONText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return appendJSONBytes(dst, []byte(s))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendJSONBytes writes b as a JSON string; bytes that are not UTF-8 (an
// Avro string must be, but a wrong schema can point anywhere) become U+FFFD
// rather than invalid JSON.
func appendJSONBytes(dst, b []byte) []byte {
	if !utf8.Valid(b) {
		b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	return jsontext.AppendString(dst, b)
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

func appendQuotedTime(dst []byte, t time.Time, layout string) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, layout)
	return append(dst, '"')
}

// appendTimestamp writes v, in units of 1/perSec s (1e3 or 1e6) since the
// Unix epoch, as quoted RFC 3339 text in UTC with 3 or 6 fraction digits:
// what time.Format's 2006-01-02T15:04:05.000Z07:00 writes, without its
// layout parsing, which took a quarter of decoding a record with one
// timestamp. Years outside 0000-9999 go through time.Format. A local
// timestamp (local-timestamp-*) is a wall-clock time in no zone: it is
// written without the Z, which would claim UTC.
func appendTimestamp(dst []byte, v, perSec int64, local bool) []byte {
	digits, layout := 3, "2006-01-02T15:04:05.000Z07:00"
	if perSec == 1e6 {
		digits, layout = 6, "2006-01-02T15:04:05.000000Z07:00"
	}
	if local {
		layout = strings.TrimSuffix(layout, "Z07:00")
	}
	sec, frac := floorDiv(v, perSec)
	days, sod := floorDiv(sec, 86400)
	// Days to a civil date (proleptic Gregorian): Howard Hinnant's
	// days_from_civil inverse, from an era of 400 years starting March 1.
	z := days + 719468
	era, doe := floorDiv(z, 146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	year := yoe + era*400
	if month <= 2 {
		year++
	}
	if year < 0 || year > 9999 {
		return appendQuotedTime(dst, time.Unix(sec, frac*(1e9/perSec)).UTC(), layout)
	}
	dst = append(dst, '"')
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, month, 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, sod/3600, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sod/60%60, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sod%60, 2)
	dst = append(dst, '.')
	dst = appendDigits(dst, frac, digits)
	if local {
		return append(dst, '"')
	}
	return append(dst, 'Z', '"')
}

// floorDiv is a / b rounded down, and the remainder, in [0, b) for b > 0.
func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}

// appendDigits writes 0 <= v < 10^n as exactly n decimal digits.
func appendDigits(dst []byte, v int64, n int) []byte {
	dst = append(dst, "000000"[:n]...)
	for i := len(dst) - 1; v > 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// appendFloat writes f as a JSON number; NaN and the infinities, which JSON
// has no number for, as the strings "NaN", "Infinity" and "-Infinity" (what
// Avro's and Protobuf's JSON encodings write).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// appendDecimal writes a decimal's two's-complement big-endian unscaled
// value at scale as an exact JSON number: 950 at scale 2 is 9.50. Up to 8
// bytes (18 digits, any decimal of precision <= 18) it works in an int64
// without allocating; it is a third of decoding a record with one decimal
// through math/big.
func appendDecimal(dst, b []byte, scale int) []byte {
	var digits [40]byte
	if len(b) <= 8 {
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1 // sign-extend
		}
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		u := uint64(v)
		if v < 0 {
			u = -u // two's complement: right for math.MinInt64 too
		}
		return appendScaled(dst, v < 0, strconv.AppendUint(digits[:0], u, 10), scale)
	}
	var n big.Int
	n.SetBytes(b)
	neg := b[0]&0x80 != 0
	if neg { // negative: subtract 2^(8*len), then write the magnitude
		n.Sub(&n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		n.Neg(&n)
	}
	return appendScaled(dst, neg, n.Append(digits[:0], 10), scale)
}

// appendScaled writes the decimal digits of a magnitude at scale, after a
// minus sign when neg.
func appendScaled(dst []byte, neg bool, digits []byte, scale int) []byte {
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		dst = append(dst, digits...)
		if len(digits) == 1 && digits[0] == '0' {
			return dst // 0, not 000: JSON numbers have no leading zeros
		}
		for ; scale < 0; scale++ {
			dst = append(dst, '0')
		}
		return dst
	}
	if len(digits) <= scale { // 0.0ddd: zeros before the digits
		dst = append(dst, '0', '.')
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}
