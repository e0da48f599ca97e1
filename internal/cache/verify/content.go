package verify

import (
	"slices"
	"strings"

	"github.com/svc-gateway/svc/internal/cache/embed"
)

// The content-word check. Two prompts that each name a thing the other does
// not, in the same request, ask about different things, however close their
// embeddings: "delete a question" / "delete an answer", "go sdk hello 3" /
// "go sdk stream 3". Refused are such minimal pairs: each side has a content
// noun the other lacks, and the rest of their words that carry meaning
// (verbs, adjectives: Features.Rest) are the same. Allowed are a thing named
// on one side only (paraphrases add or leave out context: "install a
// package with pip" / "install a Python package using pip") and a noun
// swapped in a request worded otherwise too ("Can I speak to a human
// agent?" / "I'd like to talk to a real person"): the embedder's judgement
// stands there, with the other checks.
//
// The content nouns are words that are nouns by their first WordNet sense,
// or unknown to WordNet (names, terms such as "sdk"), or that stand in a
// noun phrase after a determiner ("an answer", whose first sense is a verb);
// less function words, the wording of requests ("way", "steps", "tips") and
// a greeting that opens a sentence. Words are keyed as the built-in embedder
// keys them (embed.Fold: abbreviations, typos, first-sense synonyms and
// inflections folded), words of an antonym group by their pole ("right" and
// "correct" are one), and keys match when one starts the other or the join
// of two others ("stove" / "stovetop", "username" / "user name").

// scaffold are nouns of how a request is worded, not of what it asks.
var scaffold = setOf("way ways thing things stuff step steps tip tips guide guides tutorial help advice " +
	"idea ideas suggestion suggestions recommendation recommendations option options approach " +
	"procedure instructions instruction explanation lot lots bit kind sort info information detail details " +
	"overview something anything everything someone anyone thanks thank cheers sorry please vs versus")

// namedStops are stop words of the embedder that name what is asked about.
var namedStops = setOf("question questions answer answers example examples definition meaning reason reasons cause causes")

// englishCommon are the English words verify never takes for a name:
// question words, pronouns, imperative verbs of requests, quantifiers.
var englishCommon = setOf(commonWords)

// nounStarters start a noun phrase.
var nounStarters = setOf("a an the my your his her its our their this that these those some any each every " +
	"another which whose")

// Roles of a word in the content-word check.
const (
	roleNone    = iota // not counted: a function word, the wording of a request
	roleNoun           // a content noun: Features.Content
	roleRest           // another word that carries meaning: Features.Rest
	roleStarter        // starts a noun phrase: a determiner
)

// content records a lowercase word of the prompt as a content noun or among
// the rest, and follows noun phrases. initial: the word starts a sentence.
func (x *extractor) content(lower string, lex *lexeme, initial bool) {
	np := x.np
	role, key, adj := x.role(lower, lex, initial, np)
	switch role {
	case roleNoun:
		x.f.Content = append(x.f.Content, key)
	case roleRest:
		x.f.Rest = append(x.f.Rest, key)
	}
	// A noun phrase starts at a determiner and goes on through adjectives
	// and nouns: "a new local branch", "a Python list".
	x.np = role == roleStarter || np && (role == roleNoun || adj)
}

// role returns the role of a word, its key, and whether it may stand before
// a noun in a phrase (an adjective, a participle, a quantifier). np: the
// word follows a determiner.
func (x *extractor) role(lower string, lex *lexeme, initial, np bool) (role int, key string, adj bool) {
	switch {
	case nounStarters[lower]:
		return roleStarter, "", false
	case greetings[lower] && initial:
		return roleNone, "", false // "Hello! How do I …"; not "say hello in French"
	case greetings[lower]:
	case lex != nil && lex.langs&(1<<langEN) != 0:
		return roleNone, "", false // an English function word ("comment", French for how, counts)
	case lex != nil && (lex.neg || lex.isNum || lex.scale != 0):
		return roleNone, "", true
	case englishCommon[lower]:
		// "a new branch", "the best way"; but "a list", "the name" are nouns.
		key, pos := embed.Fold(lower)
		if np && pos == 'n' {
			return roleNoun, key, false
		}
		if embed.IsStopWord(lower) {
			return roleNone, "", true
		}
		return roleRest, key, true
	case scaffold[lower], embed.IsStopWord(lower) && !namedStops[lower]:
		return roleNone, "", false
	}
	w := strings.TrimSuffix(strings.TrimSuffix(lower, "'s"), "'")
	if w == "" {
		return roleNone, "", false
	}
	if l := lexicon[w]; l != nil && (l.name || l.alias != "") {
		key, _ := embed.Fold(nameKey(w, l)) // golang is go, pc a computer
		return roleNoun, key, false
	}
	key, pos := embed.Fold(w)
	if pl := poled(w, lex); pl != nil {
		// A word of an antonym group is keyed by its pole, and is a noun
		// only as a noun: "undo a merge" is not "undo a rebase", and
		// "unsubscribe" is a verb.
		key = strings.Join(pl.poles, "+")
		if pos != 'n' && (!np || pos == 'a' || pos == 'r') {
			return roleRest, key, pos == 'a'
		}
		return roleNoun, key, false
	}
	participle := strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")
	switch {
	case pos == 'n', pos == 0, np && pos == 'v' && !participle: // "an answer": a verb's noun
		return roleNoun, key, false
	case np:
		return roleRest, key, true // "the correct way", "a deleted file": the noun to come
	}
	return roleRest, key, false
}

// poled returns the lexeme of w, or of its singular, when it has antonym
// poles.
func poled(w string, lex *lexeme) *lexeme {
	if lex == nil || len(lex.poles) == 0 {
		lex = lexicon[wordKey(w)]
	}
	if lex == nil || len(lex.poles) == 0 {
		return nil
	}
	return lex
}

// contentAgree reports whether a and b are not a minimal pair of different
// things: unless each names a content noun the other lacks while the rest
// of their words match, they agree. Only English prompts are compared (the
// nouns of other languages are unknown to WordNet, and would all count).
func contentAgree(a, b Features) bool {
	if a.Lang != "" && a.Lang != "en" || b.Lang != "" && b.Lang != "en" {
		return true
	}
	if !lacks(a.Content, b.Content) || !lacks(b.Content, a.Content) {
		return true
	}
	return lacks(a.Rest, b.Rest) || lacks(b.Rest, a.Rest)
}

// minPrefix is the shortest key that matches a longer one it starts
// ("stove" and "stovetop", "month" and "monthly", "crypto" and
// "cryptocurrency"): shorter prefixes join unrelated words ("plan",
// "planet").
const minPrefix = 5

// lacks reports whether b, a sorted set of keys, lacks a key of a: one
// neither equal to one of b's, nor sharing a prefix of minPrefix with one,
// nor starting the join of two ("username" and "user name").
func lacks(a, b []string) bool {
	for _, k := range a {
		if _, ok := slices.BinarySearch(b, k); ok {
			continue
		}
		if !slices.ContainsFunc(b, func(o string) bool { return prefixed(k, o) }) && !joins(k, b) {
			return true
		}
	}
	return false
}

// joins reports whether k starts the join of two keys of b.
func joins(k string, b []string) bool {
	for _, x := range b {
		if len(x) < len(k) && strings.HasPrefix(k, x) {
			for _, y := range b {
				if strings.HasPrefix(y, k[len(x):]) {
					return true
				}
			}
		}
	}
	return false
}

// prefixed reports whether the shorter of a and b, of at least minPrefix
// bytes, starts the other.
func prefixed(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= minPrefix && strings.HasPrefix(b, a)
}

// sortedContent sorts and dedups keys.
func sortedContent(c []string) []string {
	slices.Sort(c)
	return slices.Compact(c)
}
