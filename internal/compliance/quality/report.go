package quality

import (
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// The targets on the held-out split.
const (
	// TargetRecallStrict is the recall wanted of the types with a
	// validator or a fixed shape (StrictTypes).
	TargetRecallStrict = 0.98
	// TargetRecallLoose is the recall wanted of PHONE and IP_ADDRESS.
	TargetRecallLoose = 0.95
	// TargetPrecision is the precision wanted of every targeted type.
	TargetPrecision = 0.95
	// TargetHardNegFP is the largest share of hard negatives with a finding.
	TargetHardNegFP = 0.05
	// TargetInjectionF1 is the injection detector's F1 wanted.
	TargetInjectionF1 = 0.90
	// TargetSecurityAdjacentFP is the largest share of benign
	// security-adjacent rows flagged as attacks.
	TargetSecurityAdjacentFP = 0.05
	// DefaultInjectionThreshold is the score from which Run counts a row
	// an attack.
	DefaultInjectionThreshold = 0.5
)

// StrictTypes and LooseTypes are the targeted types: recall at least
// TargetRecallStrict and TargetRecallLoose, precision at least
// TargetPrecision. PERSON, DATE_OF_BIRTH, PRIVATE_KEY, JWT and DATABASE_URL
// are measured and reported but have no target.
var (
	StrictTypes = []detect.Type{detect.CreditCard, detect.IBAN, detect.SSN, detect.Email, detect.APIKey, detect.AWSAccessKey, detect.AWSSecretKey}
	LooseTypes  = []detect.Type{detect.Phone, detect.IPAddress}
)

// TypeStats counts one type's spans.
type TypeStats struct {
	Gold  int // labelled entities
	TP    int // gold entities matched by a prediction
	FN    int // gold entities matched by none
	FP    int // predictions matching no gold entity
	Exact int // matches whose offsets equal the gold entity's
}

// Precision is TP/(TP+FP), 0 without predictions.
func (s TypeStats) Precision() float64 { return ratio(s.TP, s.TP+s.FP) }

// Recall is TP/Gold, 0 without gold entities.
func (s TypeStats) Recall() float64 { return ratio(s.TP, s.TP+s.FN) }

// F1 is the harmonic mean of Precision and Recall.
func (s TypeStats) F1() float64 { return f1(s.Precision(), s.Recall()) }

// A SpanError is a gold entity missed or a prediction matching none.
type SpanError struct {
	Source string      // the example's source (a hard negative's kind)
	Type   detect.Type // the missed entity's or the spurious prediction's type
	Value  string      // the span's text
	Other  detect.Type // a missed entity: the type of a prediction over it; a spurious one: the gold type under it
}

// SpanReport is the span-level quality of a Scanner on a set of examples.
type SpanReport struct {
	Examples int
	PerType  map[detect.Type]TypeStats
	Missed   []SpanError
	Spurious []SpanError
}

// Total sums the stats of types (all types when none are given).
func (r SpanReport) Total(types ...detect.Type) TypeStats {
	if len(types) == 0 {
		types = sortedTypes(r.PerType)
	}
	var t TypeStats
	for _, typ := range types {
		s := r.PerType[typ]
		t.Gold += s.Gold
		t.TP += s.TP
		t.FN += s.FN
		t.FP += s.FP
		t.Exact += s.Exact
	}
	return t
}

// KindCount counts the rows of one kind and those flagged.
type KindCount struct {
	Rows    int
	Flagged int
}

// HardNegReport is how often a Scanner flags hard negatives.
type HardNegReport struct {
	Rows           int
	FalsePositives int     // rows with at least one finding
	FPRate         float64 // FalsePositives / Rows
	PerKind        map[string]KindCount
	ByType         map[detect.Type]int // findings by type
	Flagged        []SpanError         // the first finding of each flagged row
}

// An InjectionError is a row decided wrongly, with its score.
type InjectionError struct {
	Row   InjectionRow
	Score float64
}

// InjectionReport is an injection scorer's quality at one threshold.
type InjectionReport struct {
	Threshold         float64
	Rows              int
	TP, FP, FN, TN    int
	Precision, Recall float64
	F1                float64
	FPRate            float64 // flagged benign rows / benign rows
	// SecurityAdjacent is the number of benign rows of SecurityAdjacentKinds;
	// SecurityAdjacentFPRate the share of them flagged.
	SecurityAdjacent       int
	SecurityAdjacentFPRate float64
	AUC                    float64              // ROC-AUC of the scores, threshold-free
	PerKind                map[string]KindCount // by "label/kind"
	PerLang                map[string]KindCount
	Missed                 []InjectionError
	FalseAlarms            []InjectionError
}

// Summary is one run of the benchmark on a split.
type Summary struct {
	Split     string
	Spans     SpanReport
	HardNeg   HardNegReport
	Injection InjectionReport
	// Public is the injection scorer's figures on the same split of the
	// public set (injection_public_*.jsonl: prompts from public
	// collections, see testdata/SOURCES.md).
	Public InjectionReport
	// Fresh is the injection scorer's figures on the fresh held-out set
	// (injection_fresh_heldout.jsonl, see testdata/README.md); empty on the
	// tune split, which the fresh set has none of.
	Fresh InjectionReport
	// Injected reports whether an injection scorer was given (Injection,
	// Public and Fresh are empty otherwise).
	Injected bool
}

// Unmet lists the targets the summary misses, one sentence each; none when
// every target is met.
func (s Summary) Unmet() []string {
	var out []string
	check := func(types []detect.Type, recall float64) {
		for _, t := range types {
			st := s.Spans.PerType[t]
			if st.Gold == 0 {
				out = append(out, fmt.Sprintf("%s: no labelled entity to measure", t))
				continue
			}
			if st.Recall() < recall {
				out = append(out, fmt.Sprintf("%s recall %.3f, want >= %.2f", t, st.Recall(), recall))
			}
			if st.Precision() < TargetPrecision {
				out = append(out, fmt.Sprintf("%s precision %.3f, want >= %.2f", t, st.Precision(), TargetPrecision))
			}
		}
	}
	check(StrictTypes, TargetRecallStrict)
	check(LooseTypes, TargetRecallLoose)
	if s.HardNeg.FPRate > TargetHardNegFP {
		out = append(out, fmt.Sprintf("hard-negative false positives %.1f%%, want <= %.0f%%", 100*s.HardNeg.FPRate, 100*TargetHardNegFP))
	}
	if s.Injected {
		if s.Injection.F1 < TargetInjectionF1 {
			out = append(out, fmt.Sprintf("injection F1 %.3f, want >= %.2f", s.Injection.F1, TargetInjectionF1))
		}
		if s.Injection.SecurityAdjacentFPRate > TargetSecurityAdjacentFP {
			out = append(out, fmt.Sprintf("injection false positives on benign security-adjacent text %.1f%%, want <= %.0f%%", 100*s.Injection.SecurityAdjacentFPRate, 100*TargetSecurityAdjacentFP))
		}
		// The public set holds too few security-adjacent rows to measure
		// them apart: its false-positive target is on all its benign rows.
		if s.Public.F1 < TargetInjectionF1 {
			out = append(out, fmt.Sprintf("public-injection F1 %.3f, want >= %.2f", s.Public.F1, TargetInjectionF1))
		}
		if s.Public.FPRate > TargetSecurityAdjacentFP {
			out = append(out, fmt.Sprintf("public-injection false positives %.1f%% of benign, want <= %.0f%%", 100*s.Public.FPRate, 100*TargetSecurityAdjacentFP))
		}
		if s.Fresh.Rows > 0 {
			if s.Fresh.F1 < TargetInjectionF1 {
				out = append(out, fmt.Sprintf("fresh-injection F1 %.3f, want >= %.2f", s.Fresh.F1, TargetInjectionF1))
			}
			if s.Fresh.SecurityAdjacentFPRate > TargetSecurityAdjacentFP {
				out = append(out, fmt.Sprintf("fresh-injection security-adjacent-FP %.1f%% of %d benign security-adjacent, want <= %.0f%%", 100*s.Fresh.SecurityAdjacentFPRate, s.Fresh.SecurityAdjacent, 100*TargetSecurityAdjacentFP))
			}
		}
	}
	return out
}

// Options configure RunWith.
type Options struct {
	Split     string          // SplitHeldOut (default) or SplitTune
	Scan      Scanner         // required
	Injection InjectionScorer // optional: no injection figures without it
	Threshold float64         // injection threshold; 0 means DefaultInjectionThreshold
	// Examples is how many misses and false positives the report shows;
	// they are never shown for the held-out split.
	Examples int
}

// Run measures scan and inj (which may be nil) on the held-out split and
// writes the report to w. The sets are the embedded copies, so it works
// from any package's tests.
func Run(w io.Writer, scan Scanner, inj InjectionScorer) (Summary, error) {
	return RunWith(w, Options{Scan: scan, Injection: inj})
}

// RunWith is Run with options.
func RunWith(w io.Writer, o Options) (Summary, error) {
	if o.Split == "" {
		o.Split = SplitHeldOut
	}
	if o.Split != SplitHeldOut && o.Split != SplitTune {
		return Summary{}, fmt.Errorf("split %q, want %q or %q", o.Split, SplitTune, SplitHeldOut)
	}
	if o.Scan == nil {
		return Summary{}, fmt.Errorf("no scanner")
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultInjectionThreshold
	}
	file := func(set string) string { return path.Join("testdata", set+"_"+o.Split+".jsonl") }
	pii, err := decodeEmbedded(file("pii"), checkExample)
	if err != nil {
		return Summary{}, err
	}
	neg, err := decodeEmbedded(file("hardneg"), func(HardNegative) error { return nil })
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Split: o.Split, Spans: EvaluateSpans(pii, o.Scan), HardNeg: EvaluateHardNegatives(neg, o.Scan)}
	if o.Injection != nil {
		rows, err := decodeEmbedded(file("injection"), checkInjection)
		if err != nil {
			return Summary{}, err
		}
		s.Injection, s.Injected = EvaluateInjection(rows, o.Injection, o.Threshold), true
		pub, err := decodeEmbedded(file(PublicSet), checkInjection)
		if err != nil {
			return Summary{}, err
		}
		s.Public = EvaluateInjection(pub, o.Injection, o.Threshold)
		if o.Split == SplitHeldOut {
			fresh, err := decodeEmbedded(file(FreshSet), checkInjection)
			if err != nil {
				return Summary{}, err
			}
			if len(fresh) == 0 {
				return Summary{}, fmt.Errorf("%s: no rows", file(FreshSet))
			}
			s.Fresh = EvaluateInjection(fresh, o.Injection, o.Threshold)
		}
	}
	examples := o.Examples
	if o.Split == SplitHeldOut {
		examples = 0
	}
	_, err = io.WriteString(w, s.Format(examples))
	return s, err
}

func decodeEmbedded[T any](name string, check func(T) error) ([]T, error) {
	data, err := sets.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return decode(name, strings.NewReader(string(data)), check)
}

// Format renders the summary: per type the gold entities, precision,
// recall, F1 and exact matches; the hard negatives per kind; the injection
// figures. With examples > 0 it adds that many misses and false positives
// of each (never do so for the held-out split).
func (s Summary) Format(examples int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "split %s\n", s.Split)
	b.WriteString(s.Spans.Format())
	b.WriteString(s.HardNeg.Format())
	if s.Injected {
		b.WriteString(s.Injection.Format())
		fmt.Fprintf(&b, "public set (%s_%s.jsonl):\n", PublicSet, s.Split)
		b.WriteString(s.Public.Format())
		if s.Fresh.Rows > 0 {
			fmt.Fprintf(&b, "fresh set (%s_%s.jsonl):\n", FreshSet, SplitHeldOut)
			b.WriteString(s.Fresh.Format())
		}
	}
	if unmet := s.Unmet(); len(unmet) > 0 {
		b.WriteString("targets not met:\n")
		for _, u := range unmet {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	} else {
		b.WriteString("all targets met\n")
	}
	if examples > 0 {
		spanErrors(&b, "missed entities", s.Spans.Missed, examples)
		spanErrors(&b, "spurious findings", s.Spans.Spurious, examples)
		spanErrors(&b, "flagged hard negatives", s.HardNeg.Flagged, examples)
		injErrors(&b, "missed attacks", s.Injection.Missed, examples)
		injErrors(&b, "false alarms", s.Injection.FalseAlarms, examples)
		injErrors(&b, "public set: missed attacks", s.Public.Missed, examples)
		injErrors(&b, "public set: false alarms", s.Public.FalseAlarms, examples)
	}
	return b.String()
}

// Format renders the per-type table and the totals over the targeted types
// and over all.
func (r SpanReport) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %6s %6s %6s %6s %9s %7s %6s %7s\n", "type", "gold", "tp", "fp", "fn", "precision", "recall", "f1", "exact")
	row := func(name string, s TypeStats) {
		fmt.Fprintf(&b, "%-16s %6d %6d %6d %6d %9.3f %7.3f %6.3f %6.1f%%\n", name, s.Gold, s.TP, s.FP, s.FN, s.Precision(), s.Recall(), s.F1(), 100*ratio(s.Exact, s.TP))
	}
	for _, t := range sortedTypes(r.PerType) {
		row(string(t), r.PerType[t])
	}
	row("targeted types", r.Total(slices.Concat(StrictTypes, LooseTypes)...))
	row("all types", r.Total())
	return b.String()
}

// Format renders the hard negatives' false-positive rate, per kind and by
// finding type.
func (r HardNegReport) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hard negatives: %d of %d flagged (%.1f%%)\n", r.FalsePositives, r.Rows, 100*r.FPRate)
	kinds := make([]string, 0, len(r.PerKind))
	for k := range r.PerKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		c := r.PerKind[k]
		if c.Flagged > 0 {
			fmt.Fprintf(&b, "  %-20s %3d of %3d (%.0f%%)\n", k, c.Flagged, c.Rows, 100*ratio(c.Flagged, c.Rows))
		}
	}
	if len(r.ByType) > 0 {
		b.WriteString("  findings by type:")
		for _, t := range sortedTypes(r.ByType) {
			fmt.Fprintf(&b, " %s %d", t, r.ByType[t])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Format renders the injection figures, per kind and per language.
func (r InjectionReport) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "injection at threshold %.2f: precision %.3f recall %.3f F1 %.3f ROC-AUC %s (tp %d fp %d fn %d tn %d)\n",
		r.Threshold, r.Precision, r.Recall, r.F1, auc(r.AUC), r.TP, r.FP, r.FN, r.TN)
	fmt.Fprintf(&b, "  false positives: %.1f%% of benign, %.1f%% of %d benign security-adjacent\n", 100*r.FPRate, 100*r.SecurityAdjacentFPRate, r.SecurityAdjacent)
	kinds := make([]string, 0, len(r.PerKind))
	width := 34
	for k := range r.PerKind {
		kinds = append(kinds, k)
		width = max(width, len(k))
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		c := r.PerKind[k]
		fmt.Fprintf(&b, "  %-*s %3d of %3d flagged\n", width, k, c.Flagged, c.Rows)
	}
	langs := make([]string, 0, len(r.PerLang))
	for l := range r.PerLang {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	b.WriteString("  flagged by language:")
	for _, l := range langs {
		fmt.Fprintf(&b, " %s %d/%d", l, r.PerLang[l].Flagged, r.PerLang[l].Rows)
	}
	b.WriteString("\n")
	return b.String()
}

func auc(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", v)
}

func spanErrors(b *strings.Builder, title string, errs []SpanError, n int) {
	if len(errs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d, first %d):\n", title, len(errs), min(n, len(errs)))
	for _, e := range errs[:min(n, len(errs))] {
		other := ""
		if e.Other != "" {
			other = " (" + string(e.Other) + ")"
		}
		fmt.Fprintf(b, "  %-14s %q%s  [%s]\n", e.Type, e.Value, other, e.Source)
	}
}

func injErrors(b *strings.Builder, title string, errs []InjectionError, n int) {
	if len(errs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d, first %d):\n", title, len(errs), min(n, len(errs)))
	for _, e := range errs[:min(n, len(errs))] {
		t := e.Row.Text
		if r := []rune(t); len(r) > 100 {
			t = string(r[:100]) + "…"
		}
		fmt.Fprintf(b, "  %.2f %-9s %-24s %q\n", e.Score, e.Row.Label, e.Row.Kind, t)
	}
}
