package main

// The Avro topic of issue 10: the same records as the JSON topic (keys,
// partitions, timestamps, 64 KiB batches), with values of exactly valueSize
// bytes in the Confluent wire format, decoded by kql through a schema
// registry the bench runs in-process.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// avroSchema is the value schema of the Avro topic: five fields, a long, a
// decimal, a timestamp, an enum and a string, about what a payments topic
// holds, and each a different path through kql's Avro decoder.
const avroSchema = `{"type":"record","name":"Payment","namespace":"kql.bench","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","REFUNDED","FAILED"]}},
 {"name":"note","type":"string"}
]}`

// avroSchemaID is the id the schema is registered under. It is fixed, not
// whatever the registry hands out, because the bench's registry lives only as
// long as the bench while a -b cluster keeps the seeded topic: the next run
// must register the same id the reused records carry.
const avroSchemaID = 1

var avroStatus = [...]string{"NEW", "PAID", "REFUNDED", "FAILED"}

// avroAtBase is record 0's "at"; record i's is i seconds later.
const avroAtBase = 1767225600000 // 2026-01-01T00:00:00Z in milliseconds

// avroAmount is record i's amount as its unscaled value (cents): at most 9
// digits, the decimal's precision.
func avroAmount(i int64) int64 { return i * 7919 % 1_000_000_000 }

var avroValues = seedValues{
	desc:   fmt.Sprintf("%d B Avro values (Confluent wire format, schema id %d)", valueSize, avroSchemaID),
	append: appendAvroValue,
}

// appendAvroValue appends record i's value: the wire-format header (a zero
// byte and the big-endian schema id), then the record in Avro binary, the
// note padded so the whole value is exactly valueSize bytes, like the JSON
// topic's. Written by hand, not with avro.Marshal, so that seeding 1M
// records allocates nothing per record; a test holds it to hamba/avro's
// encoding and to kql's decoder.
func appendAvroValue(b []byte, i int64) []byte {
	start := len(b)
	b = appendAvroFields(b, i)
	k := avroNoteLen(len(b) - start)
	b = binary.AppendVarint(b, int64(k)) // a string is its length, then its bytes
	return appendNote(b, i, k)
}

// appendAvroFields appends the header and every field but the note.
func appendAvroFields(b []byte, i int64) []byte {
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, avroSchemaID)
	b = binary.AppendVarint(b, i) // id: a long is a zigzag varint
	// amount: bytes holding the unscaled value, big-endian two's
	// complement, as short as keeps the sign bit clear.
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(avroAmount(i)))
	dec := buf[:]
	for len(dec) > 1 && dec[0] == 0 && dec[1]&0x80 == 0 {
		dec = dec[1:]
	}
	b = binary.AppendVarint(b, int64(len(dec)))
	b = append(b, dec...)
	b = binary.AppendVarint(b, avroAtBase+i*1000)           // at
	return binary.AppendVarint(b, i%int64(len(avroStatus))) // status: the symbol's index
}

// avroNoteLen is the note's length that makes a value whose other fields
// take fixed bytes exactly valueSize: what is left, less its length varint.
func avroNoteLen(fixed int) int {
	rest := valueSize - fixed
	k := rest - 1
	for varintLen(int64(k)) != rest-k {
		k--
	}
	return k
}

func varintLen(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}

// appendNote appends record i's note of exactly k bytes (k >= 20).
func appendNote(b []byte, i int64, k int) []byte {
	start := len(b)
	b = append(b, "payment "...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, ' ')
	for len(b)-start < k {
		b = append(b, byte('a'+(len(b)-start)%26))
	}
	return b
}

// appendAvroJSON appends what kql decodes record i's value to (schema/avro.go:
// fields in schema order, compact; the decimal exact; the timestamp RFC 3339
// in UTC with milliseconds; the enum its symbol). The Avro contender's check
// compares every record's value with it.
func appendAvroJSON(b []byte, i int64) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"amount":`...)
	a := avroAmount(i)
	b = strconv.AppendInt(b, a/100, 10)
	b = append(b, '.', byte('0'+a%100/10), byte('0'+a%10))
	b = append(b, `,"at":"`...)
	b = time.UnixMilli(avroAtBase+i*1000).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","status":"`...)
	b = append(b, avroStatus[i%int64(len(avroStatus))]...)
	b = append(b, `","note":"`...)
	var tmp [valueSize]byte
	b = appendNote(b, i, avroNoteLen(len(appendAvroFields(tmp[:0], i))))
	return append(b, `"}`...)
}

// benchRegistry is the bench's schema registry: franz-go's srfake behind a
// handler that logs every request, so the report can say how many each kql
// process made (the children run one at a time, so the log between a run's
// start and end is that run's).
type benchRegistry struct {
	fake *srfake.Registry
	srv  *httptest.Server

	mu  sync.Mutex
	log []string // "GET /schemas/ids/1", since the last take
}

// startRegistry starts the registry with the Avro topic's schema registered
// under subject topic-value at id avroSchemaID.
func startRegistry(topic string) (*benchRegistry, error) {
	r := &benchRegistry{fake: srfake.NewRegistry()}
	if err := seedSchema(r.fake, topic+"-value"); err != nil {
		return nil, err
	}
	h := r.fake.Handler()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.log = append(r.log, req.Method+" "+req.URL.RequestURI())
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	return r, nil
}

// seedSchema registers avroSchema; srfake panics on a schema it rejects.
func seedSchema(fake *srfake.Registry, subject string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("registering the Avro schema: %v", p)
		}
	}()
	fake.SeedSchema(subject, 1, avroSchemaID, sr.Schema{Schema: avroSchema, Type: sr.TypeAvro})
	return nil
}

func (r *benchRegistry) URL() string { return r.srv.URL }

// take returns the requests since the last take and forgets them.
func (r *benchRegistry) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	r.log = nil
	return l
}

func (r *benchRegistry) close() {
	r.srv.Close()
	r.fake.Close()
}

// --- the Avro contenders' output validators ---

// checkAvroRaw: the read without a registry is n jsonl records whose value
// is the raw bytes, which kql writes as a hex literal (x'...') since they are
// not UTF-8 text: exactly the value seeded with the record's key, its
// wire-format header and all, not decoded. The first and last lines are
// compared in full.
func checkAvroRaw(n int64) func(string) error {
	jsonl := checkJSONL(n, true)
	return func(path string) error {
		if err := jsonl(path); err != nil {
			return err
		}
		st, err := scanLines(path)
		if err != nil {
			return err
		}
		for _, line := range []string{st.first, st.last} {
			var rec struct{ Key, Value json.RawMessage }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				return fmt.Errorf("not a JSON record (%v): %.200s", err, line)
			}
			var key, v string
			if err := json.Unmarshal(rec.Key, &key); err != nil {
				return fmt.Errorf("key is %.40s, want a string: %.200s", rec.Key, line)
			}
			id, err := strconv.ParseInt(strings.TrimPrefix(key, "k"), 10, 64)
			if err != nil || !strings.HasPrefix(key, "k") || id < 0 || id >= n {
				return fmt.Errorf("key %q is not one the bench seeded: %.200s", key, line)
			}
			if err := json.Unmarshal(rec.Value, &v); err != nil {
				return fmt.Errorf("value is %.40s, want the raw bytes as a string: %.200s", rec.Value, line)
			}
			if want := "x'" + hex.EncodeToString(appendAvroValue(nil, id)) + "'"; v != want {
				return fmt.Errorf("value %.60q..., want record %d's wire-format bytes %.60q...", v, id, want)
			}
		}
		return nil
	}
}

// avroFields are the keys of a decoded value, in schema order.
var avroFields = []string{"id", "amount", "at", "status", "note"}

// checkAvroDecoded: the decoded read is n jsonl records, and every record's
// value is, byte for byte, the JSON object record id's value decodes to
// (appendAvroJSON), with the key of the same record, and every id in 0..n-1
// comes exactly once. The first line is also parsed in full: the six record
// keys, and the value a nested object with exactly the schema's fields.
func checkAvroDecoded(n int64) func(string) error {
	return func(path string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var (
			rd    = bufio.NewReaderSize(f, 1<<20)
			seen  = make([]uint64, (n+63)/64)
			lines int64
			want  []byte
		)
		for {
			line, err := rd.ReadSlice('\n')
			if len(line) == 0 && err == io.EOF {
				break
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("line %d: %v", lines+1, err)
			}
			lines++
			line = bytes.TrimSuffix(line, []byte{'\n'})
			if lines == 1 {
				if err := checkAvroFirstLine(line); err != nil {
					return err
				}
			}
			id, err := avroLineID(line)
			if err != nil {
				return fmt.Errorf("line %d: %v: %.300s", lines, err, line)
			}
			if id >= n {
				return fmt.Errorf("line %d: id %d, want one below %d: %.300s", lines, id, n, line)
			}
			if seen[id/64]&(1<<(id%64)) != 0 {
				return fmt.Errorf("line %d: id %d a second time: %.300s", lines, id, line)
			}
			seen[id/64] |= 1 << (id % 64)
			want = append(appendKey(append(want[:0], `,"key":"`...), id), `","value":`...)
			want = append(appendAvroJSON(want, id), `,"headers":`...)
			if !bytes.Contains(line, want) {
				return fmt.Errorf("line %d: want the key and value of record %d, %s: %.300s", lines, id, want, line)
			}
		}
		if lines != n {
			return fmt.Errorf("%d lines, want %d records (one per line)", lines, n)
		}
		return nil // n distinct ids below n: every one
	}
}

// avroLineID reads the id of a decoded record's value.
func avroLineID(line []byte) (int64, error) {
	const tag = `,"value":{"id":`
	i := bytes.Index(line, []byte(tag))
	if i < 0 {
		return 0, fmt.Errorf("no decoded value (%s...)", tag)
	}
	d := line[i+len(tag):]
	j := 0
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	id, err := strconv.ParseInt(string(d[:j]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value.id is not a number")
	}
	return id, nil
}

func checkAvroFirstLine(line []byte) error {
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(line, &rec); err != nil {
		return fmt.Errorf("first line is not a JSON object (%v): %.300s", err, line)
	}
	if got := slices.Sorted(maps.Keys(rec)); !slices.Equal(got, jsonlKeys) {
		return fmt.Errorf("first line has keys %v, want exactly %v: %.300s", got, jsonlKeys, line)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(rec["value"], &v); err != nil {
		return fmt.Errorf("first line's value is not a nested JSON object (%v): %.300s", err, line)
	}
	if got, want := slices.Sorted(maps.Keys(v)), slices.Sorted(slices.Values(avroFields)); !slices.Equal(got, want) {
		return fmt.Errorf("first line's value has fields %v, want %v: %.300s", got, avroFields, line)
	}
	return nil
}
