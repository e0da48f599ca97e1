package quality

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// The labelled sets, tune and held-out (see testdata/README.md), embedded
// so that Run works from any package's tests.
//
//go:embed testdata/*.jsonl
var sets embed.FS

// Splits.
const (
	SplitTune    = "tune"
	SplitHeldOut = "heldout"
)

// PublicSet is the name of the injection set of prompts from public
// collections, in both splits (injection_public_tune.jsonl,
// injection_public_heldout.jsonl).
const PublicSet = "injection_public"

// FreshSet is the name of the fresh held-out injection set
// (injection_fresh_heldout.jsonl): CyberSecEval's prompt injections and
// false-refusal prompts, taken after the detector was tuned and measured
// once (see testdata/README.md). It has no tune split.
const FreshSet = "injection_fresh"

// Labels of an InjectionRow.
const (
	LabelInjection = "injection"
	LabelJailbreak = "jailbreak"
	LabelBenign    = "benign"
)

// SecurityAdjacentKinds are the kinds of benign injection rows that talk
// about security, injections or jailbreaks, or use their trigger words: the
// benign text a detector is most tempted to flag.
var SecurityAdjacentKinds = []string{"security_question", "trigger_words"}

// maxLine bounds one line of a set.
const maxLine = 1 << 20

// An Entity is one labelled span of an Example: Text[Start:End] in bytes.
type Entity struct {
	Type  detect.Type `json:"type"`
	Start int         `json:"start"`
	End   int         `json:"end"`
}

// An Example is a text with every PII and secret value in it labelled.
type Example struct {
	Text     string   `json:"text"`
	Entities []Entity `json:"entities"`
	Source   string   `json:"source"`
}

// A HardNegative is a text holding no PII and no secret, though a naive
// detector would find some; Kind says what it holds (an order number
// failing Luhn, a UUID, a placeholder key…).
type HardNegative struct {
	Text   string `json:"text"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
}

// An InjectionRow is a text labelled injection, jailbreak or benign.
type InjectionRow struct {
	Text   string `json:"text"`
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Lang   string `json:"lang"`
	Source string `json:"source"`
}

// Positive reports whether r is an attack (injection or jailbreak).
func (r InjectionRow) Positive() bool { return r.Label != LabelBenign }

// LoadExamples reads PII examples from a JSON Lines file. It fails on a
// malformed line, an empty text, or an entity out of the text's bounds,
// empty, or without a type.
func LoadExamples(path string) ([]Example, error) {
	return loadFile(path, checkExample)
}

// LoadHardNegatives reads hard negatives from a JSON Lines file. It fails
// on a malformed line, an empty text or no kind.
func LoadHardNegatives(path string) ([]HardNegative, error) {
	return loadFile(path, func(h HardNegative) error {
		if h.Text == "" || h.Kind == "" {
			return fmt.Errorf("empty text or kind")
		}
		return nil
	})
}

// LoadInjections reads injection rows from a JSON Lines file. It fails on a
// malformed line, an empty text, an unknown label or no kind.
func LoadInjections(path string) ([]InjectionRow, error) {
	return loadFile(path, checkInjection)
}

func checkExample(e Example) error {
	if e.Text == "" {
		return fmt.Errorf("empty text")
	}
	for _, en := range e.Entities {
		if en.Type == "" || en.Start < 0 || en.Start >= en.End || en.End > len(e.Text) {
			return fmt.Errorf("entity %s [%d,%d) out of a text of %d bytes", en.Type, en.Start, en.End, len(e.Text))
		}
	}
	return nil
}

func checkInjection(r InjectionRow) error {
	switch {
	case r.Text == "":
		return fmt.Errorf("empty text")
	case r.Label != LabelInjection && r.Label != LabelJailbreak && r.Label != LabelBenign:
		return fmt.Errorf("label %q, want %q, %q or %q", r.Label, LabelInjection, LabelJailbreak, LabelBenign)
	case r.Kind == "":
		return fmt.Errorf("no kind")
	}
	return nil
}

// loadFile reads path from the disk, or, when it is not there and names a
// set, from the embedded copy.
func loadFile[T any](path string, check func(T) error) ([]T, error) {
	data, err := readSet(path)
	if err != nil {
		return nil, err
	}
	return decode(path, bytes.NewReader(data), check)
}

func readSet(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return data, nil
	}
	if emb, e2 := sets.ReadFile(path); e2 == nil {
		return emb, nil
	}
	return nil, err
}

// decode reads JSON Lines of T from r, skipping blank lines, and checks each.
func decode[T any](name string, r io.Reader, check func(T) error) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if err := check(v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// A Scanner returns the PII and secret findings of a text; injection
// findings among them are ignored. It should return resolved findings
// (detect.Resolve): two findings of one span count as a match and a false
// positive.
type Scanner func(text string) []detect.Finding

// An InjectionScorer returns a text's injection or jailbreak score, higher
// meaning more likely an attack. NaN counts as the lowest score.
type InjectionScorer func(text string) float64

// Matches is the span-matching rule: a prediction matches a gold entity of
// the same type when their overlap covers at least half of the gold span
// (2·overlap ≥ gold length). So a prediction that takes in a separator
// more or less, or leaves off a check digit, still matches; one that covers
// a third of a card number, or a word next to it, does not.
func Matches(pred detect.Finding, gold Entity) bool {
	if pred.Type != gold.Type {
		return false
	}
	ov := min(pred.End, gold.End) - max(pred.Start, gold.Start)
	return ov > 0 && 2*ov >= gold.End-gold.Start
}

// EvaluateSpans scans every example and counts, per type, the gold entities
// matched by a prediction (Matches; each prediction matches at most one
// entity, the one it overlaps most), those missed, and the predictions
// matching none. See SpanReport.
func EvaluateSpans(examples []Example, scan Scanner) SpanReport {
	r := SpanReport{PerType: map[detect.Type]TypeStats{}, Examples: len(examples)}
	for _, ex := range examples {
		var preds []detect.Finding
		for _, f := range scan(ex.Text) {
			if f.Type.Category() != detect.CategoryInjection {
				preds = append(preds, f)
			}
		}
		used := make([]bool, len(preds))
		for _, g := range ex.Entities {
			s := r.PerType[g.Type]
			s.Gold++
			best, bestOv := -1, 0
			for i, p := range preds {
				if used[i] || !Matches(p, g) {
					continue
				}
				if ov := min(p.End, g.End) - max(p.Start, g.Start); ov > bestOv {
					best, bestOv = i, ov
				}
			}
			if best < 0 {
				s.FN++
				r.Missed = append(r.Missed, SpanError{Source: ex.Source, Type: g.Type, Value: value(ex.Text, g.Start, g.End), Other: confusedWith(preds, g)})
			} else {
				used[best] = true
				s.TP++
				if preds[best].Start == g.Start && preds[best].End == g.End {
					s.Exact++
				}
			}
			r.PerType[g.Type] = s
		}
		for i, p := range preds {
			if used[i] {
				continue
			}
			s := r.PerType[p.Type]
			s.FP++
			r.PerType[p.Type] = s
			r.Spurious = append(r.Spurious, SpanError{Source: ex.Source, Type: p.Type, Value: value(ex.Text, p.Start, p.End), Other: goldUnder(ex.Entities, p)})
		}
	}
	return r
}

// confusedWith is the type of a prediction overlapping g with another type,
// "" if none.
func confusedWith(preds []detect.Finding, g Entity) detect.Type {
	for _, p := range preds {
		if p.Type != g.Type && p.Start < g.End && g.Start < p.End {
			return p.Type
		}
	}
	return ""
}

// goldUnder is the type of a gold entity p overlaps, "" if none.
func goldUnder(gold []Entity, p detect.Finding) detect.Type {
	for _, g := range gold {
		if p.Start < g.End && g.Start < p.End {
			return g.Type
		}
	}
	return ""
}

// value is text[start:end] when those are in bounds, else "".
func value(text string, start, end int) string {
	if start < 0 || end > len(text) || start >= end {
		return ""
	}
	return text[start:end]
}

// EvaluateHardNegatives scans every hard negative; a row is a false
// positive when the scanner finds any PII or secret in it.
func EvaluateHardNegatives(rows []HardNegative, scan Scanner) HardNegReport {
	r := HardNegReport{Rows: len(rows), PerKind: map[string]KindCount{}, ByType: map[detect.Type]int{}}
	for _, h := range rows {
		k := r.PerKind[h.Kind]
		k.Rows++
		flagged := false
		for _, f := range scan(h.Text) {
			if f.Type.Category() == detect.CategoryInjection {
				continue
			}
			r.ByType[f.Type]++
			if !flagged {
				r.Flagged = append(r.Flagged, SpanError{Source: h.Kind, Type: f.Type, Value: value(h.Text, f.Start, f.End)})
			}
			flagged = true
		}
		if flagged {
			k.Flagged++
			r.FalsePositives++
		}
		r.PerKind[h.Kind] = k
	}
	r.FPRate = ratio(r.FalsePositives, r.Rows)
	return r
}

// EvaluateInjection scores every row; a row is predicted an attack when its
// score is at least threshold. See InjectionReport.
func EvaluateInjection(rows []InjectionRow, score InjectionScorer, threshold float64) InjectionReport {
	r := InjectionReport{Threshold: threshold, Rows: len(rows), PerKind: map[string]KindCount{}, PerLang: map[string]KindCount{}}
	adjacent := map[string]bool{}
	for _, k := range SecurityAdjacentKinds {
		adjacent[k] = true
	}
	scores := make([]float64, len(rows))
	labels := make([]bool, len(rows))
	var tp, fp, fn, tn, adj, adjFP int
	for i, row := range rows {
		s := score(row.Text)
		if math.IsNaN(s) {
			s = math.Inf(-1)
		}
		scores[i], labels[i] = s, row.Positive()
		flagged := s >= threshold
		k := r.PerKind[row.Label+"/"+row.Kind]
		k.Rows++
		l := r.PerLang[row.Lang]
		l.Rows++
		if flagged {
			k.Flagged++
			l.Flagged++
		}
		r.PerKind[row.Label+"/"+row.Kind], r.PerLang[row.Lang] = k, l
		switch {
		case labels[i] && flagged:
			tp++
		case labels[i]:
			fn++
			r.Missed = append(r.Missed, InjectionError{Row: row, Score: s})
		case flagged:
			fp++
			r.FalseAlarms = append(r.FalseAlarms, InjectionError{Row: row, Score: s})
		default:
			tn++
		}
		if !labels[i] && adjacent[row.Kind] {
			adj++
			if flagged {
				adjFP++
			}
		}
	}
	r.TP, r.FP, r.FN, r.TN = tp, fp, fn, tn
	r.Precision = ratio(tp, tp+fp)
	r.Recall = ratio(tp, tp+fn)
	r.F1 = f1(r.Precision, r.Recall)
	r.FPRate = ratio(fp, fp+tn)
	r.SecurityAdjacent = adj
	r.SecurityAdjacentFPRate = ratio(adjFP, adj)
	r.AUC = ROCAUC(scores, labels)
	return r
}

// ROCAUC is the area under the ROC curve of scores for labels (true =
// positive): the probability that a random positive scores above a random
// negative, ties counting one half (Mann–Whitney U with mid-ranks). It is
// NaN when either class is empty; NaN scores count as the lowest.
func ROCAUC(scores []float64, labels []bool) float64 {
	n := min(len(scores), len(labels))
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	val := func(i int) float64 {
		if math.IsNaN(scores[i]) {
			return math.Inf(-1)
		}
		return scores[i]
	}
	sort.SliceStable(idx, func(a, b int) bool { return val(idx[a]) < val(idx[b]) })
	var pos, neg int
	var rankSum float64
	for i := 0; i < n; {
		j := i
		for j < n && val(idx[j]) == val(idx[i]) {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of the 1-based ranks i+1 … j
		for k := i; k < j; k++ {
			if labels[idx[k]] {
				pos++
				rankSum += mid
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg))
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// sortedTypes is the keys of m in order.
func sortedTypes[V any](m map[detect.Type]V) []detect.Type {
	ts := make([]detect.Type, 0, len(m))
	for t := range m {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}
