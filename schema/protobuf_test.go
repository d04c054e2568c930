package schema

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

const commonProto = `syntax = "proto3";
package common;
message Money { string currency = 1; int64 units = 2; int32 nanos = 3; }`

const shopProto = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "common/money.proto";

message Helper { string note = 1; }

message Order {
  int64 id = 1;
  common.Money total = 2;
  google.protobuf.Timestamp at = 3;
  Status status = 4;
  repeated Line lines = 5;
  map<string, int32> counts = 6;
  oneof payment {
    string card = 7;
    string cash = 8;
  }
  double ratio = 9;
  bytes raw = 10;
  message Line {
    string sku = 1;
    uint32 qty = 2;
  }
  enum Status {
    UNKNOWN = 0;
    PAID = 1;
  }
}`

// shopRegistry registers common/money.proto and shop.proto (importing it
// and google/protobuf/timestamp.proto) and returns the shop schema's id.
func shopRegistry(t *testing.T) (*fakeRegistry, int) {
	f := newFake(t)
	f.register(t, "common-money", sr.Schema{Type: sr.TypeProtobuf, Schema: commonProto})
	id := f.register(t, "orders-value", sr.Schema{Type: sr.TypeProtobuf, Schema: shopProto,
		References: []sr.SchemaReference{{Name: "common/money.proto", Subject: "common-money", Version: 1}}})
	return f, id
}

// shopDescriptors compiles the same files independently of the codec, for
// writing reference payloads with proto.Marshal.
func shopDescriptors(t *testing.T) protoreflect.FileDescriptor {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"shop.proto": shopProto, "common/money.proto": commonProto}),
	})}
	files, err := c.Compile(context.Background(), "shop.proto")
	require.NoError(t, err)
	return files[0]
}

// protoPayload is msg marshalled by proto.Marshal behind the header that
// sr.ConfluentHeader writes for id and index.
func protoPayload(t *testing.T, id int, index []int, msg proto.Message) []byte {
	var h sr.ConfluentHeader
	b, err := h.AppendEncode(nil, id, index)
	require.NoError(t, err)
	body, err := proto.Marshal(msg)
	require.NoError(t, err)
	return append(b, body...)
}

func TestProtobufDecode(t *testing.T) {
	f, id := shopRegistry(t)
	reg := f.open(t)
	fd := shopDescriptors(t)
	orderMD := fd.Messages().ByName("Order")
	lineMD := orderMD.Messages().ByName("Line")
	helperMD := fd.Messages().ByName("Helper")

	order := dynamicpb.NewMessage(orderMD)
	order.Set(orderMD.Fields().ByName("id"), protoreflect.ValueOfInt64(1<<40))
	money := dynamicpb.NewMessage(orderMD.Fields().ByName("total").Message())
	money.Set(money.Descriptor().Fields().ByName("currency"), protoreflect.ValueOfString("EUR"))
	money.Set(money.Descriptor().Fields().ByName("units"), protoreflect.ValueOfInt64(9))
	money.Set(money.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(500000000))
	order.Set(orderMD.Fields().ByName("total"), protoreflect.ValueOfMessage(money))
	ts := dynamicpb.NewMessage(orderMD.Fields().ByName("at").Message())
	ts.Set(ts.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(1764504000))
	ts.Set(ts.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(123000000))
	order.Set(orderMD.Fields().ByName("at"), protoreflect.ValueOfMessage(ts))
	order.Set(orderMD.Fields().ByName("status"), protoreflect.ValueOfEnum(1))
	lines := order.Mutable(orderMD.Fields().ByName("lines")).List()
	for i, sku := range []string{"a", "b\"c"} {
		l := dynamicpb.NewMessage(lineMD)
		l.Set(lineMD.Fields().ByName("sku"), protoreflect.ValueOfString(sku))
		l.Set(lineMD.Fields().ByName("qty"), protoreflect.ValueOfUint32(uint32(i+1)))
		lines.Append(protoreflect.ValueOfMessage(l))
	}
	counts := order.Mutable(orderMD.Fields().ByName("counts")).Map()
	counts.Set(protoreflect.ValueOfString("x").MapKey(), protoreflect.ValueOfInt32(-3))
	order.Set(orderMD.Fields().ByName("cash"), protoreflect.ValueOfString("yes"))
	order.Set(orderMD.Fields().ByName("raw"), protoreflect.ValueOfBytes([]byte{0, 255}))

	line := dynamicpb.NewMessage(lineMD)
	line.Set(lineMD.Fields().ByName("sku"), protoreflect.ValueOfString("solo"))
	helper := dynamicpb.NewMessage(helperMD)
	helper.Set(helperMD.Fields().ByName("note"), protoreflect.ValueOfString("hi"))

	dec := reg.NewDecoder(t.Context())
	cases := []struct {
		name  string
		index []int
		msg   proto.Message
		want  string
	}{
		{"second message [1]", []int{1}, order,
			`{"id":"1099511627776","total":{"currency":"EUR","units":"9","nanos":500000000},"at":"2025-11-30T12:00:00.123Z","status":"PAID","lines":[{"sku":"a","qty":1},{"sku":"b\"c","qty":2}],"counts":{"x":-3},"cash":"yes","ratio":0,"raw":"AP8="}`},
		{"nested message [1,0]", []int{1, 0}, line, `{"sku":"solo","qty":0}`},
		{"first message [0], written as the one-byte shortcut", []int{0}, helper, `{"note":"hi"}`},
		{"empty message: every field shown", []int{1}, dynamicpb.NewMessage(orderMD),
			`{"id":"0","total":null,"at":null,"status":"UNKNOWN","lines":[],"counts":{},"ratio":0,"raw":""}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			payload := protoPayload(t, id, tc.index, tc.msg)
			out, gotID, ok, err := dec.Decode([]byte("prefix:"), payload)
			require.NoError(t, err)
			require.True(t, ok)
			require.EqualValues(t, id, gotID)
			require.Equal(t, "prefix:"+tc.want, string(out))
		})
	}

	// An index with no message, and bytes that are not the message.
	_, _, _, err := dec.Decode(nil, protoPayload(t, id, []int{5}, helper))
	require.ErrorContains(t, err, "level 0 has 2 messages")
	_, _, _, err = dec.Decode(nil, protoPayload(t, id, []int{1, 3}, helper))
	require.ErrorContains(t, err, "level 1 has 1 messages")
	bad := protoPayload(t, id, []int{0}, helper)
	_, _, _, err = dec.Decode(nil, append(bad, 0xff))
	require.Error(t, err)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.False(t, de.Unreachable)
	out, _, _, err := dec.Decode([]byte("keep"), bad[:len(bad)-1])
	require.Error(t, err)
	require.Equal(t, "keep", string(out))
}

func TestProtobufEncode(t *testing.T) {
	f, id := shopRegistry(t)
	reg := f.open(t)
	fd := shopDescriptors(t)
	ctx := t.Context()

	// The first top-level message the JSON fits: Helper for a note...
	enc, err := reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"note":"hi"}`))
	require.NoError(t, err)
	require.Equal(t, id, enc.ID)
	require.Equal(t, "PROTOBUF", enc.Type)
	require.Equal(t, byte(0), enc.Bytes[5], "index [0] is the one-byte shortcut")
	m := dynamicpb.NewMessage(fd.Messages().ByName("Helper"))
	require.NoError(t, proto.Unmarshal(enc.Bytes[6:], m))
	require.Equal(t, "hi", m.Get(m.Descriptor().Fields().ByName("note")).String())

	// ...and Order, index [1], for an order.
	text := `{"id":"7","total":{"currency":"EUR","units":"9","nanos":0},"at":"2025-11-30T12:00:00.123Z","status":"PAID","lines":[{"sku":"a","qty":1}],"counts":{"x":-3},"card":"visa","ratio":0.5,"raw":"AP8="}`
	enc, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(text))
	require.NoError(t, err)
	var h sr.ConfluentHeader
	index, body, err := h.DecodeIndex(enc.Bytes[5:], 8)
	require.NoError(t, err)
	require.Equal(t, []int{1}, index)
	om := dynamicpb.NewMessage(fd.Messages().ByName("Order"))
	require.NoError(t, proto.Unmarshal(body, om))
	require.Equal(t, int64(7), om.Get(om.Descriptor().Fields().ByName("id")).Int())
	require.Equal(t, "visa", om.Get(om.Descriptor().Fields().ByName("card")).String())

	out, _, _, err := reg.NewDecoder(ctx).Decode(nil, enc.Bytes)
	require.NoError(t, err)
	requireSameJSON(t, []byte(`{"id":"7","total":{"currency":"EUR","units":"9","nanos":0},"at":"2025-11-30T12:00:00.123Z","status":"PAID","lines":[{"sku":"a","qty":1}],"counts":{"x":-3},"card":"visa","ratio":0.5,"raw":"AP8="}`), out)

	// A JSON no message fits names the first message and the field.
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"id":"7","colour":"red"}`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "shop.Helper")
	require.Contains(t, err.Error(), "id")
	require.Contains(t, err.Error(), "nor any other of its 2 top-level messages; to write a nested message, name it with MESSAGE")
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"note":5}`))
	require.ErrorContains(t, err, "note")
}

// Text that fits more than one message (an empty object fits any) is not
// written as whichever comes first: kql asks which, and MESSAGE says. A
// MESSAGE may name a nested message, whose index path counts declared
// messages only (Order's map field makes an entry message protoreflect
// lists before Line).
func TestProtobufEncodeMessage(t *testing.T) {
	f, id := shopRegistry(t)
	reg := f.open(t)
	fd := shopDescriptors(t)
	ctx := t.Context()

	_, err := reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{}`))
	require.ErrorContains(t, err, "the text fits 2 of its messages (shop.Helper, shop.Order): say which with MESSAGE and one of these names")

	for _, name := range []string{"shop.Order", "Order"} {
		enc, err := reg.Encode(ctx, Ref{Subject: "orders-value", Message: name}, []byte(`{}`))
		require.NoError(t, err, name)
		require.Equal(t, id, enc.ID)
		var h sr.ConfluentHeader
		index, _, err := h.DecodeIndex(enc.Bytes[5:], 8)
		require.NoError(t, err)
		require.Equal(t, []int{1}, index, name)
	}

	for _, name := range []string{"shop.Order.Line", ".shop.Order.Line", "Order.Line", "Line"} {
		enc, err := reg.Encode(ctx, Ref{Subject: "orders-value", Message: name}, []byte(`{"sku":"a","qty":2}`))
		require.NoError(t, err, name)
		var h sr.ConfluentHeader
		index, body, err := h.DecodeIndex(enc.Bytes[5:], 8)
		require.NoError(t, err)
		require.Equal(t, []int{1, 0}, index, "%s: Line is Order's first declared nested message", name)
		lm := dynamicpb.NewMessage(fd.Messages().ByName("Order").Messages().ByName("Line"))
		require.NoError(t, proto.Unmarshal(body, lm))
		require.Equal(t, uint64(2), lm.Get(lm.Descriptor().Fields().ByName("qty")).Uint())
		out, _, _, err := reg.NewDecoder(ctx).Decode(nil, enc.Bytes)
		require.NoError(t, err)
		requireSameJSON(t, []byte(`{"sku":"a","qty":2}`), out)
	}

	_, err = reg.Encode(ctx, Ref{Subject: "orders-value", Message: "Line"}, []byte(`{"note":"x"}`))
	require.ErrorContains(t, err, "does not fit shop.Order.Line")
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value", Message: "Invoice"}, []byte(`{}`))
	require.ErrorContains(t, err, "MESSAGE Invoice: the schema has no such message (messages of files it imports are written with their own subject's schema); its messages are shop.Helper, shop.Order, shop.Order.Line")
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value", Message: ".Line"}, []byte(`{}`))
	require.ErrorContains(t, err, "no such message", "a leading dot makes a full name")
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value", Message: "Line"}, []byte(`{"sku":1}`))
	require.ErrorContains(t, err, "does not fit shop.Order.Line: (line 1:8)", "no proto: prefix")
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value", Message: "CountsEntry"}, []byte(`{}`))
	require.ErrorContains(t, err, "no such message", "a map's entry is not a message one writes")

	avro := f.register(t, "plain-value", sr.Schema{Type: sr.TypeAvro, Schema: `"string"`})
	_, err = reg.Encode(ctx, Ref{ID: avro, Message: "Order"}, []byte(`"x"`))
	require.ErrorContains(t, err, "is AVRO, and MESSAGE names a Protobuf message: leave MESSAGE out")
}

// The Protobuf codec is shared by every Decoder of a Registry: decoding
// from two at once must not mix messages (run with -race).
func TestProtobufConcurrentDecoders(t *testing.T) {
	f, id := shopRegistry(t)
	reg := f.open(t)
	fd := shopDescriptors(t)
	helperMD := fd.Messages().ByName("Helper")
	lineMD := fd.Messages().ByName("Order").Messages().ByName("Line")
	payloads := map[string][]byte{}
	for i := range 20 {
		h := dynamicpb.NewMessage(helperMD)
		note := "note-" + string(rune('a'+i))
		h.Set(helperMD.Fields().ByName("note"), protoreflect.ValueOfString(note))
		payloads[`{"note":"`+note+`"}`] = protoPayload(t, id, []int{0}, h)
		l := dynamicpb.NewMessage(lineMD)
		l.Set(lineMD.Fields().ByName("sku"), protoreflect.ValueOfString(note))
		l.Set(lineMD.Fields().ByName("qty"), protoreflect.ValueOfUint32(uint32(i)))
		payloads[`{"sku":"`+note+`","qty":`+itoa(i)+`}`] = protoPayload(t, id, []int{1, 0}, l)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := reg.NewDecoder(context.Background())
			var buf []byte
			deadline := time.Now().Add(300 * time.Millisecond)
			for time.Now().Before(deadline) {
				for want, p := range payloads {
					out, _, _, err := dec.Decode(buf[:0], p)
					if err != nil {
						errs <- err
						return
					}
					if string(out) != want {
						errs <- &FieldError{Path: want, Err: errString(string(out))}
						return
					}
					buf = out
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	require.Equal(t, 1, f.asked("GET /schemas/ids/"+itoa(id)), "one fetch for all the decoders")
}

type errString string

func (e errString) Error() string { return string(e) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	neg := i < 0
	if neg {
		i = -i
	}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// encode appends to dst, like the other codecs.
func TestProtobufEncodeAppends(t *testing.T) {
	c, err := compileProtobuf(sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; message A { string s = 1; } message B { int32 n = 1; }`}, nil)
	require.NoError(t, err)
	b, err := c.encode([]byte("keep"), []byte(`{"n": 5}`))
	require.NoError(t, err)
	require.Equal(t, append([]byte("keep"), 2, 2, 0x08, 5), b)
	b, err = c.encode([]byte("keep"), []byte(`{"s": "x"}`))
	require.NoError(t, err)
	require.Equal(t, append([]byte("keep"), 0, 0x0a, 1, 'x'), b)
}
