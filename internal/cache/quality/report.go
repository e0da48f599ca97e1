package quality

import (
	"fmt"
	"slices"
	"strings"
)

// A Report is the cache's quality on a set of pairs at one threshold.
type Report struct {
	Embedder  string  // the embedder's name
	Threshold float64 // the similarity threshold
	Verify    bool    // whether the headline rates include verification

	// ParaphraseHitRate is the share of "hit" pairs served, FalseHitRate the
	// share of "miss" pairs served, with verification if Verify is set.
	ParaphraseHitRate float64
	FalseHitRate      float64

	// The same rates on similarity alone (Raw) and with verification.
	RawParaphraseHitRate      float64
	RawFalseHitRate           float64
	VerifiedParaphraseHitRate float64
	VerifiedFalseHitRate      float64

	// PerKind holds the counts of each kind of pair.
	PerKind map[string]KindStats

	// Misses are the "hit" pairs not served, FalseHits the "miss" pairs
	// served (in the headline mode).
	Misses    []Example
	FalseHits []Example
}

// KindStats counts the pairs of one kind.
type KindStats struct {
	Label    string // the label of the kind's pairs ("hit" or "miss")
	Pairs    int    // pairs of this kind
	Similar  int    // with similarity ≥ threshold: served without verification
	Verified int    // similar and agreed by verification: served with it
	Rejected int    // refused by verification, whatever their similarity
}

// An Example is one pair the cache decided wrongly.
type Example struct {
	Pair
	Similarity float64
	Reason     string // why verification refused it, "" if it agreed
}

// maxExamples is how many misses and false hits String shows.
const maxExamples = 15

// String renders the report as Summary does, then the first misses and
// false hits.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	examples(&b, "false hits", r.FalseHits)
	examples(&b, "missed paraphrases", r.Misses)
	return b.String()
}

// Summary renders the report as a table: per kind, the pairs, and the share
// served without and with verification; then the headline rates. It names
// no pair, so it may be shown for a held-out set.
func (r Report) Summary() string {
	var b strings.Builder
	mode := "off"
	if r.Verify {
		mode = "on"
	}
	fmt.Fprintf(&b, "embedder %s, threshold %.2f, verification %s\n", r.Embedder, r.Threshold, mode)
	fmt.Fprintf(&b, "%-12s %-5s %6s %10s %10s %9s\n", "kind", "label", "pairs", "served", "+verify", "rejected")
	kinds := make([]string, 0, len(r.PerKind))
	for k := range r.PerKind {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		la, lb := r.PerKind[a].Label, r.PerKind[b].Label
		if la != lb {
			return strings.Compare(la, lb) // hit before miss
		}
		return strings.Compare(a, b)
	})
	for _, k := range kinds {
		s := r.PerKind[k]
		fmt.Fprintf(&b, "%-12s %-5s %6d %9.1f%% %9.1f%% %8.1f%%\n", k, s.Label, s.Pairs,
			pct(s.Similar, s.Pairs), pct(s.Verified, s.Pairs), pct(s.Rejected, s.Pairs))
	}
	fmt.Fprintf(&b, "paraphrase hit rate: %.1f%% raw, %.1f%% verified\n", 100*r.RawParaphraseHitRate, 100*r.VerifiedParaphraseHitRate)
	fmt.Fprintf(&b, "false-hit rate:      %.1f%% raw, %.1f%% verified\n", 100*r.RawFalseHitRate, 100*r.VerifiedFalseHitRate)
	return b.String()
}

func examples(b *strings.Builder, title string, ex []Example) {
	if len(ex) == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d", title, len(ex))
	if len(ex) > maxExamples {
		fmt.Fprintf(b, ", first %d", maxExamples)
	}
	b.WriteString("):\n")
	for _, e := range ex[:min(len(ex), maxExamples)] {
		fmt.Fprintf(b, "  %.3f %-10s %-9s %q | %q\n", e.Similarity, e.Kind, e.Reason, e.A, e.B)
	}
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// SweepTable renders, for each threshold, the paraphrase hit rate and the
// false-hit rate without and with verification, from similarities computed
// once.
func SweepTable(pairs []Pair, sims []float64, thresholds []float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9s %10s %10s %10s %10s\n", "threshold", "hit raw", "false raw", "hit +ver", "false +ver")
	for _, t := range thresholds {
		r := Evaluate(pairs, sims, t, true)
		fmt.Fprintf(&b, "%9.2f %9.1f%% %9.1f%% %9.1f%% %9.1f%%\n", t,
			100*r.RawParaphraseHitRate, 100*r.RawFalseHitRate, 100*r.VerifiedParaphraseHitRate, 100*r.VerifiedFalseHitRate)
	}
	return b.String()
}
