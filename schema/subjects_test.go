package schema

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func TestSubjects(t *testing.T) {
	f := newFake(t, srfake.WithGlobalCompat(sr.CompatFull))
	f.register(t, "zeta-value", sr.Schema{Type: sr.TypeAvro, Schema: `"string"`})
	f.register(t, "alpha-value", sr.Schema{Type: sr.TypeAvro, Schema: userAvro})
	latest := f.register(t, "alpha-value", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"x","type":"int","default":0}]}`})
	pb := f.register(t, "mid-value", sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; message M { int32 a = 1; }`})
	js := f.register(t, "beta-key", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"string"}`})
	require.NoError(t, f.SetCompat("mid-value", sr.CompatNone))
	reg := f.open(t)

	subjects, errs, _, err := reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Empty(t, errs)
	require.Equal(t, []Subject{
		{Name: "alpha-value", Type: "AVRO", LatestVersion: 2, LatestID: latest, Compatibility: "FULL"},
		{Name: "beta-key", Type: "JSON", LatestVersion: 1, LatestID: js, Compatibility: "FULL"},
		{Name: "mid-value", Type: "PROTOBUF", LatestVersion: 1, LatestID: pb, Compatibility: "NONE"},
		{Name: "zeta-value", Type: "AVRO", LatestVersion: 1, LatestID: 1, Compatibility: "FULL"},
	}, subjects)

	// A subject whose latest version cannot be read is listed, with its
	// error beside it, not dropped.
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/subjects/beta-key/versions/") {
			registryError(w, http.StatusUnprocessableEntity, `{"error_code":42202,"message":"broken"}`)
			return true
		}
		return false
	})
	subjects, errs, _, err = reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Len(t, subjects, 4)
	require.Equal(t, "beta-key", subjects[1].Name)
	require.Zero(t, subjects[1].LatestID)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs["beta-key"], "broken")
	require.ErrorContains(t, errs["beta-key"], "beta-key")
	require.Equal(t, "AVRO", subjects[0].Type)
}

// Role-based access may let a user list and read subjects but not the
// global config: SHOW SUBJECTS still lists them, a subject's own level
// shows, the others have none, and a warning says why. A 403 on the list
// itself is still the statement's error.
func TestSubjectsWithTheGlobalConfigForbidden(t *testing.T) {
	f := newFake(t)
	f.register(t, "own-value", sr.Schema{Type: sr.TypeAvro, Schema: `"string"`})
	f.register(t, "plain-value", sr.Schema{Type: sr.TypeAvro, Schema: `"long"`})
	require.NoError(t, f.SetCompat("own-value", sr.CompatNone))
	var forbidAll atomic.Bool
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/config" || forbidAll.Load() {
			registryError(w, http.StatusForbidden, `{"error_code":40301,"message":"User is denied operation Read on Subject: __GLOBAL"}`)
			return true
		}
		if r.URL.Path == "/config/plain-value" {
			// Confluent's answer for a subject without a level of its own
			// (srfake answers the global level instead).
			registryError(w, http.StatusNotFound, `{"error_code":40408,"message":"Subject 'plain-value' does not have subject-level compatibility configured"}`)
			return true
		}
		return false
	})
	reg := f.open(t)
	subjects, errs, warnings, err := reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Empty(t, errs)
	require.Len(t, subjects, 2)
	require.Equal(t, "NONE", subjects[0].Compatibility)
	require.Equal(t, "", subjects[1].Compatibility, "no level of its own, and the global one is unknown: none, not a guess")
	require.Equal(t, "AVRO", subjects[1].Type)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "403")
	require.Contains(t, warnings[0], "the compatibility of subjects without a level of their own is NULL")

	forbidAll.Store(true)
	_, _, _, err = reg.Subjects(t.Context())
	require.ErrorContains(t, err, "403")
}

func TestSubjectsEmptyAndDown(t *testing.T) {
	f := newFake(t)
	reg := f.open(t)
	subjects, errs, _, err := reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Empty(t, subjects)
	require.Empty(t, errs)
	f.Close()
	_, _, _, err = reg.Subjects(t.Context())
	require.True(t, IsUnreachable(err), "%v", err)
}

func TestDescribe(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}`})
	v1 := f.register(t, "people-value", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"P","fields":[{"name":"a","type":"Address"}]}`,
		References: []sr.SchemaReference{{Name: "Address", Subject: "address", Version: 1}}})
	v2 := f.register(t, "people-value", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"P","fields":[{"name":"a","type":"Address"},{"name":"b","type":"int","default":1}]}`,
		References: []sr.SchemaReference{{Name: "Address", Subject: "address", Version: 1}}})
	reg := f.open(t)

	vs, err := reg.Describe(t.Context(), "people-value", 0)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, []int{1, 2}, []int{vs[0].Version, vs[1].Version})
	require.Equal(t, []int{v1, v2}, []int{vs[0].ID, vs[1].ID})
	require.Equal(t, "AVRO", vs[0].Type)
	require.Contains(t, vs[1].Schema, `"b"`)
	require.Equal(t, "Address=address:1", FormatReferences(vs[0].References))

	vs, err = reg.Describe(t.Context(), "people-value", 1)
	require.NoError(t, err)
	require.Len(t, vs, 1)
	require.Equal(t, v1, vs[0].ID)

	_, err = reg.Describe(t.Context(), "nobody", 0)
	require.ErrorContains(t, err, `subject "nobody" is not in the registry`)
	_, err = reg.Describe(t.Context(), "people-value", 7)
	require.ErrorContains(t, err, `subject "people-value" has no version 7`)
	_, err = reg.Encode(t.Context(), Ref{Subject: "people-value", Version: 9}, []byte(`{}`))
	require.ErrorContains(t, err, `subject "people-value" has no version 9`)
	_, err = reg.Encode(t.Context(), Ref{Subject: "nobody"}, []byte(`{}`))
	require.ErrorContains(t, err, `subject "nobody" is not in the registry`)
	_, err = reg.Encode(t.Context(), Ref{ID: 999}, []byte(`{}`))
	require.ErrorContains(t, err, "schema id 999: the registry")
}

func TestTopicSubjectsAndRefString(t *testing.T) {
	k, v := TopicSubjects("orders")
	require.Equal(t, "orders-key", k)
	require.Equal(t, "orders-value", v)
	require.Equal(t, "subject s (latest version)", Ref{Subject: "s"}.String())
	require.Equal(t, "subject s version 3", Ref{Subject: "s", Version: 3}.String())
	require.Equal(t, "schema id 5", Ref{ID: 5}.String())
	require.Equal(t, "subject s id 5", Ref{Subject: "s", ID: 5}.String())
}

// A subject's own compatibility that cannot be read is an error for that
// subject, not the global level shown as if it were the subject's.
func TestSubjectsCompatibilityUnreadable(t *testing.T) {
	f := newFake(t, srfake.WithGlobalCompat(sr.CompatFull))
	f.register(t, "a-value", sr.Schema{Type: sr.TypeAvro, Schema: `"int"`})
	f.register(t, "b-value", sr.Schema{Type: sr.TypeAvro, Schema: `"long"`})
	require.NoError(t, f.SetCompat("b-value", sr.CompatNone))
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/config/b-value" {
			registryError(w, http.StatusUnprocessableEntity, `{"error_code":42203,"message":"config unreadable"}`)
			return true
		}
		return false
	})
	reg := f.open(t)
	subjects, errs, _, err := reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Len(t, subjects, 2)
	require.Equal(t, "FULL", subjects[0].Compatibility)
	require.NotEqual(t, "FULL", subjects[1].Compatibility, "b-value's own level is NONE: the global one is not it")
	require.ErrorContains(t, errs["b-value"], "config unreadable")
	require.Equal(t, 1, subjects[1].LatestVersion, "what could be read is kept")
}

// Many subjects are asked about a few at a time, not all at once (a
// registry with thousands of subjects got thousands of connections).
func TestSubjectsBoundedConcurrency(t *testing.T) {
	f := newFake(t)
	for i := range 60 {
		f.register(t, "s"+itoa(i), sr.Schema{Type: sr.TypeAvro, Schema: `"int"`})
	}
	var mu sync.Mutex
	inFlight, peak := 0, 0
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return false
	})
	reg := f.open(t)
	subjects, errs, _, err := reg.Subjects(t.Context())
	require.NoError(t, err)
	require.Empty(t, errs)
	require.Len(t, subjects, 60)
	require.LessOrEqual(t, peak, 16, "peak concurrent requests")
}
