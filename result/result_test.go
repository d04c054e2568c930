package result

import (
	"errors"
	"strings"
	"testing"
)

func TestSliceReportsItsFailureOnlyAfterTheLastRow(t *testing.T) {
	missing := errors.New("ListGroups to broker 2 (127.0.0.1:9094) failed: connection refused")
	s := NewSlice([]Column{{Name: "group", Type: String}}, []Row{{"a"}, {"b"}})
	s.Failure = &PartialError{What: "SHOW GROUPS", Missing: []error{missing}}
	var got []string
	for {
		if err := s.Err(); err != nil && len(got) < 2 {
			t.Fatalf("error before the rows were read: %v", err)
		}
		r, ok := s.Next()
		if !ok {
			break
		}
		got = append(got, r[0].(string))
	}
	if strings.Join(got, ",") != "a,b" {
		t.Fatalf("rows %v", got)
	}
	err := s.Err()
	if !IsPartial(err) || !errors.Is(err, missing) {
		t.Fatalf("Err() = %v, want a partial error wrapping the broker's", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "SHOW GROUPS is missing what 1 source would have answered") || !strings.Contains(msg, "broker 2 (127.0.0.1:9094)") {
		t.Fatalf("message does not say what is missing and from where: %q", msg)
	}
}

func TestRecordCloneOwnsItsBytesAndKeepsTheSchemas(t *testing.T) {
	r := &Record{Partition: 1, Offset: 2, Key: []byte("k"), Value: []byte("{}"),
		Headers:     []Header{{Key: "h", Value: []byte("v")}},
		KeySchema:   WireSchema{ID: 7, HasID: true},
		ValueSchema: WireSchema{ID: 42, HasID: true, Decoded: true}}
	c := r.Clone()
	r.Key[0], r.Value[0], r.Headers[0].Value[0] = 'x', 'x', 'x'
	r.KeySchema, r.ValueSchema = WireSchema{}, WireSchema{}
	if string(c.Key) != "k" || string(c.Value) != "{}" || string(c.Headers[0].Value) != "v" {
		t.Fatalf("the clone shares bytes with the record: %q %q %q", c.Key, c.Value, c.Headers[0].Value)
	}
	if c.KeySchema != (WireSchema{ID: 7, HasID: true}) || c.ValueSchema != (WireSchema{ID: 42, HasID: true, Decoded: true}) {
		t.Fatalf("the clone lost the schemas: %+v %+v", c.KeySchema, c.ValueSchema)
	}
}
