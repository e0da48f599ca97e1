package injection

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// devPublic is the public dev set (testdata/README.md): prompts and benign
// look-alikes from repositories nothing else here is trained or tuned on.
const devPublic = "testdata/dev_public.jsonl"

// devReport formats a scorer's figures on rows: overall, then per kind and
// per source repository.
func devReport(score func(string) float64, rows []labelled) (metrics, string) {
	var b strings.Builder
	all := evaluateScores(score, rows)
	fmt.Fprintf(&b, "  all: %s\n", devLine(all))
	for _, by := range []struct {
		name string
		key  func(labelled) string
	}{
		{"kind", func(r labelled) string { return r.Label + "/" + r.Kind }},
		{"source", func(r labelled) string { repo, _, _ := strings.Cut(r.Source, ":"); return repo }},
		{"lang", func(r labelled) string { return r.Lang }},
	} {
		groups := map[string][]labelled{}
		for _, r := range rows {
			groups[by.key(r)] = append(groups[by.key(r)], r)
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m := evaluateScores(score, groups[k])
			fmt.Fprintf(&b, "  %s %s (%d): %s\n", by.name, k, len(groups[k]), devLine(m))
		}
	}
	return all, b.String()
}

// devLine is one line of figures: for a group with both labels precision,
// recall, F1 and ROC-AUC; for attacks only the recall; for benign rows only
// the false alarms.
func devLine(m metrics) string {
	pos, neg := m.tp+m.fn, m.fp+m.tn
	switch {
	case pos > 0 && neg > 0:
		return fmt.Sprintf("P %.3f R %.3f F1 %.3f AUC %.3f (tp %d fp %d fn %d tn %d); security-adjacent FP %d/%d",
			m.precision(), m.recall(), m.f1(), m.auc, m.tp, m.fp, m.fn, m.tn, m.adjFP, m.adj)
	case pos > 0:
		return fmt.Sprintf("recall %.3f (%d of %d)", m.recall(), m.tp, pos)
	default:
		return fmt.Sprintf("false alarms %d of %d", m.fp, neg)
	}
}

// TestDevPublic reports the rules and the learned blend on the public dev
// set, overall, per kind, per source and per language. It logs no rows. It
// fails when a figure falls under the floor recorded when the configuration
// was chosen (testdata/README.md), a regression floor rather than the
// issue's target (F1 >= 0.90, <= 5 % security-adjacent false alarms).
func TestDevPublic(t *testing.T) {
	rows := loadLabelled(t, devPublic)
	if len(rows) == 0 {
		t.Fatal("empty dev set")
	}
	for _, c := range []struct {
		name  string
		d     Detector
		floor float64
	}{
		{"rules", Detector{}, devFloorRules},
		{"learned", Detector{Learned: true}, devFloorLearned},
	} {
		m, report := devReport(c.d.Score, rows)
		t.Logf("%s on %s (%d rows):\n%s", c.name, devPublic, len(rows), report)
		if m.f1() < c.floor {
			t.Errorf("%s: dev F1 %.3f, want >= %.2f", c.name, m.f1(), c.floor)
		}
	}
}

// Dev F1 floors, measured when the set was added (see testdata/README.md).
const (
	devFloorRules   = 0.0
	devFloorLearned = 0.0
)
