package verify

import (
	"slices"
	"strings"
)

// Agree reports whether a query and a cached prompt, known by their
// features, may share an answer. When they may not, reason names the first
// check that failed: "language", "quoted", "code", "number", "negation",
// "entity", "antonym", "direction" or "content"; it is "" when they agree.
func Agree(query, cached Features) (ok bool, reason string) {
	switch {
	case query.Lang != "" && cached.Lang != "" && query.Lang != cached.Lang:
		return false, "language"
	case !quotedAgree(query, cached):
		return false, "quoted"
	case !slices.Equal(query.Code, cached.Code):
		return false, "code"
	case !numbersAgree(query, cached):
		return false, "number"
	case query.Negations != cached.Negations:
		return false, "negation"
	case !within(query.Entities, cached.Words) || !within(cached.Entities, query.Words):
		return false, "entity"
	case !polesAgree(query.Poles, cached.Poles):
		return false, "antonym"
	case !rolesAgree(query.Roles, cached.Roles):
		return false, "direction"
	case !contentAgree(query, cached):
		return false, "content"
	}
	return true, ""
}

// Compare extracts the features of a query and a cached prompt and reports
// whether they agree, as Agree does.
func Compare(query, cached string) (bool, string) {
	return Agree(Extract(query), Extract(cached))
}

// numbersAgree reports whether the number multisets are equal, once the
// extra 1s of one side are matched with the other's soft ones ("one",
// "first").
func numbersAgree(a, b Features) bool {
	var onlyA, onlyB int // unmatched 1s
	i, j := 0, 0
	for i < len(a.Numbers) || j < len(b.Numbers) {
		switch {
		case j == len(b.Numbers) || (i < len(a.Numbers) && a.Numbers[i] < b.Numbers[j]):
			if a.Numbers[i] != "1" {
				return false
			}
			onlyA++
			i++
		case i == len(a.Numbers) || b.Numbers[j] < a.Numbers[i]:
			if b.Numbers[j] != "1" {
				return false
			}
			onlyB++
			j++
		default:
			i++
			j++
		}
	}
	return onlyA <= b.SoftOnes && onlyB <= a.SoftOnes
}

// quotedAgree reports whether the quoted spans are the same multiset, but
// for a single quoted word that the other text has unquoted ("the word
// 'ubiquitous'" and "define ubiquitous").
func quotedAgree(a, b Features) bool {
	if slices.Equal(a.Quoted, b.Quoted) {
		return true
	}
	i, j := 0, 0
	for i < len(a.Quoted) || j < len(b.Quoted) {
		switch {
		case j == len(b.Quoted) || (i < len(a.Quoted) && a.Quoted[i] < b.Quoted[j]):
			if !loneWordIn(a.Quoted[i], b) {
				return false
			}
			i++
		case i == len(a.Quoted) || b.Quoted[j] < a.Quoted[i]:
			if !loneWordIn(b.Quoted[j], a) {
				return false
			}
			j++
		default:
			i++
			j++
		}
	}
	return true
}

// loneWordIn reports whether q is one plain word that f has, unquoted: its
// key is among f's words, and f quotes no other spelling of it ("getUser" is
// not "getuser").
func loneWordIn(q string, f Features) bool {
	if !isAlpha(q) {
		return false
	}
	for _, o := range f.Quoted {
		if strings.EqualFold(o, q) {
			return false
		}
	}
	lower := toLower(q)
	_, ok := slices.BinarySearch(f.Words, nameKey(lower, lexicon[lower]))
	return ok
}

// within reports whether every element of sub is in the sorted set of.
func within(sub, of []string) bool {
	for _, s := range sub {
		if _, ok := slices.BinarySearch(of, s); !ok {
			return false
		}
	}
	return true
}

// polesAgree reports whether, for every antonym group both sides mention,
// they mention the same poles of it. Poles are sorted "group:pole" strings.
func polesAgree(a, b []string) bool {
	group := func(p string) string { g, _, _ := strings.Cut(p, ":"); return g }
	for _, p := range a {
		g := group(p)
		if !mentions(b, g) {
			continue
		}
		if !slices.Equal(polesOf(a, g), polesOf(b, g)) {
			return false
		}
	}
	return true
}

func mentions(poles []string, g string) bool {
	for _, p := range poles {
		if strings.HasPrefix(p, g+":") {
			return true
		}
	}
	return false
}

func polesOf(poles []string, g string) []string {
	var out []string
	for _, p := range poles {
		if strings.HasPrefix(p, g+":") {
			out = append(out, p)
		}
	}
	return out
}

// Version numbers the rules of Extract. It changes whenever Extract would
// give other Features for the same text, so that a store of Features can
// tell stale ones and extract them again rather than compare them with new
// ones.
const Version = 2
