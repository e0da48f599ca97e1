package secrets

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// altMatcher matches a pattern that is an alternation of many branches
// (gitleaks' allowlists are) without running every branch: a branch whose
// matches all start with a literal runs only anchored at that literal's
// occurrences in the lower-cased target, found for all branches in one
// Aho-Corasick pass. It matches exactly what the pattern does.
type altMatcher struct {
	always   []*regexp.Regexp // branches without a literal prefix
	needs    [][]string       // per always branch: one of these must occur (lower case), nil: no such set
	branches []*regexp.Regexp // anchored: "^(?:" + branch + ")"
	lead     []bool           // the branch opens with \b
	trie     *ahocorasick.Trie
	patOf    []int // trie pattern → branch
}

// newAltMatcher compiles src, split at its top-level alternation.
func newAltMatcher(src string) (*altMatcher, error) {
	whole, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	m := &altMatcher{}
	if tree.Op != syntax.OpAlternate || len(tree.Sub) < 4 {
		m.always = []*regexp.Regexp{whole}
		m.needs = [][]string{required(tree.Simplify())}
		return m, nil
	}
	var pats []string
	for _, b := range tree.Sub {
		src := b.String()
		lits, _, lead, ok := prefixes(b.Simplify())
		if !ok {
			re, err := regexp.Compile(src)
			if err != nil {
				return nil, err
			}
			m.always = append(m.always, re)
			m.needs = append(m.needs, required(b.Simplify()))
			continue
		}
		re, err := regexp.Compile(`^(?:` + src + `)`)
		if err != nil {
			return nil, err
		}
		for _, l := range lits {
			pats = append(pats, strings.ToLower(l))
			m.patOf = append(m.patOf, len(m.branches))
		}
		m.branches = append(m.branches, re)
		m.lead = append(m.lead, lead)
	}
	if len(pats) > 0 {
		m.trie = ahocorasick.NewTrieBuilder().AddStrings(pats).Build()
	}
	return m, nil
}

// match reports whether the pattern matches target; low is target
// lower-cased in ASCII.
func (m *altMatcher) match(target string, low []byte) bool {
	for i, re := range m.always {
		if needs := m.needs[i]; needs != nil && !containsAny(low, needs) {
			continue
		}
		if re.MatchString(target) {
			return true
		}
	}
	if m.trie == nil {
		return false
	}
	found := false
	m.trie.Walk(low, func(end, n, pat int64) bool {
		b, at := m.patOf[pat], int(end-n+1)
		if m.lead[b] && at > 0 && isWord(target[at-1]) {
			return true
		}
		found = m.branches[b].MatchString(target[at:])
		return !found
	})
	return found
}

// required works out literals (lower case, two bytes or more) one of which
// every match of re contains, or nil if it finds none. A literal is lower-
// cased, so it is to be looked for in the lower-cased text.
func required(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) >= 2 {
			return []string{strings.ToLower(string(re.Rune))}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, s := range re.Sub {
			if r := required(s); r != nil && (best == nil || shortest(r) > shortest(best)) {
				best = r
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, s := range re.Sub {
			r := required(s)
			if r == nil {
				return nil
			}
			all = append(all, r...)
		}
		return dedupe(all)
	}
	return nil
}

func shortest(s []string) int {
	n := -1
	for _, x := range s {
		if n < 0 || len(x) < n {
			n = len(x)
		}
	}
	return n
}

func containsAny(low []byte, lits []string) bool {
	for _, l := range lits {
		if bytes.Contains(low, []byte(l)) {
			return true
		}
	}
	return false
}
