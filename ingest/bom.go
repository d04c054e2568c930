package ingest

import (
	"bufio"
	"bytes"
)

// bom is UTF-8's byte order mark, which some editors (Notepad, Excel's
// "CSV UTF-8") write at the start of a file. It is no part of the first
// record: it is skipped at the start of the input, as kql's scripts skip it.
var bom = []byte("\xEF\xBB\xBF")

// skipBOM drops a byte order mark at the start of br and returns its
// length (0: none). It peeks one byte before three, so a quiet pipe whose
// first line is shorter than a mark is not waited on.
func skipBOM(br *bufio.Reader) int {
	if b, err := br.Peek(1); err != nil || b[0] != bom[0] {
		return 0
	}
	if b, err := br.Peek(len(bom)); err == nil && bytes.Equal(b, bom) {
		br.Discard(len(bom))
		return len(bom)
	}
	return 0
}

// trimBOM drops a byte order mark at the start of the input's first chunk.
func trimBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, bom)
}
