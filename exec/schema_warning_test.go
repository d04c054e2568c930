package exec

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// tenRecordsTwoUnknown writes 10 Avro records to partition 0 of a new
// topic, the 4th and 8th (key "bad") with a schema id the registry does not
// know, and returns the topic and a session with the registry.
func tenRecordsTwoUnknown(t *testing.T, b kafkatest.Backend) (string, *Session) {
	t.Helper()
	topic, cl, _ := createSpreadTopic(t, b)
	upstream := testRegistryURL(t, b)
	fx := registerSchemas(t, upstream, topic)
	var recs []*kgo.Record
	for i := 0; i < 10; i++ {
		v := fx.encode(t, schema.Ref{ID: fx.avroV1}, fmt.Sprintf(`{"id":%d,"amount":1,"at":0,"status":"PAID"}`, i))
		key := fmt.Sprintf("k%d", i)
		if i == 3 || i == 7 {
			v = []byte{0, 0x7f, 0xff, 0xff, 0xf0, 1, 2} // an id the registry does not know
			key = "bad"
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Key: []byte(key), Value: v})
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	s, _ := session(t, b)
	s.Registry = fx.reg
	return topic, s
}

// deadRegistryURL is the URL of a port nothing listens on.
func deadRegistryURL(t *testing.T) string {
	t.Helper()
	// Port 1 (tcpmux) is privileged and never served here: a port closed
	// after a bind to 0 could be handed to another test meanwhile.
	return "http://127.0.0.1:1"
}

// oneWarning runs src, checks it returns wantRows rows and exactly one
// warning, and returns that warning.
func oneWarning(t *testing.T, s *Session, src string, wantRows int) string {
	t.Helper()
	rows, _, res := query(t, s, src)
	require.Len(t, rows, wantRows, src)
	w := res.Stats().Warnings()
	require.Len(t, w, 1, "%s: %q", src, w)
	return w[0]
}

// The warning about records that did not decode does not claim they were
// shown: WHERE may have left them out.
func TestSchemaWarningDoesNotClaimFilteredRecordsWereShown(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, s := tenRecordsTwoUnknown(t, b)
		w := oneWarning(t, s, fmt.Sprintf("SELECT key FROM %s WHERE key = 'k1'", lang.QuoteName(topic)), 1)
		require.Contains(t, w, "; 2 records left as raw bytes")
		require.NotContains(t, w, "shown", "WHERE left the records out: they were not shown")
	})
}

// A tail read with WHERE (FROM NEWEST) reads the page's records twice: in
// its key scan, which decodes for WHERE, and for the page. Each record that
// did not decode counts once.
func TestSchemaWarningCountsATailReadsRecordsOnce(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, s := tenRecordsTwoUnknown(t, b)
		q := lang.QuoteName(topic)
		w := oneWarning(t, s, fmt.Sprintf("SELECT key FROM %s FROM NEWEST WHERE key = 'bad' OR key = 'k9' LIMIT 3", q), 3)
		require.Regexp(t, "partition 0 offset [37]:", w)
		require.Contains(t, w, "; 2 records left as raw bytes", "a tail read counted the records twice")

		// Without WHERE the key scan decodes nothing: the page counts.
		w = oneWarning(t, s, fmt.Sprintf("SELECT key FROM %s FROM NEWEST LIMIT 8", q), 8)
		require.Contains(t, w, "; 2 records left as raw bytes")
	})
}

// A record whose key and value both failed (a registry that cannot be
// reached, with Avro keys and values) is one record, not two.
func TestSchemaWarningCountsAKeyAndValueRecordOnce(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl, _ := createSpreadTopic(t, b)
		var recs []*kgo.Record
		for i := 0; i < 5; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: 0,
				Key: []byte{0, 0, 0, 0, 7, 2}, Value: []byte{0, 0, 0, 0, 8, 2, 4}})
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
		dead := deadRegistryURL(t)
		var err error
		s, _ := session(t, b)
		s.Registry, err = schema.Open(schema.Config{URLs: []string{dead}})
		require.NoError(t, err)
		w := oneWarning(t, s, fmt.Sprintf("CONSUME %s LIMIT ALL", lang.QuoteName(topic)), 5)
		require.Contains(t, w, "could not be reached")
		require.Contains(t, w, "; 5 records left as raw bytes", "a record's key and value counted as two records")
	})
}

// A FOLLOW may run for hours: a record that does not decode is a warning
// when it arrives, not only in the summary at Ctrl-C.
func TestFollowWarnsOfRecordsThatDoNotDecodeAsTheyArrive(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl, _ := createSpreadTopic(t, b)
		fx := registerSchemas(t, testRegistryURL(t, b), topic)
		s, _ := session(t, b)
		s.Registry = fx.reg
		live := make(chan string, 10)
		s.OnWarning = func(msg string) { live <- msg }
		f := follow(t, s, fmt.Sprintf("CONSUME %s FOLLOW", lang.QuoteName(topic)))

		good := fx.encode(t, schema.Ref{ID: fx.avroV1}, `{"id":1,"amount":1,"at":0,"status":"PAID"}`)
		require.NoError(t, cl.ProduceSync(ctxT(t),
			&kgo.Record{Topic: topic, Partition: 4, Key: []byte("good"), Value: good},
			&kgo.Record{Topic: topic, Partition: 5, Key: []byte("bad"), Value: []byte{0, 0x7f, 0xff, 0xff, 0xf0, 1}},
		).FirstErr())
		keys := f.take(t, 2, 20*time.Second)
		require.ElementsMatch(t, []string{"good", "bad"}, keys)
		select {
		case msg := <-live:
			require.Contains(t, msg, "value of partition 5 offset 0: schema id 2147483632")
			require.Contains(t, msg, "records like it are left as raw bytes")
		case <-time.After(5 * time.Second):
			t.Fatal("no warning while FOLLOW runs")
		}
		require.Empty(t, live, "one warning per schema id, not per record")
		f.stop(t)
		require.Len(t, f.res.Stats().Warnings(), 1, "and the summary at the end")
	})
}

// PARTITION FOR KEY with a registry that cannot be reached reads the
// partition of the key as written, and says so: the statement is not failed
// for a registry its topic may not need.
func TestPartitionForKeyWithTheRegistryDownWarns(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl, _ := createSpreadTopic(t, b)
		require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Partition: kafka.PartitionForKey(topic, []byte("k-1"), 6), Key: []byte("k-1"), Value: []byte("v")}).FirstErr())
		dead := deadRegistryURL(t)
		var err error
		s, _ := session(t, b)
		s.Registry, err = schema.Open(schema.Config{URLs: []string{dead}})
		require.NoError(t, err)
		rows, _, res := query(t, s, fmt.Sprintf("CONSUME %s PARTITION FOR KEY 'k-1'", lang.QuoteName(topic)))
		require.Len(t, rows, 1)
		w := res.Stats().Warnings()
		require.NotEmpty(t, w)
		require.Contains(t, w[0], "PARTITION FOR KEY hashed the key as written")
		require.Contains(t, w[0], "could not be reached")
	})
}

// SHOW SUBJECTS shows a subject whose details could not be read as a row
// with NULLs and a warning, also through WHERE (the metadata query keeps the
// statement's warnings).
func TestShowSubjectsKeepsAFailedSubjectAndItsWarning(t *testing.T) {
	f := newFake(t)
	fake := srfake.New()
	defer fake.Close()
	for _, subj := range []string{"ok-value", "broken-value"} {
		_, _, err := fake.RegisterSchema(subj, sr.Schema{Schema: `"string"`})
		require.NoError(t, err)
	}
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/subjects/broken-value/versions") {
			http.Error(w, `{"error_code":50001,"message":"store is broken"}`, http.StatusInternalServerError)
			return true
		}
		return false
	})
	var err error
	f.sess.Registry, err = schema.Open(schema.Config{URLs: []string{fake.URL()}})
	require.NoError(t, err)
	for _, src := range []string{"SHOW SUBJECTS", "SHOW SUBJECTS WHERE type IS NULL"} {
		rows, _, res := query(t, f.sess, src)
		var broken result.Row
		for _, r := range rows {
			if r[0] == "broken-value" {
				broken = r
			}
		}
		require.NotNil(t, broken, src)
		require.Nil(t, broken[1], "%s: its type is unknown, not empty", src)
		require.Nil(t, broken[2], "%s: its latest version is unknown, not 0", src)
		w := res.Stats().Warnings()
		require.Len(t, w, 1, "%s: %q", src, w)
		require.Contains(t, w[0], "broken-value")
	}
}

// SHOW SUBJECTS with the global config forbidden (role-based access): the
// subjects are listed and the warning says why some have no compatibility.
func TestShowSubjectsWithTheGlobalConfigForbidden(t *testing.T) {
	f := newFake(t)
	fake := srfake.New()
	defer fake.Close()
	_, _, err := fake.RegisterSchema("a-value", sr.Schema{Schema: `"string"`})
	require.NoError(t, err)
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/config":
			http.Error(w, `{"error_code":40301,"message":"User is denied operation Read on Subject: __GLOBAL"}`, http.StatusForbidden)
			return true
		case "/config/a-value":
			http.Error(w, `{"error_code":40408,"message":"Subject 'a-value' does not have subject-level compatibility configured"}`, http.StatusNotFound)
			return true
		}
		return false
	})
	f.sess.Registry, err = schema.Open(schema.Config{URLs: []string{fake.URL()}})
	require.NoError(t, err)
	rows, _, res := query(t, f.sess, "SHOW SUBJECTS")
	require.Equal(t, []result.Row{{"a-value", "AVRO", int64(1), int64(1), nil}}, rows)
	w := res.Stats().Warnings()
	require.Len(t, w, 1)
	require.Contains(t, w[0], "User is denied operation Read on Subject: __GLOBAL")
	require.Contains(t, w[0], "the compatibility of subjects without a level of their own is NULL")
}
