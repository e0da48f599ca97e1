package pii

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// freshRow is one row of testdata/cards_fresh.jsonl (written by
// testdata/cardsfresh, independently of the compliance quality sets).
type freshRow struct {
	Text     string `json:"text"`
	Entities []struct {
		Type          string `json:"type"`
		Start, End    int
		Brand, Format string
	} `json:"entities"`
	Kind   string `json:"kind"`
	Brand  string `json:"brand"`
	Format string `json:"format"`
	Frame  int    `json:"frame"`
}

func loadFresh(t *testing.T) []freshRow {
	t.Helper()
	f, err := os.Open("testdata/cards_fresh.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []freshRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var r freshRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Entities {
			if e.Start < 0 || e.End > len(r.Text) || e.Start >= e.End {
				t.Fatalf("entity %+v out of %q", e, r.Text)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCardsFresh measures the CREDIT_CARD detector, with every other PII
// detector on and overlaps resolved as the engine does, on the fresh set:
// recall and precision on the rows with cards (a prediction matches a card
// when it overlaps at least half of it), and the share of hard-negative
// rows (masked cards, order, invoice, tracking and payment-reference
// numbers, IMEIs, ISBNs, phones, timestamps, account numbers) with any
// card found.
func TestCardsFresh(t *testing.T) {
	rows := loadFresh(t)
	d := New()
	var tp, fn, fp, negRows, negHit int
	missBy := map[string]int{}
	for _, r := range rows {
		var cards []detect.Finding
		for _, f := range detect.Resolve(d.Detect(r.Text, nil), len(r.Text)) {
			if f.Type == detect.CreditCard {
				cards = append(cards, f)
			}
		}
		if r.Kind != "card" {
			negRows++
			if len(cards) > 0 {
				negHit++
				t.Logf("hard negative %s: found %q in %q", r.Kind, r.Text[cards[0].Start:cards[0].End], r.Text)
			}
			continue
		}
		used := make([]bool, len(cards))
		for _, e := range r.Entities {
			hit := false
			for i, f := range cards {
				ov := min(f.End, e.End) - max(f.Start, e.Start)
				if !used[i] && ov > 0 && 2*ov >= e.End-e.Start {
					used[i], hit = true, true
					break
				}
			}
			if hit {
				tp++
				continue
			}
			fn++
			missBy["brand "+e.Brand]++
			missBy["format "+e.Format]++
			missBy[fmt.Sprintf("frame %d", r.Frame)]++
			t.Logf("missed %s %s %q in %q", e.Brand, e.Format, r.Text[e.Start:e.End], r.Text)
		}
		for i, f := range cards {
			if !used[i] {
				fp++
				t.Logf("false positive %q in %q", r.Text[f.Start:f.End], r.Text)
			}
		}
	}
	recall := float64(tp) / float64(max(1, tp+fn))
	precision := float64(tp) / float64(max(1, tp+fp))
	negRate := float64(negHit) / float64(max(1, negRows))
	keys := make([]string, 0, len(missBy))
	for k := range missBy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("misses by %s: %d", k, missBy[k])
	}
	t.Logf("fresh cards: recall %.3f (%d of %d), precision %.3f (%d fp), hard negatives %d of %d flagged (%.1f%%)",
		recall, tp, tp+fn, precision, fp, negHit, negRows, 100*negRate)
	if recall < 0.98 {
		t.Errorf("recall %.3f, want >= 0.98", recall)
	}
	if precision < 0.98 {
		t.Errorf("precision %.3f, want >= 0.98", precision)
	}
	if negRate > 0.02 {
		t.Errorf("hard negatives flagged %.1f%%, want <= 2%%", 100*negRate)
	}
}
