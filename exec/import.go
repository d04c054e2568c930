package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"github.com/kql-dev/kql/ingest"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// PRODUCE INTO t FROM FILE 'path' | FROM STDIN: an import. A file is
// checked whole first (a bad record anywhere writes nothing), and what the
// check decoded is written (importspill.go). Stdin, and a file that is not a regular file (a named
// pipe), can be read only once, so it is written as it comes, in
// transactions of bounded size; a failure aborts the open one and the
// error says which input line was the last committed.

var importCols = []result.Column{col("topic", result.String), col("partition", result.Int), col("records", result.Int),
	col("bytes", result.Int), col("last_offset", result.Int), col("error", result.String)}

// importTxnRecords, importTxnBytes and importTxnAge bound one transaction
// of a file's import; tests lower them. Each commit drains the producer
// (Flush, then EndTxn: about 55 ms on the test bed's 3 brokers), and the
// writer's memory does not grow with a transaction (it reuses what the
// producer answered), so a file, checked whole before its first record is
// written, goes in few transactions: 10,000-record ones made the import
// 3.55x kcat -P on real Kafka, 200,000-record ones (5 commits per million)
// twice as fast as those, at the same peak RSS (bench; README's
// Performance).
// The time bound keeps a transaction well inside the writer's 60 s
// transaction timeout on a slow cluster. Stdin and a named pipe, written as
// they are read, keep streamTxnRecords: a failure there leaves the input's
// unread rest to the user, and a smaller transaction is less to feed again.
// A stream's transaction is also committed once it is streamTxnAge old,
// by a timer (importage.go), so that a trickling pipe's records reach
// read_committed readers within about that.
var (
	importTxnRecords = 200000
	importTxnBytes   = int64(32 << 20)
	importTxnAge     = 10 * time.Second
	streamTxnRecords = 10000
	streamTxnAge     = time.Second
)

// importInFlight bounds the records the import's producer holds
// unanswered: with 50,000 (kgo's default) and large transactions its peak
// RSS was 90 MiB on real Kafka, with 20,000 60 MiB, with 10,000 46 MiB, no
// slower.
const importInFlight = 10000

func (s *Session) importRecords(ctx context.Context, st *lang.Produce) (result.Result, error) {
	src := st.From
	format, err := ingest.ParseFormat(src.Format)
	if err != nil {
		return nil, err
	}
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	t := m.Topics[st.Topic]
	if t == nil || len(t.Partitions) == 0 {
		return nil, fmt.Errorf("topic %q does not exist: CREATE TOPIC it first (an import never creates a topic)", st.Topic)
	}
	opt := ingest.Options{}
	if src.KeyDelimiter != nil {
		opt.KeyDelimiter = *src.KeyDelimiter
	}
	// A named pipe or a device is read once, as stdin (see importstream.go).
	stream := src.Stdin || isStream(src.File)
	// A stream's read also ends when a commit its timer made failed
	// (importage.go).
	readCtx, failRead := context.WithCancelCause(ctx)
	defer failRead(nil)
	open := func() (io.ReadCloser, string, error) {
		if src.Stdin {
			if s.Stdin == nil {
				return nil, "", errors.New("PRODUCE ... FROM STDIN reads the records from kql's standard input, but kql reads its statements from there (the interactive shell, or a script given as -f -): run it as kql -e \"PRODUCE ... FROM STDIN\" < records.jsonl, or kql -f script.sql < records.jsonl, or use FROM FILE")
			}
			// Read to its end (or abandoned part way) by one statement, it
			// has nothing for a second: that one imported nothing, with
			// success.
			if sameReader(s.stdinRead, s.Stdin) {
				return nil, "", fmt.Errorf("kql's standard input was already read by an earlier statement of this run (%s), and it can be read only once: nothing was written; import another input with FROM FILE 'path', or in another run of kql", s.stdinReadBy)
			}
			s.stdinRead, s.stdinReadBy = s.Stdin, lang.Format(st)
			return newCtxReader(readCtx, s.Stdin), "stdin", nil
		}
		if stream {
			f, err := openStream(readCtx, src.File)
			return f, src.File, err
		}
		f, err := os.Open(src.File)
		if err != nil {
			return nil, "", fmt.Errorf("PRODUCE ... FROM FILE: %w", err)
		}
		return f, src.File, nil
	}
	// A side's local schema, loaded before anything is read; a side with
	// a registry SCHEMA clause is the registry's.
	var local importMapper
	if st.KeySchema == nil {
		if local.keyLocal, err = s.localCodec(st.Topic, "key", st.KeyAs); err != nil {
			return nil, fmt.Errorf("%w; nothing was written", err)
		}
	}
	if st.ValueSchema == nil {
		if local.valueLocal, err = s.localCodec(st.Topic, "value", st.ValueAs); err != nil {
			return nil, fmt.Errorf("%w; nothing was written", err)
		}
	}
	// A file is checked whole before anything is written, and what the
	// check decoded is kept for the write (importspill.go).
	var spill *importSpill
	if !stream {
		in, name, err := open()
		if err != nil {
			return nil, err
		}
		spill = newImportSpill()
		defer spill.Close()
		mp := local
		mp.stampLater = true
		err = s.eachImported(ctx, st, t, in, name, format, opt, ingest.ScanConfig{Parallel: true}, &mp, func(rec *kafka.OutRecord, at importPos) error {
			spill.add(rec, at)
			return nil
		})
		in.Close()
		if err != nil {
			return nil, fmt.Errorf("%w; nothing was written", err)
		}
		if spill.finish() != nil {
			spill.Close()
			spill = nil // decode the file again
		}
	}
	// The writer first: a principal that may not write transactions
	// fails before stdin is read (open starts reading it), so a later FROM
	// STDIN of the run still has it.
	cfg := importWriterConfig(stream)
	cfg.TransactionalID = kafka.NewTransactionalID("import")
	w, err := s.cl.NewWriter(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	var in io.ReadCloser
	name := src.File
	if spill == nil {
		if in, name, err = open(); err != nil {
			return nil, err
		}
		defer in.Close()
	}
	prog := result.MoveProgressOf(ctx) // the shell's progress line
	var done importCommitted           // how far the input is committed
	var timer *streamCommitter         // a stream's commit on time alone
	if stream {
		timer = startStreamCommitter(ctx, w, streamTxnAge, failRead)
	}
	write := func(rec *kafka.OutRecord, at importPos) error {
		var err error
		if timer != nil {
			err = timer.write(ctx, rec, at)
		} else {
			var committed bool
			committed, err = w.Write(ctx, rec)
			done.wrote(at, committed)
		}
		prog.Wrote(rec.Size())
		return err
	}
	if spill != nil {
		prog.Begin(spill.records, 0)
		err = spill.each(ctx, st.Topic, w.Answered, write)
	} else {
		prog.Begin(0, fileSize(src.File, stream))
		mp := local
		// The producer sends a record's bytes after Write returns: KeepBytes.
		err = s.eachImported(readCtx, st, t, prog.Reader(in), name, format, opt, ingest.ScanConfig{Parallel: !stream, KeepBytes: true}, &mp, write)
	}
	if timer != nil {
		var terr error
		done, terr = timer.close()
		if terr != nil {
			err = terr // the read ended because of it
		}
	}
	if err == nil {
		err = w.Commit(ctx)
	}
	var unknown *kafka.CommitUnknownError
	isUnknown := errors.As(err, &unknown)
	endProgress(prog, w, isUnknown)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("cancelled: %w", err)
		}
		where := done.resumeText(format, src.File, stream, countTransactions(w.Transactions(), "", ""), isUnknown)
		return nil, fmt.Errorf("%w; %s", err, where) // the shell names the statement
	}
	res := result.NewSlice(importCols, writtenRows(w.Written()))
	res.Notes = append(res.Notes, fmt.Sprintf("%s committed as %s", countTransactions(w.Transactions(), "", ""), w.TransactionalID()))
	if warn := s.awaitReadable(ctx, w); warn != "" { // see move_readable.go
		res.Warns = append(res.Warns, warn)
	}
	return res, nil
}

// endProgress tells the shell's summary (result.MoveProgress) what of the
// records given to w is committed, once the statement is done with it:
// unknown, the rest is in a transaction whose commit got no answer; else it
// was aborted. The summary counted every record given to the writer, so a
// Ctrl-C'd import said it wrote records no read_committed reader sees.
func endProgress(prog *result.MoveProgress, w *kafka.Writer, unknown bool) {
	var n, b int64
	for _, pw := range w.Written() {
		n += pw.Records
		b += pw.Bytes
	}
	prog.Ended(n, b, unknown)
}

// sameReader reports whether a and b are the same reader (a reader of a
// type that cannot be compared is never the same).
func sameReader(a, b io.Reader) bool {
	return a != nil && reflect.TypeOf(a).Comparable() && reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}

// importWriterConfig sizes an import's transactions: a file's (checked
// whole first) by importTxn*, a stream's by streamTxnRecords and the
// writer's default byte bound (EXPLAIN names them).
func importWriterConfig(stream bool) kafka.WriterConfig {
	cfg := kafka.WriterConfig{MaxInFlight: importInFlight}
	if stream {
		cfg.MaxTxnRecords, cfg.MaxTxnAge = streamTxnRecords, streamTxnAge
	} else {
		cfg.MaxTxnRecords, cfg.MaxTxnBytes, cfg.MaxTxnAge = importTxnRecords, importTxnBytes, importTxnAge
	}
	return cfg
}

// eachImported reads every record of in, maps it onto a record of t and
// hands it to fn with where it was in the input. The record fn gets is
// reused for the next one: fn must not keep it (the writer copies it).
func (s *Session) eachImported(ctx context.Context, st *lang.Produce, t *kafka.Topic, in io.Reader, name string, format ingest.Format, opt ingest.Options, cfg ingest.ScanConfig, m *importMapper, fn func(*kafka.OutRecord, importPos) error) error {
	var out kafka.OutRecord
	return ingest.Scan(ctx, in, name, format, opt, cfg, func(b *ingest.Batch) error {
		for i := range b.Records {
			in := &b.Records[i]
			if err := s.importedRecord(ctx, st, t, name, in, m, &out); err != nil {
				return err
			}
			if err := fn(&out, importPosOf(in)); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
}

// importMapper is what mapping records needs between records: a keyed
// partitioner without an allocation per record.
type importMapper struct {
	keys kafka.KeyPartitioner
	// keyLocal, valueLocal: the side's local schema (KEY/VALUE AS, \set
	// or the properties file), which encodes each record's JSON text as
	// PRODUCE encodes its literal, so that the export of a topic read
	// through a local schema imports back as it was; nil: none.
	keyLocal, valueLocal *localSource
	// stampLater: a record to be stamped with the time of writing keeps
	// a zero Timestamp (the spill's reader stamps it).
	stampLater bool
}

// importedRecord maps in onto rec, a record of t (rec's header list is
// reused). A mistake is an *ingest.Error naming the input name's line, the
// field and its column.
func (s *Session) importedRecord(ctx context.Context, st *lang.Produce, t *kafka.Topic, name string, in *ingest.Record, m *importMapper, rec *kafka.OutRecord) error {
	src := st.From
	key, value := in.Key, in.Value
	var err error
	if st.KeySchema != nil && key != nil {
		if key, err = s.encodeImported(ctx, "KEY", key, st.KeySchema); err != nil {
			return ingest.FieldError(name, in, "key", err.Error())
		}
	}
	if st.ValueSchema != nil && value != nil {
		if value, err = s.encodeImported(ctx, "VALUE", value, st.ValueSchema); err != nil {
			return ingest.FieldError(name, in, "value", err.Error())
		}
	}
	if m.keyLocal != nil && key != nil {
		if key, err = m.keyLocal.codec.Encode(key); err != nil {
			return ingest.FieldError(name, in, "key", fmt.Sprintf("does not fit the key's local schema (%s): %v", m.keyLocal.from, err))
		}
	}
	if m.valueLocal != nil && value != nil {
		if value, err = m.valueLocal.codec.Encode(value); err != nil {
			return ingest.FieldError(name, in, "value", fmt.Sprintf("does not fit the value's local schema (%s): %v", m.valueLocal.from, err))
		}
	}
	*rec = kafka.OutRecord{Topic: st.Topic, Key: key, Value: value, Headers: rec.Headers[:0]}
	switch {
	case src.KeepPartition:
		if in.Partition < 0 {
			return ingest.FieldError(name, in, "partition", "KEEP PARTITION, but the record has no partition")
		}
		if !hasPartition(t, in.Partition) {
			return ingest.FieldError(name, in, "partition", fmt.Sprintf("KEEP PARTITION, but topic %q has no partition %d; its partitions are %s (add partitions, or import with PARTITION BY KEY)", t.Name, in.Partition, partitionRange(t)))
		}
		rec.Partition = in.Partition
	case key != nil:
		rec.Partition = m.keys.Partition(t.Name, key, len(t.Partitions))
	default:
		rec.Partition = t.Partitions[int(roundRobin.Add(1))%len(t.Partitions)].ID
	}
	if !src.StampNow && !in.Timestamp.IsZero() {
		rec.Timestamp = in.Timestamp
	} else if m.stampLater {
		rec.Timestamp = time.Time{}
	} else {
		rec.Timestamp = time.Now()
	}
	for _, h := range in.Headers {
		rec.Headers = append(rec.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return nil
}

// encodeImported encodes an imported key or value (JSON text) with its
// SCHEMA clause. Its error is the registry's alone: the caller names the
// line and the field, and the import says once that nothing was written
// (encodeLiteral's wording, made for one PRODUCE, said both twice).
func (s *Session) encodeImported(ctx context.Context, side string, text []byte, ref *lang.SchemaRef) ([]byte, error) {
	if s.Registry == nil {
		return nil, errNoRegistry("PRODUCE ... FROM ... " + side + " SCHEMA")
	}
	enc, err := s.Registry.Encode(ctx, schemaRef(ref), text)
	if err != nil {
		return nil, err
	}
	return enc.Bytes, nil
}

func hasPartition(t *kafka.Topic, p int32) bool {
	for _, tp := range t.Partitions {
		if tp.ID == p {
			return true
		}
	}
	return false
}

// writtenRows is a writer's per-partition answer as rows; a partition that
// failed keeps its row with the error.
func writtenRows(ws []kafka.PartitionWritten) []result.Row {
	rows := make([]result.Row, 0, len(ws))
	for _, w := range ws {
		var last, errText any
		if w.LastOffset >= 0 {
			last = w.LastOffset
		}
		if w.Err != nil {
			errText = w.Err.Error()
		}
		rows = append(rows, result.Row{w.Topic, int64(w.Partition), w.Records, w.Bytes, last, errText})
	}
	return rows
}

// ctxReader reads r on a goroutine of its own so that a statement blocked
// on a quiet stdin still stops at once when cancelled (Ctrl-C): Read
// returns ctx's error. The goroutine ends with r's next Read (EOF, data or
// error): stdin cannot be interrupted, only abandoned.
type ctxReader struct {
	ctx    context.Context
	chunks chan []byte
	err    error // r's error, once chunks is closed
	cur    []byte
	stop   chan struct{}
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	c := &ctxReader{ctx: ctx, chunks: make(chan []byte), stop: make(chan struct{})}
	go func() {
		defer close(c.chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := r.Read(buf)
			if n > 0 {
				select {
				case c.chunks <- buf[:n]:
				case <-c.stop:
					return
				}
			}
			if err != nil {
				c.err = err
				return
			}
		}
	}()
	return c
}

func (c *ctxReader) Read(p []byte) (int, error) {
	for len(c.cur) == 0 {
		select {
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		case b, ok := <-c.chunks:
			if !ok {
				return 0, c.err
			}
			c.cur = b
		}
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

// Close lets the reading goroutine end as soon as its Read returns.
func (c *ctxReader) Close() error {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	return nil
}
