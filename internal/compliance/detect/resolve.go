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

// Redact returns text with every PII and secret finding replaced by its
// typed placeholder ("[EMAIL]"). findings must come from Resolve (no two
// value findings overlap); injection findings are left as they are.
func Redact(text string, findings []Finding) string {
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, f := range findings {
		if f.Type.Category() == CategoryInjection || f.Start < at {
			continue
		}
		b.WriteString(text[at:f.Start])
		b.WriteByte('[')
		b.WriteString(string(f.Type))
		b.WriteByte(']')
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String()
}
