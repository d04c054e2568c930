package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file that starts with UTF-8's byte order mark (Notepad, Excel's "CSV
// UTF-8") imports as if it had none, in every format and on both scan
// paths.
func TestInputStartingWithAByteOrderMarkIsRead(t *testing.T) {
	const mark = "\xEF\xBB\xBF"
	for _, c := range []struct {
		f  Format
		in string
	}{
		{JSONL, `{"key":"k","value":"v"}` + "\n"},
		{JSON, `[{"key":"k","value":"v"}]` + "\n"},
		{CSV, "partition,offset,timestamp,key,value,headers\n,,,k,v,\n"},
		{TSV, "\\N\t\\N\t\\N\tk\tv\t\n"},
		{Lines, "k:v\n"},
	} {
		for _, parallel := range []bool{false, true} {
			var got []Record
			err := Scan(context.Background(), strings.NewReader(mark+c.in), "in."+c.f.String(), c.f, Options{KeyDelimiter: ":"}, ScanConfig{Parallel: parallel, KeepBytes: true}, func(b *Batch) error {
				got = append(got, b.Records...)
				return nil
			})
			require.NoError(t, err, "%s parallel=%v", c.f, parallel)
			require.Len(t, got, 1, "%s parallel=%v", c.f, parallel)
			require.Equal(t, "k", string(got[0].Key), "%s parallel=%v", c.f, parallel)
			require.Equal(t, "v", string(got[0].Value), "%s parallel=%v", c.f, parallel)
		}
	}
}
