package lang

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSampleScripts: the sample scripts under testdata/lang/scripts parse.
func TestSampleScripts(t *testing.T) {
	files, err := filepath.Glob("../testdata/lang/scripts/*.kql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample scripts: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range CheckScript(string(data)) {
			t.Errorf("%s:%v", file, e)
		}
	}
}

var fence = regexp.MustCompile("(?s)```(sql)?\n(.*?)```")

// TestReferenceExamples: every ```sql example in README.md parses,
// and every error shown there is exactly what kql prints for its line.
func TestReferenceExamples(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// Only the reference section: the rest of the README has fences of
	// other languages.
	ref := string(data)
	start := strings.Index(ref, "\n## KafkaQL reference")
	if start < 0 {
		t.Fatal("README.md has no KafkaQL reference section")
	}
	ref = ref[start+1:]
	if end := strings.Index(ref, "\n## "); end > 0 {
		ref = ref[:end]
	}
	examples, errorsShown := 0, 0
	for _, m := range fence.FindAllStringSubmatch(ref, -1) {
		block := m[2]
		switch {
		case m[1] == "sql":
			examples++
			for _, e := range CheckScript(block) {
				t.Errorf("docs example %q: %v", block, e)
			}
		case regexp.MustCompile(`^\d+:\d+: `).MatchString(block):
			errorsShown++
			input := strings.Split(block, "\n")[1]
			errs := CheckScript(input)
			if len(errs) != 1 || errs[0].Error()+"\n" != block {
				t.Errorf("docs show\n%s\nbut kql prints\n%v", block, errs)
			}
		}
	}
	if examples < 11 || errorsShown < 2 {
		t.Errorf("found %d examples and %d errors in the reference", examples, errorsShown)
	}
}
