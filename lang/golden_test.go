package lang

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/lang")

const goldenErrors = "../testdata/lang/errors"

// TestGoldenErrors pins the full text of the errors a person reads for each
// bad script under testdata/lang/errors, so a grammar change that makes a
// message worse shows up in review. Regenerate with go test ./lang -update.
func TestGoldenErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenErrors, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("found %d golden error files in %s, want at least 40", len(files), goldenErrors)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := parseSections(string(data))
			input, ok := sections["input.kql"]
			if !ok {
				t.Fatal("no -- input.kql -- section")
			}
			var sb strings.Builder
			for _, e := range CheckScript(input) {
				sb.WriteString(e.Error())
				sb.WriteString("\n\n")
			}
			got := sb.String()
			if got == "" {
				t.Fatalf("the script has no error; a golden error file must hold a bad input")
			}
			if *update {
				out := "-- input.kql --\n" + input + "-- errors --\n" + got
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := sections["errors"]
			if !ok {
				t.Fatal("no -- errors -- section; run go test ./lang -update")
			}
			if got != want {
				t.Errorf("errors differ from %s (run go test ./lang -update and review the diff)\n--- got\n%s--- want\n%s", file, got, want)
			}
		})
	}
}

// parseSections reads the txtar layout: "-- name --" lines start sections.
// (golang.org/x/tools/txtar is not a dependency of kql; this is all we need.)
func parseSections(data string) map[string]string {
	out := map[string]string{}
	name := ""
	var body strings.Builder
	flush := func() {
		if name != "" {
			out[name] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name = trimmed[3 : len(trimmed)-3]
			continue
		}
		body.WriteString(line)
	}
	flush()
	return out
}
