package result

// RecordEncoder appends one record's output (a JSON line, a CSV row) to buf
// and returns it.
type RecordEncoder func(buf []byte, rec *Record) []byte

// EncodingStream is a RecordStream that can hand its records out already
// encoded: a read encodes each record in the goroutine that fetched it, in
// parallel with the one that writes, which then only copies bytes. A writer
// that can use it calls EncodeWith before the first record; when it returns
// true, the stream is read with NextEncoded (not NextRecord or Next), and
// the bytes are those encoders from newEncoder made, record by record, in
// the stream's order. newEncoder is called once per goroutine that encodes,
// so an encoder may keep state without locks.
type EncodingStream interface {
	RecordStream
	EncodeWith(newEncoder func() RecordEncoder) bool
	// NextEncoded returns the next record's bytes, valid until the next
	// call; false at the end (Err then says why, as for Next).
	NextEncoded() ([]byte, bool)
	// AppendEncoded appends the next records' bytes to dst, the same
	// bytes NextEncoded would hand out one by one, and returns how many
	// (n): at least one while any is left, waiting for it if need be,
	// then more while they are at hand without waiting, until dst holds
	// size bytes or more. The caller writes out what was appended before
	// the next call, which may wait. more is false at the end (Err then
	// says why), after the n records appended.
	AppendEncoded(dst []byte, size int) (out []byte, n int, more bool)
}
