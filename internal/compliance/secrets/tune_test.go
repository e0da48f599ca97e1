package secrets

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// TestTuneSet reports precision and recall per secret type on the quality
// package's tune split (never the held-out one) when SECRETS_TUNE_DIR
// names its testdata directory. It is a tuning aid, not a gate: the quality
// package owns the figures.
func TestTuneSet(t *testing.T) {
	dir := os.Getenv("SECRETS_TUNE_DIR")
	if dir == "" {
		t.Skip("SECRETS_TUNE_DIR not set")
	}
	d := MustNew()
	type ent struct {
		Type       detect.Type `json:"type"`
		Start, End int
	}
	type row struct {
		Text     string `json:"text"`
		Entities []ent  `json:"entities"`
		Kind     string `json:"kind"`
	}
	read := func(name string) []row {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var rows []row
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r row
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		return rows
	}
	tp, fp, fn := map[detect.Type]int{}, map[detect.Type]int{}, map[detect.Type]int{}
	verbose := os.Getenv("SECRETS_TUNE_VERBOSE") != ""
	for _, r := range read("pii_tune.jsonl") {
		got := detect.Resolve(d.Detect(r.Text, nil), len(r.Text))
		want := map[[2]int]detect.Type{}
		for _, e := range r.Entities {
			if e.Type.Category() == detect.CategorySecret {
				want[[2]int{e.Start, e.End}] = e.Type
			}
		}
		seen := map[[2]int]bool{}
		for _, f := range got {
			k := [2]int{f.Start, f.End}
			if want[k] == f.Type {
				tp[f.Type]++
				seen[k] = true
				continue
			}
			fp[f.Type]++
			if verbose {
				t.Logf("FP %s %s %q in %q", f.Type, f.Rule, r.Text[f.Start:f.End], r.Text)
			}
		}
		for k, typ := range want {
			if !seen[k] {
				fn[typ]++
				if verbose {
					t.Logf("FN %s %q in %q (got %v)", typ, r.Text[k[0]:k[1]], r.Text, describe(r.Text, got))
				}
			}
		}
	}
	var types []string
	for _, m := range []map[detect.Type]int{tp, fp, fn} {
		for k := range m {
			types = append(types, string(k))
		}
	}
	sort.Strings(types)
	done := map[string]bool{}
	for _, k := range types {
		if done[k] {
			continue
		}
		done[k] = true
		typ := detect.Type(k)
		p := float64(tp[typ]) / float64(max(1, tp[typ]+fp[typ]))
		rc := float64(tp[typ]) / float64(max(1, tp[typ]+fn[typ]))
		t.Logf("%-15s tp %4d fp %3d fn %3d precision %.3f recall %.3f", k, tp[typ], fp[typ], fn[typ], p, rc)
	}
	neg, flagged := 0, 0
	kinds := map[string]int{}
	for _, r := range read("hardneg_tune.jsonl") {
		neg++
		if got := d.Detect(r.Text, nil); len(got) > 0 {
			flagged++
			kinds[r.Kind]++
			if verbose {
				t.Logf("HARDNEG %s: %v in %q", r.Kind, describe(r.Text, got), r.Text)
			}
		}
	}
	t.Logf("hard negatives flagged: %d of %d (%.1f%%) %v", flagged, neg, 100*float64(flagged)/float64(max(1, neg)), kinds)
	inj, injFlagged := 0, 0
	for _, r := range read("injection_tune.jsonl") {
		inj++
		if got := d.Detect(r.Text, nil); len(got) > 0 {
			injFlagged++
			if verbose {
				t.Logf("INJECTION SET %s: %v in %q", r.Kind, describe(r.Text, got), r.Text)
			}
		}
	}
	t.Logf("injection-set texts (no secrets in them) flagged: %d of %d", injFlagged, inj)
}
