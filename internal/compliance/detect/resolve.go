package detect

import (
	"slices"
	"strings"
)

// Resolve settles overlapping findings: of two findings whose spans overlap
// the one with the higher score wins, then the longer, then the earlier. It
// drops findings whose offsets are out of text's bounds (n is len(text)) and
// returns the survivors sorted by Start. Injection findings do not compete
// with PII and secrets (they mark instructions, not values): they are kept
// apart and resolved among themselves. findings is reordered in place.
func Resolve(findings []Finding, n int) []Finding {
	var values, inj []Finding
	for _, f := range findings {
		if f.Start < 0 || f.End > n || f.Start >= f.End {
			continue
		}
		if f.Type.Category() == CategoryInjection {
			inj = append(inj, f)
		} else {
			values = append(values, f)
		}
	}
	out := Settle(values)
	return mergeSorted(out, Settle(inj))
}

// Settle keeps, greedily by rank (higher score, then longer, then
// earlier), the findings that overlap none kept before, reusing fs's
// array; the result is sorted by Start. A detector uses it to drop its own
// duplicates (several rules on one secret); Resolve settles the families'
// findings together.
func Settle(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		case a.End-a.Start != b.End-b.Start:
			return (b.End - b.Start) - (a.End - a.Start)
		}
		return a.Start - b.Start
	})
	kept := fs[:0]
	for _, f := range fs {
		overlaps := false
		for _, k := range kept {
			if f.Start < k.End && k.Start < f.End {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(a, b Finding) int { return a.Start - b.Start })
	return kept
}

func mergeSorted(a, b []Finding) []Finding {
	out := append(a, b...)
	slices.SortStableFunc(out, func(x, y Finding) int { return x.Start - y.Start })
	return out
}

// Bounds of Redact's replacement of repeated values: the shortest value
// (in bytes) whose other occurrences are replaced too — shorter ones (a
// first name, "::1") are too common as parts of other words — and the most
// distinct values looked for, so that the work stays linear in the text.
const (
	MinRepeatRedact  = 8
	MaxRepeatsRedact = 256
)

// Redact returns text with every PII and secret finding replaced by its
// typed placeholder ("[EMAIL]"), and every other occurrence of a found value
// too: a value found in one place may be repeated where its context did not
// support it (a phone number glued to other digits), and no detected value
// may survive. That covers values of at least MinRepeatRedact bytes, the
// first MaxRepeatsRedact distinct ones found (the longer first where two
// start at one place); not Matched spans; and
// only the text between findings, never a placeholder. findings must come
// from Resolve (no two value findings overlap); injection findings are left
// as they are.
func Redact(text string, findings []Finding) string {
	if len(findings) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	rep := repeats(text, findings)
	at := 0
	for _, f := range findings {
		if f.Type.Category() == CategoryInjection || f.Start < at {
			continue
		}
		writeGap(&b, rep, text[at:f.Start])
		b.WriteByte('[')
		b.WriteString(string(f.Type))
		b.WriteByte(']')
		at = f.End
	}
	writeGap(&b, rep, text[at:])
	return b.String()
}

// writeGap writes text between findings, through rep when there is one.
func writeGap(b *strings.Builder, rep *strings.Replacer, gap string) {
	if rep == nil {
		b.WriteString(gap)
		return
	}
	_, _ = rep.WriteString(b, gap)
}

// repeats is a Replacer of the found values Redact also replaces where
// they were not found, or nil when there are none.
func repeats(text string, findings []Finding) *strings.Replacer {
	var vals []Finding
	var seen map[string]bool // made at the first value: most texts have none
	for _, f := range findings {
		v := text[f.Start:f.End]
		if f.Type == Matched || f.Type.Category() == CategoryInjection || len(v) < MinRepeatRedact || seen[v] {
			continue
		}
		if seen == nil {
			seen = make(map[string]bool)
		}
		seen[v] = true
		vals = append(vals, f)
		if len(vals) == MaxRepeatsRedact {
			break
		}
	}
	if len(vals) == 0 {
		return nil
	}
	// Longest first: where two values start at one place, the Replacer
	// takes the first listed, so a value holding a shorter one goes whole.
	slices.SortStableFunc(vals, func(x, y Finding) int { return (y.End - y.Start) - (x.End - x.Start) })
	pairs := make([]string, 0, 2*len(vals))
	for _, f := range vals {
		pairs = append(pairs, text[f.Start:f.End], "["+string(f.Type)+"]")
	}
	return strings.NewReplacer(pairs...)
}
