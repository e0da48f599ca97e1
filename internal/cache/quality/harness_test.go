package quality

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeEmbedder embeds each text as the vector it is given, by text.
type fakeEmbedder struct {
	vecs map[string][]float32
	err  error
}

func (f fakeEmbedder) Name() string { return "fake" }

func (f fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vecs[t]
	}
	return out, nil
}

var _ Embedder = fakeEmbedder{}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []Pair
		wantErr string
	}{
		{
			name:    "pairs and a blank line",
			content: `{"a":"x","b":"y","label":"hit","kind":"paraphrase"}` + "\n\n" + `{"a":"x","b":"z","label":"miss","kind":"number"}` + "\n",
			want:    []Pair{{A: "x", B: "y", Label: "hit", Kind: "paraphrase"}, {A: "x", B: "z", Label: "miss", Kind: "number"}},
		},
		{name: "malformed", content: `{"a":"x"` + "\n", wantErr: ":1:"},
		{name: "empty prompt", content: `{"a":"","b":"y","label":"hit","kind":"paraphrase"}`, wantErr: "empty prompt"},
		{name: "unknown label", content: `{"a":"x","b":"y","label":"maybe","kind":"paraphrase"}`, wantErr: `label "maybe"`},
		{name: "no kind", content: `{"a":"x","b":"y","label":"hit"}`, wantErr: "no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pairs.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Error("Load of a missing file: got no error, want one")
	}
}

func TestRun(t *testing.T) {
	pairs := []Pair{
		{A: "How do I reset my password?", B: "how can I reset my password", Label: LabelHit, Kind: "paraphrase"},
		{A: "What is the capital of France?", B: "Tell me France's capital", Label: LabelHit, Kind: "paraphrase"},
		{A: "What is 15% of 200?", B: "What is 20% of 200?", Label: LabelMiss, Kind: "number"},
		{A: "How do I reset my password?", B: "How do I change my username?", Label: LabelMiss, Kind: "different"},
	}
	e := fakeEmbedder{vecs: map[string][]float32{
		pairs[0].A: {1, 0}, pairs[0].B: {1, 0}, // similarity 1
		pairs[1].A: {1, 0}, pairs[1].B: {0, 1}, // 0
		pairs[2].A: {1, 0}, pairs[2].B: {1, 0.1}, // 0.995
		pairs[3].B: {0.6, 0.8}, // 0.6 with pairs[3].A = pairs[0].A
	}}
	raw, err := Run(context.Background(), e, pairs, 0.9, false)
	if err != nil {
		t.Fatal(err)
	}
	verified, err := Run(context.Background(), e, pairs, 0.9, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"raw paraphrase hit rate", raw.ParaphraseHitRate, 0.5},
		{"raw false-hit rate", raw.FalseHitRate, 0.5},
		{"verified paraphrase hit rate", verified.ParaphraseHitRate, 0.5},
		{"verified false-hit rate", verified.FalseHitRate, 0},
		{"raw report's verified false-hit rate", raw.VerifiedFalseHitRate, 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	wantKinds := map[string]KindStats{
		"paraphrase": {Label: LabelHit, Pairs: 2, Similar: 1, Verified: 1},
		"number":     {Label: LabelMiss, Pairs: 1, Similar: 1, Rejected: 1},
		"different":  {Label: LabelMiss, Pairs: 1},
	}
	if diff := cmp.Diff(wantKinds, verified.PerKind); diff != "" {
		t.Errorf("PerKind (-want +got):\n%s", diff)
	}
	if len(raw.FalseHits) != 1 || raw.FalseHits[0].Kind != "number" {
		t.Errorf("raw false hits: got %+v, want the number pair", raw.FalseHits)
	}
	if len(verified.Misses) != 1 || verified.Misses[0].B != pairs[1].B {
		t.Errorf("verified misses: got %+v, want the second paraphrase", verified.Misses)
	}
	s := verified.String()
	for _, want := range []string{"embedder fake, threshold 0.90, verification on", "paraphrase   hit", "false-hit rate:      50.0% raw, 0.0% verified", "missed paraphrases (1)"} {
		if !strings.Contains(s, want) {
			t.Errorf("Report.String() lacks %q:\n%s", want, s)
		}
	}
	if sweep := SweepTable(pairs, []float64{1, 0, 0.995, 0.6}, []float64{0.5, 0.99}); !strings.Contains(sweep, "0.50") || !strings.Contains(sweep, "0.99") {
		t.Errorf("SweepTable lacks a threshold:\n%s", sweep)
	}
}

func TestRunEmbedderFails(t *testing.T) {
	boom := errors.New("boom")
	_, err := Run(context.Background(), fakeEmbedder{err: boom}, []Pair{{A: "a", B: "b", Label: LabelHit, Kind: "paraphrase"}}, 0.9, true)
	if !errors.Is(err, boom) {
		t.Errorf("Run: got error %v, want %v", err, boom)
	}
}
