package result

import (
	"slices"
	"testing"
)

// Warnings and notices are read after the last row, from every operator
// that added a source, in order; what two operators both say is said once.
func TestStatsCollectsWarningsFromEveryOperatorOnce(t *testing.T) {
	var st Stats
	decoded := []string{"2 records left as raw bytes"}
	st.Warn("PARTITION FOR KEY: registry down")
	st.WarningsFrom(func() []string { return decoded })
	st.WarningsFrom(func() []string { return decoded[len(decoded)-1:] }) // FOLLOW shares the decoder
	decoded = append(decoded, "WHERE could not compare 3 values")
	got := st.Warnings()
	want := []string{"PARTITION FOR KEY: registry down", "2 records left as raw bytes", "WHERE could not compare 3 values"}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q (read when asked, duplicates once)", got, want)
	}
}

// A Slice's Stats say its Notes and Warns as they are when asked.
func TestSliceStatsReadNotesAndWarns(t *testing.T) {
	s := NewSlice(nil, nil)
	st := s.Stats()
	s.Notes = []string{"dry run: nothing was committed"}
	s.Warns = append(s.Warns, "subject x: 403")
	if got := st.Notices(); !slices.Equal(got, s.Notes) {
		t.Errorf("notices %q, want %q", got, s.Notes)
	}
	if got := st.Warnings(); !slices.Equal(got, s.Warns) {
		t.Errorf("warnings %q, want %q", got, s.Warns)
	}
	if st.Paged() || st.Live() {
		t.Error("a slice has no pages and is not live")
	}
	if _, scanning := st.Scanned(); scanning {
		t.Error("a slice reads no records")
	}
}

// The next page is asked for only when wanted, and a statement that
// clears it (FOLLOW over a paged scan) has no pages.
func TestStatsNextPage(t *testing.T) {
	var st Stats
	calls := 0
	st.SetNextPage(func() (any, bool) { calls++; return "CONSUME t FROM ANCHOR (0:5)", true })
	if !st.Paged() || calls != 0 {
		t.Fatalf("Paged() = %v after %d calls: it must not compute the page", st.Paged(), calls)
	}
	if next, ok := st.NextPage(); !ok || next != "CONSUME t FROM ANCHOR (0:5)" {
		t.Fatalf("NextPage() = %v, %v", next, ok)
	}
	st.SetNextPage(nil)
	if _, ok := st.NextPage(); ok || st.Paged() {
		t.Fatal("a cleared next page is still there")
	}
}
