package fresh

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		prompt string
		want   Reason
	}{
		// The brief's examples.
		{"Pick a random number", Random},
		{"flip a coin", Random},
		{"Generate a random name", Random},
		{"Generate a password for my router", Secret},
		{"Give me a UUID", Secret},
		{"Create an API key", Secret},
		{"What time is it?", Clock},
		{"What's today's date?", Clock},
		{"What day is it?", Clock},
		{"What's the latest news?", Live},
		{"What is the price of Bitcoin today?", Live},
		{"What's the weather in Paris?", Live},
		{"What's the score of the game right now?", Live},
		// Hard negatives.
		{"Explain how random forests work.", None},
		{"What is the date format in ISO 8601?", None},
		{"History of the latest ice age", None},
		{"How do I generate a random number in Python?", None},
		{"How do I reset my password?", None},
		{"How do I get the current date in Go?", None},
		{"What causes stock prices to rise?", None},
		{"Summarise this news: the council voted to expand the park.", None},
		{"Who won the 2014 World Cup?", None},
		// Nothing to read.
		{"", None},
		{"   ?! ", None},
	}
	for _, tt := range tests {
		if got := Check(tt.prompt); got != tt.want {
			t.Errorf("Check(%q): got %v, want %v", tt.prompt, got, tt.want)
		}
	}
}

// example is one labelled prompt of testdata.
type example struct {
	Text  string `json:"text"`
	Label string `json:"label"` // fresh or ordinary
	Kind  string `json:"kind"`  // random, secret, clock, live; plain for ordinary prompts of no kind
}

func load(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var e example
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if e.Text == "" || (e.Label != "fresh" && e.Label != "ordinary") || e.Kind == "" {
			t.Fatalf("%s:%d: want a text, a label fresh or ordinary and a kind, got %+v", path, n, e)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// score is a confusion matrix.
type score struct{ tp, fp, fn, tn int }

func (s score) precision() float64 { return ratio(s.tp, s.tp+s.fp) }
func (s score) recall() float64    { return ratio(s.tp, s.tp+s.fn) }

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}

// evaluate runs Check on every example; with verbose, it logs the errors.
func evaluate(t *testing.T, exs []example, verbose bool) score {
	var s score
	for _, e := range exs {
		got := Check(e.Text) != None
		switch {
		case got && e.Label == "fresh":
			s.tp++
		case got:
			s.fp++
			if verbose {
				t.Logf("flagged, ordinary (%s): %q → %v", e.Kind, e.Text, Check(e.Text))
			}
		case e.Label == "fresh":
			s.fn++
			if verbose {
				t.Logf("missed, fresh (%s): %q", e.Kind, e.Text)
			}
		default:
			s.tn++
		}
	}
	return s
}

// TestTuneSplit holds the rules to their targets on the split they were
// written against, and lists what they get wrong there.
func TestTuneSplit(t *testing.T) {
	s := evaluate(t, load(t, "testdata/tune.jsonl"), true)
	t.Logf("tune: precision %.3f, recall %.3f (tp %d fp %d fn %d tn %d)", s.precision(), s.recall(), s.tp, s.fp, s.fn, s.tn)
	if s.precision() < 0.95 || s.recall() < 0.95 {
		t.Errorf("tune split: got precision %.3f and recall %.3f, want both ≥ 0.95", s.precision(), s.recall())
	}
}

// TestHeldOutSplit measures the rules on prompts they were never tuned on.
// It reports the figures only, never the prompts it gets wrong: reading
// them would be tuning on them. The floor only catches a collapse.
func TestHeldOutSplit(t *testing.T) {
	s := evaluate(t, load(t, "testdata/heldout.jsonl"), false)
	t.Logf("held-out: precision %.3f, recall %.3f (tp %d fp %d fn %d tn %d)", s.precision(), s.recall(), s.tp, s.fp, s.fn, s.tn)
	if s.precision() < 0.8 || s.recall() < 0.8 {
		t.Errorf("held-out split: got precision %.3f and recall %.3f, want both ≥ 0.8", s.precision(), s.recall())
	}
}

// TestSplitsAreDisjoint: no prompt is in both splits.
func TestSplitsAreDisjoint(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range load(t, "testdata/tune.jsonl") {
		seen[e.Text] = true
	}
	for _, e := range load(t, "testdata/heldout.jsonl") {
		if seen[e.Text] {
			t.Errorf("%q is in both splits", e.Text)
		}
	}
}

var sink Reason

// BenchmarkCheck: a typical question (no flag, the common case), a flagged
// one, and a long prompt cut at maxWords.
func BenchmarkCheck(b *testing.B) {
	for _, bc := range []struct{ name, prompt string }{
		{"ordinary", "What is the difference between a mutex and a semaphore in operating systems?"},
		{"fresh", "What's the weather like in Paris today?"},
		{"long", longPrompt},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = Check(bc.prompt)
			}
		})
	}
}

const longPrompt = `Please review the following design document and tell me whether the approach to caching is sound.
The service keeps an in-process LRU keyed by a hash of the canonical request, backed by a shared store, and a
vector index for near duplicates; entries expire after a day and a flush bumps a generation counter so that every
replica drops what it holds at once. Concerns raised so far include memory growth, stale answers and tenant isolation.`

// FuzzCheck: any text, of any bytes and length, is read without a panic.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"Pick a random number between 1 and 10.", "what’s today’s date", "1-100", "roll 3d6", longPrompt, "\xe2\x80", "a-1 b-2 c-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Check(s)
	})
}
