package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
)

// encode writes JSON text as Avro binary under the codec's schema. It
// accepts what appendJSON writes (so a decoded value produces back), and
// also Avro's own JSON encoding of unions ({"string": "x"}) and numbers
// for timestamps and dates. Errors name the field and what it expected.
func (c *avroCodec) encode(dst []byte, text []byte) ([]byte, error) {
	v, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	return avroEncode(dst, c.schema, v, "")
}

// parseJSON reads one JSON value, numbers kept exact (json.Number).
func parseJSON(text []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	// Token, not More: More is false before a stray ] or }, which would
	// then be dropped without a word.
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("not one JSON value: text follows it at byte %d", d.InputOffset())
	}
	return v, nil
}

func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%v (boolean)", v)
	case json.Number:
		return string(v) + " (number)"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return fmt.Sprintf("%q (string)", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func avroErr(path, want string, got any) error {
	if path == "" {
		return fmt.Errorf("expected %s, got %s", want, describeJSON(got))
	}
	return &FieldError{Path: path, Err: fmt.Errorf("expected %s, got %s", want, describeJSON(got))}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func avroEncode(dst []byte, s avro.Schema, v any, path string) ([]byte, error) {
	switch s := s.(type) {
	case *avro.NullSchema:
		if v != nil {
			return nil, avroErr(path, "null", v)
		}
		return dst, nil
	case *avro.RefSchema:
		return avroEncode(dst, s.Schema(), v, path)
	case *avro.PrimitiveSchema:
		return avroPrimitive(dst, s, v, path)
	case *avro.RecordSchema:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, avroErr(path, "an object for record "+s.FullName(), v)
		}
		// Unknown fields first: a misspelt field name is the likelier
		// mistake, and naming it says more than "the real one is missing".
		// The error carries the record's path (lines[0]), like every other.
		known := make(map[string]bool, len(s.Fields()))
		for _, f := range s.Fields() {
			known[f.Name()] = true
		}
		var extra []string
		for k := range obj {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			err := fmt.Errorf("record %s has no field %s", s.FullName(), strings.Join(extra, ", "))
			if path != "" {
				return nil, &FieldError{Path: path, Err: err}
			}
			return nil, err
		}
		for _, f := range s.Fields() {
			fv, present := obj[f.Name()]
			if !present {
				if !f.HasDefault() {
					return nil, &FieldError{Path: join(path, f.Name()), Err: fmt.Errorf("missing, and the schema gives it no default")}
				}
				fv = defaultJSON(f.Type(), f.Default())
			}
			var err error
			if dst, err = avroEncode(dst, f.Type(), fv, join(path, f.Name())); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case *avro.EnumSchema:
		str, ok := v.(string)
		if !ok {
			return nil, avroErr(path, "one of the symbols "+strings.Join(s.Symbols(), ", "), v)
		}
		for i, sym := range s.Symbols() {
			if sym == str {
				return binary.AppendVarint(dst, int64(i)), nil
			}
		}
		return nil, avroErr(path, "one of the symbols "+strings.Join(s.Symbols(), ", "), v)
	case *avro.UnionSchema:
		return avroUnion(dst, s, v, path)
	case *avro.ArraySchema:
		arr, ok := v.([]any)
		if !ok {
			return nil, avroErr(path, "an array", v)
		}
		if len(arr) > 0 {
			dst = binary.AppendVarint(dst, int64(len(arr)))
			for i, item := range arr {
				var err error
				if dst, err = avroEncode(dst, s.Items(), item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return nil, err
				}
			}
		}
		return binary.AppendVarint(dst, 0), nil
	case *avro.MapSchema:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, avroErr(path, "an object (map)", v)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			dst = binary.AppendVarint(dst, int64(len(keys)))
			for _, k := range keys {
				dst = binary.AppendVarint(dst, int64(len(k)))
				dst = append(dst, k...)
				var err error
				if dst, err = avroEncode(dst, s.Values(), obj[k], join(path, k)); err != nil {
					return nil, err
				}
			}
		}
		return binary.AppendVarint(dst, 0), nil
	case *avro.FixedSchema:
		if l := s.Logical(); l != nil && l.Type() == avro.Decimal {
			b, err := decimalBytes(v, l.(*avro.DecimalLogicalSchema), path, s.Size())
			if err != nil {
				return nil, err
			}
			return append(dst, b...), nil
		}
		b, err := base64Field(v, path)
		if err != nil {
			return nil, err
		}
		if len(b) != s.Size() {
			return nil, &FieldError{Path: path, Err: fmt.Errorf("fixed %s needs %d bytes (base64), got %d", s.FullName(), s.Size(), len(b))}
		}
		return append(dst, b...), nil
	}
	return nil, fmt.Errorf("unsupported Avro schema type %s", s.Type())
}

// defaultJSON turns a field default, as hamba/avro keeps it, into the JSON
// shape avroEncode takes. It needs the schema: hamba gives a bytes or fixed
// default as []byte or [N]byte (a decimal's default is those raw bytes, not
// a number), a null inside an array, map or record default as a sentinel
// that is not nil, and numbers as Go ints and floats. Without the schema a
// decimal or fixed default, or a record default holding a null, failed to
// encode ("expected an integer, got avro.nullDefaultType").
func defaultJSON(s avro.Schema, v any) any {
	switch s := s.(type) {
	case *avro.RefSchema:
		return defaultJSON(s.Schema(), v)
	case *avro.NullSchema:
		return nil
	case *avro.UnionSchema:
		// A union's default is of its first branch: say so in Avro's
		// wrapped form rather than let another branch take the value.
		first := s.Types()[0]
		return map[string]any{unionBranchName(first): defaultJSON(first, v)}
	case *avro.RecordSchema:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(m))
		for _, f := range s.Fields() {
			if x, ok := m[f.Name()]; ok {
				out[f.Name()] = defaultJSON(f.Type(), x)
			}
		}
		return out
	case *avro.ArraySchema:
		arr, _ := v.([]any)
		out := make([]any, len(arr))
		for i, x := range arr {
			out[i] = defaultJSON(s.Items(), x)
		}
		return out
	case *avro.MapSchema:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = defaultJSON(s.Values(), x)
		}
		return out
	case *avro.FixedSchema:
		return bytesDefault(s.Logical(), v)
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Null:
			return nil
		case avro.Bytes:
			return bytesDefault(s.Logical(), v)
		case avro.Int, avro.Long, avro.Float, avro.Double:
			return json.Number(fmt.Sprint(v))
		}
	}
	return v
}

// bytesDefault is a bytes or fixed default in the JSON shape: a decimal as
// its number, anything else as base64.
func bytesDefault(l avro.LogicalSchema, v any) any {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string: // the spec's form: code points 0-255 are the bytes
		for _, r := range x {
			b = append(b, byte(r))
		}
	default:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
			b = make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
		}
	}
	if d, ok := l.(*avro.DecimalLogicalSchema); ok {
		return json.Number(appendDecimal(nil, b, d.Scale()))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// avroUnion picks the branch: Avro's JSON wrapper {"type": value} names it;
// a bare value takes the first branch that accepts it.
func avroUnion(dst []byte, s *avro.UnionSchema, v any, path string) ([]byte, error) {
	types := s.Types()
	if obj, ok := v.(map[string]any); ok && len(obj) == 1 {
		for name, inner := range obj {
			for i, t := range types {
				if unionBranchName(t) == name {
					out, err := avroEncode(binary.AppendVarint(dst, int64(i)), t, inner, path)
					if err == nil {
						return out, nil
					}
				}
			}
		}
	}
	var names []string
	var firstErr error
	for _, i := range unionOrder(types, v) {
		t := types[i]
		names = append(names, unionBranchName(t))
		out, err := avroEncode(binary.AppendVarint(dst, int64(i)), t, v, path)
		if err == nil {
			return out, nil
		}
		if firstErr == nil && t.Type() != avro.Null {
			firstErr = err
		}
	}
	if len(types) == 2 && s.Nullable() && firstErr != nil {
		return nil, firstErr // ["null", X]: X's own error says more than "no branch"
	}
	return nil, avroErr(path, "a value of one of the union's types ("+strings.Join(names, ", ")+")", v)
}

// unionOrder is the order a bare value tries a union's branches in: the
// branches whose JSON shape is the most specific first, so what decoding
// showed encodes back into the branch it came from. A JSON string tries an
// enum, then a date or time logical type, then plain string, then bytes,
// fixed and decimal (base64 and numeric text are text too); a number tries
// plain integers before the floating point types. Branches of the same rank keep their order.
func unionOrder(types []avro.Schema, v any) []int {
	rank := func(t avro.Schema) int {
		if r, ok := t.(*avro.RefSchema); ok {
			t = r.Schema()
		}
		// Only an int or long's logical types (date, time-*, timestamp-*)
		// decode as text; a decimal decodes as a number and a duration as
		// base64, so text in their union came from a string branch: ranking
		// every logical type before string put "9.50" into a decimal.
		var timeLogical bool
		if l, ok := t.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
			timeLogical = t.Type() == avro.Int || t.Type() == avro.Long
		}
		switch v.(type) {
		case string:
			switch {
			case t.Type() == avro.Enum:
				return 0
			case timeLogical:
				return 1
			case t.Type() == avro.String:
				return 2
			}
			return 3
		case json.Number:
			// A plain int or long first; not a timestamp or date: those
			// decode as text, so a number beside them came from a double.
			if (t.Type() == avro.Int || t.Type() == avro.Long) && !timeLogical {
				return 0
			}
			return 1
		}
		return 0
	}
	order := make([]int, len(types))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(types[order[a]]) < rank(types[order[b]]) })
	return order
}

func unionBranchName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema().FullName()
	}
	return string(s.Type())
}

func avroPrimitive(dst []byte, s *avro.PrimitiveSchema, v any, path string) ([]byte, error) {
	var logical avro.LogicalType
	if l := s.Logical(); l != nil {
		logical = l.Type()
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return nil, avroErr(path, "null", v)
		}
		return dst, nil
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, avroErr(path, "a boolean", v)
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case avro.Int, avro.Long:
		n, err := avroInteger(v, logical, path)
		if err != nil {
			return nil, err
		}
		if s.Type() == avro.Int && (n < math.MinInt32 || n > math.MaxInt32) {
			return nil, avroErr(path, "an int (32-bit)", v)
		}
		return binary.AppendVarint(dst, n), nil
	case avro.Float, avro.Double:
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				return nil, avroErr(path, "a number", v)
			}
		case string:
			switch x {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return nil, avroErr(path, "a number", v)
			}
		default:
			return nil, avroErr(path, "a number", v)
		}
		if s.Type() == avro.Float {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return nil, avroErr(path, "a string", v)
		}
		dst = binary.AppendVarint(dst, int64(len(str)))
		return append(dst, str...), nil
	case avro.Bytes:
		var b []byte
		var err error
		if logical == avro.Decimal {
			b, err = decimalBytes(v, s.Logical().(*avro.DecimalLogicalSchema), path, 0)
		} else {
			b, err = base64Field(v, path)
		}
		if err != nil {
			return nil, err
		}
		dst = binary.AppendVarint(dst, int64(len(b)))
		return append(dst, b...), nil
	}
	return nil, fmt.Errorf("unsupported Avro type %s", s.Type())
}

// avroInteger reads an int or long, or for the time logical types the text
// appendJSON writes (or a number of the type's unit).
func avroInteger(v any, logical avro.LogicalType, path string) (int64, error) {
	if str, ok := v.(string); ok && logical != "" {
		layouts := map[avro.LogicalType][]string{
			avro.Date:                 {"2006-01-02"},
			avro.TimeMillis:           {"15:04:05.999999999", "15:04:05"},
			avro.TimeMicros:           {"15:04:05.999999999", "15:04:05"},
			avro.TimestampMillis:      {time.RFC3339Nano},
			avro.TimestampMicros:      {time.RFC3339Nano},
			avro.LocalTimestampMillis: {time.RFC3339Nano, "2006-01-02T15:04:05.999999999"},
			avro.LocalTimestampMicros: {time.RFC3339Nano, "2006-01-02T15:04:05.999999999"},
		}[logical]
		for _, layout := range layouts {
			t, err := time.Parse(layout, str)
			if err != nil {
				continue
			}
			switch logical {
			case avro.Date:
				return t.Unix() / 86400, nil
			case avro.TimeMillis:
				return int64(t.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)) / time.Millisecond), nil
			case avro.TimeMicros:
				return int64(t.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)) / time.Microsecond), nil
			case avro.TimestampMillis, avro.LocalTimestampMillis:
				return t.UnixMilli(), nil
			default:
				return t.UnixMicro(), nil
			}
		}
		if len(layouts) > 0 {
			return 0, avroErr(path, fmt.Sprintf("a %s (like %q) or a number", logical, layouts[0]), v)
		}
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, avroErr(path, "an integer", v)
	}
	n, err := num.Int64()
	if err != nil {
		return 0, avroErr(path, "an integer", v)
	}
	return n, nil
}

func base64Field(v any, path string) ([]byte, error) {
	str, ok := v.(string)
	if !ok {
		return nil, avroErr(path, "bytes as a base64 string", v)
	}
	b, err := base64.StdEncoding.DecodeString(str)
	if err != nil {
		return nil, avroErr(path, "bytes as a base64 string", v)
	}
	return b, nil
}

// decimalBytes encodes a decimal given as a number or a numeric string at
// the schema's scale, refusing digits the scale would lose. size > 0 pads to
// a fixed size.
func decimalBytes(v any, l *avro.DecimalLogicalSchema, path string, size int) ([]byte, error) {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = x
	default:
		return nil, avroErr(path, fmt.Sprintf("a decimal(%d,%d) number", l.Precision(), l.Scale()), v)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, avroErr(path, fmt.Sprintf("a decimal(%d,%d) number", l.Precision(), l.Scale()), v)
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(l.Scale())), nil)))
	if !scaled.IsInt() {
		return nil, &FieldError{Path: path, Err: fmt.Errorf("%s has more than the %d decimal places of decimal(%d,%d)", text, l.Scale(), l.Precision(), l.Scale())}
	}
	n := scaled.Num()
	if digits := len(new(big.Int).Abs(n).String()); l.Precision() > 0 && digits > l.Precision() {
		return nil, &FieldError{Path: path, Err: fmt.Errorf("%s has more digits than decimal(%d,%d) holds", text, l.Precision(), l.Scale())}
	}
	b := twosComplement(n)
	if size > 0 {
		if len(b) > size {
			return nil, &FieldError{Path: path, Err: fmt.Errorf("%s does not fit in %d bytes", text, size)}
		}
		pad := byte(0)
		if n.Sign() < 0 {
			pad = 0xff
		}
		b = append(bytes.Repeat([]byte{pad}, size-len(b)), b...)
	}
	return b, nil
}

// twosComplement is n as the shortest big-endian two's-complement bytes.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n-1 in bits, inverted.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}
