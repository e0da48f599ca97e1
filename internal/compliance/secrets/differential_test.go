package secrets

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// sample writes a random string that re (usually) matches: each repetition
// is taken between its minimum and three more, each class's character at
// random (ASCII only), each fold-case letter in a random case.
func sample(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.ToUpper(c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		var ascii []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1] && c < 0x80; c++ {
				if c >= ' ' || c == '\n' || c == '\t' {
					ascii = append(ascii, c)
				}
			}
		}
		if len(ascii) > 0 {
			b.WriteRune(ascii[r.IntN(len(ascii))])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(byte('a' + r.IntN(26)))
	case syntax.OpCapture:
		sample(r, re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sample(r, s, b)
		}
	case syntax.OpAlternate:
		sample(r, re.Sub[r.IntN(len(re.Sub))], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo, hi = 1, 4
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Min+3
			if re.Max >= 0 {
				hi = min(hi, re.Max)
			}
		}
		for range lo + r.IntN(hi-lo+1) {
			sample(r, re.Sub[0], b)
		}
	}
}

// ruleFindings runs only the rules (no native detector), with the fast
// execution or naively over the whole text.
func ruleFindings(e *engine, text string, naive bool) []detect.Finding {
	sc := new(scratch)
	if !e.scan(sc, text) {
		return nil
	}
	e.runRules(sc, text, naive)
	out := slices.Clone(sc.found)
	slices.SortFunc(out, func(a, b detect.Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return a.End - b.End
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return out
}

// TestDifferential checks that running rules anchored at their literal
// prefixes and in windows around assignments finds what running every rule
// over the whole text finds, on samples generated from the rules'
// own patterns, alone and in prose.
var samplesPerRule = 12

func init() {
	if os.Getenv("SECRETS_DIFF_SAMPLES") != "" {
		samplesPerRule, _ = strconv.Atoi(os.Getenv("SECRETS_DIFF_SAMPLES"))
	}
}

func TestDifferential(t *testing.T) {
	e := MustNew().e
	r := rand.New(rand.NewPCG(1, 2))
	contexts := []string{
		"%s",
		"Please rotate this one: %s. Thanks!",
		"config:\n  value: %s\n  other: 1\n",
		"(%s), and then the next line\nkey = value",
		"a long preamble about keys and tokens and passwords, then %s",
	}
	var trees []*syntax.Regexp
	for _, rl := range e.rs.rules {
		tree, err := syntax.Parse(rl.re.String(), syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", rl.id, err)
		}
		trees = append(trees, tree.Simplify())
	}
	samples, found, mismatches := 0, 0, 0
	for i, rl := range e.rs.rules {
		for k := range samplesPerRule {
			var b strings.Builder
			sample(r, trees[i], &b)
			text := fmt.Sprintf(contexts[k%len(contexts)], b.String())
			if k%6 == 5 { // two rules' samples side by side
				var c strings.Builder
				sample(r, trees[r.IntN(len(trees))], &c)
				text = b.String() + " and " + c.String() + "\n"
			}
			samples++
			got, want := ruleFindings(e, text, false), ruleFindings(e, text, true)
			found += len(want)
			if d := cmp.Diff(want, got); d != "" {
				mismatches++
				t.Errorf("rule %s, text %q: fast vs whole-text (-want +got):\n%s", rl.id, text, d)
			}
		}
	}
	t.Logf("%d samples, %d whole-text findings, %d mismatches", samples, found, mismatches)
	if found < samples/3 {
		t.Errorf("only %d findings in %d samples: the sampler no longer produces matches", found, samples)
	}
}
