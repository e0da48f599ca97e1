package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpus reads testdata: every sample's text and other families' counts, in
// name order.
func corpus(t *testing.T) (names []string, texts map[string]string, families map[string]map[string]int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "families.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &families); err != nil {
		t.Fatal(err)
	}
	texts = map[string]string{}
	for name := range families {
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) < 40 {
		t.Fatalf("corpus has %d samples, want the 48 of testdata/SOURCES.md", len(names))
	}
	return names, texts, families
}

// TestConservativeBound checks that Conservative is at least what every
// measured tokenizer (other families' and OpenAI's) counts for every sample,
// and reports its margins on the tuning samples (seen while choosing its
// constants) and the held-out ones (holdout-*, written and measured after).
func TestConservativeBound(t *testing.T) {
	names, texts, families := corpus(t)
	type margin struct {
		min       float64
		minSample string
		bound     int64
		highest   int64
	}
	splits := map[string]*margin{"tuning": {min: 1e9}, "held-out": {min: 1e9}}
	for _, name := range names {
		text := texts[name]
		counts := families[name]
		counts["o200k"] = exact(o200k(), text)
		counts["cl100k"] = exact(cl100k(), text)
		got := Conservative(text)
		var highest int64
		for family, n := range counts {
			if got < n {
				t.Errorf("%s: Conservative = %d, below %s's %d tokens", name, got, family, n)
			}
			highest = max(highest, n)
		}
		split := "tuning"
		if strings.HasPrefix(name, "holdout-") {
			split = "held-out"
		}
		m := splits[split]
		if r := float64(got) / float64(highest); r < m.min {
			m.min, m.minSample = r, name
		}
		m.bound += got
		m.highest += highest
	}
	for _, split := range []string{"tuning", "held-out"} {
		m := splits[split]
		t.Logf("%s: bound / highest family: closest %.2f (%s), over all text %.2f", split, m.min, m.minSample, float64(m.bound)/float64(m.highest))
	}
}

// TestOpenAICountsWithinBytes checks that no OpenAI count exceeds the text's
// bytes, the bound used past ExactBytes.
func TestOpenAICountsWithinBytes(t *testing.T) {
	names, texts, _ := corpus(t)
	for _, name := range names {
		text := texts[name]
		for _, model := range []string{"gpt-4o", "gpt-4"} {
			if got := Count(model, text); got > int64(len(text)) {
				t.Errorf("%s: Count(%q) = %d, more than its %d bytes", name, model, got, len(text))
			}
		}
	}
}
