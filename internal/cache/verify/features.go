package verify

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Features are what verification compares of a prompt, extracted once by
// Extract. All lists are sorted; the zero value is the features of an empty
// prompt.
type Features struct {
	// Numbers is the multiset of numbers, canonical: "1,000", "1000" and
	// "one thousand" are all "1000"; "3rd" and "third" are "3"; "5%" and
	// "5 percent" are "5%"; "-2" is negative; decimals keep their digits
	// ("3.10" is not "3.1": versions look like decimals); versions, dates and
	// times stay as written ("1.2.3", "2024-05-01", "10:30").
	Numbers []string `json:"numbers,omitempty"`
	// SoftOnes counts the words "one", "once" and "first" standing alone: they may
	// mean the number 1 ("one file", "the first item") or nothing ("which
	// one", "first, install…"), so they may stand for a 1 of the other side.
	SoftOnes int `json:"soft_ones,omitempty"`
	// Negations counts negation markers: not, no, never, none, without,
	// nothing, cannot, "n't" contractions and their equivalents in the
	// languages Extract knows.
	Negations int `json:"negations,omitempty"`
	// Quoted holds the text of every quoted span ("…", '…', `…`, “…”, ‘…’,
	// «…»), exactly as written.
	Quoted []string `json:"quoted,omitempty"`
	// Code holds identifiers with symbols, exactly as written: file paths,
	// URLs, email addresses, snake_case and dotted names, flags (--force),
	// calls (foo()).
	Code []string `json:"code,omitempty"`
	// Entities holds the named entities, as lowercase word keys (see Words):
	// capitalised words not at the start of a sentence, acronyms, CamelCase
	// names, words with digits (EC2), and known product and language names
	// even in lower case. A multi-word name contributes each of its words.
	Entities []string `json:"entities,omitempty"`
	// Words is the set of all words as lowercase keys, possessive "'s" and
	// plural "s" removed. An entity of one prompt must be among the words of
	// the other, in any case.
	Words []string `json:"words,omitempty"`
	// Poles holds antonym markers, "group:pole": "largest" is size:a,
	// "smallest" size:b.
	Poles []string `json:"poles,omitempty"`
	// Roles holds the words the prompt goes from and to, "from:key" and
	// "to:key": "from Revolut to Wise" gives from:revolut and to:wise.
	Roles []string `json:"roles,omitempty"`
	// Lang is the prompt's language, an ISO 639-1 code, or "" when the text
	// is too short or too mixed to tell.
	Lang string `json:"lang,omitempty"`
	// Content holds the content nouns, as keys of embed.Fold, and Rest the
	// keys of the other words that carry meaning (verbs, adjectives): two
	// prompts that each name a thing the other does not, their Rest the
	// same, ask about different things (see content.go).
	Content []string `json:"content,omitempty"`
	Rest    []string `json:"rest,omitempty"`
}

// Extract computes the features of text.
func Extract(text string) Features {
	x := extractor{initial: true, lastNum: -1, capPrev: -1}
	x.f.Words = make([]string, 0, 32)
	x.ents = make([]entityCandidate, 0, 8)
	x.quotes(text)
	x.scan(text)
	return x.finish()
}

// entityCandidate is a possible entity; weak ones (capitalised words) are
// dropped when the whole text is in title case.
type entityCandidate struct {
	key     string
	weak    bool
	initial bool // starts a sentence or is a common word: a name only if the next word is one
	at      int  // the word's position, for initial candidates
}

// extractor holds the state of one Extract.
type extractor struct {
	f        Features
	ents     []entityCandidate
	initial  bool // the next word starts a sentence
	prev     string
	lastNum  int // index in f.Numbers of a digit number the next word may qualify, or -1
	num      numberRun
	langHits [numLatinLangs]int
	scripts  scriptCounts
	capMid   int // capitalised words not starting a sentence
	mid      int // alphabetic words not starting a sentence
	nwords   int // words seen
	capPrev  int // index in f.Poles of the poles of the previous word if capitalised, or -1

	prevHeadsTwo bool // the previous word may start a two-word antonym marker
	dir          direction
	np           bool // the next word is in a noun phrase (after a determiner)
}

// scan splits text into whitespace-separated chunks and classifies each.
func (x *extractor) scan(text string) {
	start := -1
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				x.chunk(text[start:i])
				start = -1
			}
			if r == '\n' {
				x.initial = true
			}
			continue
		}
		x.scripts.add(r)
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		x.chunk(text[start:])
	}
	x.num.flush(x)
}

// openers are stripped from the start of a chunk, closers from its end.
const (
	openers = "([{\"'`“‘«¿¡*#>„"
	closers = ")]}\"'`”’»,;:.!?…"
	enders  = ".!?:;…"
)

// chunk classifies one whitespace-separated chunk.
func (x *extractor) chunk(c string) {
	initial := x.initial
	x.initial = false
	for c != "" {
		r, n := utf8.DecodeRuneInString(c)
		if !strings.ContainsRune(openers, r) {
			break
		}
		if r != '*' && r != '#' {
			initial = true // a quotation starts a sentence of its own
		}
		c = c[n:]
	}
	for c != "" {
		r, n := utf8.DecodeLastRuneInString(c)
		if !strings.ContainsRune(closers, r) || (r == ')' && strings.Contains(c, "(")) {
			break
		}
		if strings.ContainsRune(enders, r) {
			x.initial = true
		}
		c = c[:len(c)-n]
	}
	switch c {
	case "":
		return
	case "-", "–", "—", "•", "&", "+", "=", "/", "|":
		x.num.flush(x)
		x.lastNum = -1
		return
	case "%":
		x.percent()
		return
	}
	x.classify(c, initial)
}

// classify routes a stripped chunk to the number, code or word handlers.
func (x *extractor) classify(c string, initial bool) {
	var hasDigit, hasLetter, camel, sym, slash bool
	var prevLower bool
	for _, r := range c {
		switch {
		case r >= '0' && r <= '9':
			hasDigit = true
		case unicode.IsLetter(r):
			hasLetter = true
			if unicode.IsUpper(r) && prevLower {
				camel = true
			}
			prevLower = unicode.IsLower(r)
			continue
		case r == '/':
			slash = true
		case r == '_' || r == '\\' || r == '@' || r == '=' || r == '(' || r == '<' || r == '{' || r == '~' || r == '|':
			sym = true
		}
		prevLower = false
	}
	first, _ := utf8.DecodeRuneInString(c)
	switch {
	case strings.Contains(c, "://") || strings.HasPrefix(c, "www."):
		x.code(c)
	case strings.HasPrefix(c, "--") || (first == '-' && len(c) > 1 && isASCIILetter(c[1])):
		x.code(c)
	case startsNumber(c):
		x.number(c)
	case sym:
		x.code(c)
	case slash:
		x.slashed(c, initial)
	case strings.Contains(c, ".") && hasLetter:
		x.dotted(c)
	case hasDigit && hasLetter:
		x.num.flush(x)
		x.lastNum = -1
		lower := toLower(c)
		key := nameKey(lower, lexicon[lower])
		x.f.Words = append(x.f.Words, key)
		x.ents = append(x.ents, entityCandidate{key: key})
	case strings.Contains(c, "-") && hasLetter && !camel:
		joined := strings.ReplaceAll(c, "-", "")
		if allCapitalised(c) || lexicon[toLower(joined)] != nil { // Wi-Fi, Coca-Cola: one name; lower-case: one word
			x.word(joined, initial)
			return
		}
		for i, part := range strings.Split(c, "-") {
			if part != "" {
				x.word(part, initial && i == 0)
			}
		}
	case hasLetter:
		x.word(c, initial)
	}
}

// startsNumber reports whether c starts with a number: a digit, a sign or a
// currency symbol or a point before a digit, or a "v" before a version.
func startsNumber(c string) bool {
	i := 0
	for i < len(c) {
		r, n := utf8.DecodeRuneInString(c[i:])
		if r >= '0' && r <= '9' {
			return true
		}
		if i > 0 && !strings.ContainsRune("$€£¥₹", r) {
			return false
		}
		if !strings.ContainsRune("-+−.$€£¥₹vV", r) {
			return false
		}
		i += n
	}
	return false
}

// code records an identifier with symbols.
func (x *extractor) code(c string) {
	x.num.flush(x)
	x.lastNum = -1
	x.f.Code = append(x.f.Code, c)
	x.direct(c, c, true)
}

// slashed handles a chunk with slashes: a path (code), or alternatives
// between plain words ("TCP/IP", "and/or"), which are words.
func (x *extractor) slashed(c string, initial bool) {
	parts := strings.Split(c, "/")
	if len(parts) > 3 || c[0] == '/' || strings.ContainsAny(c, ".~") {
		x.code(c)
		return
	}
	for _, p := range parts {
		if p == "" || !isAlpha(p) {
			x.code(c)
			return
		}
	}
	for i, p := range parts {
		x.word(p, initial && i == 0)
	}
}

// dotted handles a chunk with an inner point: an abbreviation ("e.g",
// "U.S", "a.m") or a dotted name ("node.js", "config.yaml": code).
func (x *extractor) dotted(c string) {
	if lower := toLower(c); lexicon[lower] != nil && lexicon[lower].name {
		key := nameKey(lower, lexicon[lower])
		x.f.Words = append(x.f.Words, key)
		x.ents = append(x.ents, entityCandidate{key: key})
		return
	}
	parts := strings.Split(c, ".")
	abbrev := true
	for _, p := range parts {
		if utf8.RuneCountInString(p) != 1 {
			abbrev = false
			break
		}
	}
	if !abbrev {
		x.code(c)
		return
	}
	lower := toLower(c)
	if _, ok := lexicon[lower]; ok {
		x.word(lower, false)
		return
	}
	if c != lower { // U.S, U.K: an acronym
		key := strings.ReplaceAll(lower, ".", "")
		x.f.Words = append(x.f.Words, key)
		x.ents = append(x.ents, entityCandidate{key: key})
	}
}

// word handles one alphabetic word, possibly with apostrophes.
func (x *extractor) word(w string, initial bool) {
	w = strings.ReplaceAll(w, "’", "'")
	lower := toLower(w)
	greeted := greetings[x.prev] // "Hi Claude": the addressee is no topic
	lex := lexicon[lower]
	if lex == nil && strings.HasSuffix(lower, "'s") {
		lex = lexicon[lower[:len(lower)-2]]
	}
	if lex != nil {
		for i := range numLatinLangs {
			if lex.langs&(1<<i) != 0 {
				x.langHits[i]++
			}
		}
	}
	switch {
	case lex != nil && lex.neg:
		x.f.Negations++
	case strings.HasSuffix(lower, "n't"), strings.HasPrefix(lower, "n'") && len(lower) > 2:
		x.f.Negations++
	}
	if x.numberWord(lower, lex) {
		x.prev = lower
		x.dir = direction{}
		x.np = true // "two files"
		return
	}
	x.content(lower, lex, initial)
	first, _ := utf8.DecodeRuneInString(w)
	capital := unicode.IsUpper(first) && !initial && lower != "i"
	if capital && x.capPrev >= 0 {
		// A name of several words ("New York", "Best Buy"): the poles of
		// its words are no antonyms.
		x.f.Poles = x.f.Poles[:x.capPrev]
	}
	x.capPrev = -1
	if lex != nil && len(lex.poles) > 0 {
		if capital {
			x.capPrev = len(x.f.Poles)
		}
		x.f.Poles = append(x.f.Poles, lex.poles...)
	}
	if x.prevHeadsTwo {
		if l := lexicon[x.prev+"_"+lower]; l != nil {
			x.f.Poles = append(x.f.Poles, l.poles...)
		}
	}
	x.prevHeadsTwo = lex != nil && lex.headsTwo
	if lower == "first" || lower == "once" {
		x.f.SoftOnes++
	}
	x.prev = lower
	key := nameKey(lower, lex)
	x.f.Words = append(x.f.Words, key)
	x.nwords++
	x.direct(lower, key, lex == nil || !lex.common)

	// Entities.
	if !initial && isAlpha(w) {
		x.mid++
	}
	switch {
	case greeted:
	case lex != nil && lex.name:
		x.ents = append(x.ents, entityCandidate{key: key, at: x.nwords})
	case isCamel(w): // JavaScript, iPhone, getUserName
		x.ents = append(x.ents, entityCandidate{key: key, at: x.nwords})
	case !unicode.IsUpper(first) || lower == "i":
	case isAcronym(w):
		if lex == nil || !lex.common {
			x.ents = append(x.ents, entityCandidate{key: key, at: x.nwords})
		}
	case initial:
		// A capitalised word starting a sentence is a name only if the next
		// word is capitalised too ("New York is…"), see finish.
		if lex == nil {
			x.ents = append(x.ents, entityCandidate{key: key, weak: true, initial: true, at: x.nwords})
		}
	default:
		x.capMid++
		// A capitalised common word is a name only if the next word is
		// capitalised too ("New York", "The Hague").
		common := lex != nil && lex.common
		x.ents = append(x.ents, entityCandidate{key: key, weak: true, initial: common, at: x.nwords})
	}
}

// greetings may precede the name of the assistant addressed.
var greetings = setOf("hi hello hey dear thanks yo")

// finish sorts the lists and decides the language and the entities.
func (x *extractor) finish() Features {
	f := x.f
	f.Lang = x.lang()
	title := x.mid >= 3 && 2*x.capMid > x.mid
	for i, e := range x.ents {
		if e.initial && (i+1 == len(x.ents) || x.ents[i+1].at != e.at+1) {
			continue // a lone capitalised word starting a sentence
		}
		if !(e.weak && title) {
			f.Entities = append(f.Entities, e.key)
		}
	}
	slices.Sort(f.Numbers)
	slices.Sort(f.Quoted)
	slices.Sort(f.Code)
	f.Entities = sortedSet(f.Entities)
	f.Words = sortedSet(f.Words)
	if len(f.Words) == 0 {
		f.Words = nil // as after a JSON round trip
	}
	f.Poles = sortedSet(f.Poles)
	f.Roles = sortedSet(f.Roles)
	f.Content = sortedContent(f.Content)
	f.Rest = sortedContent(f.Rest)
	return f
}

func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// quotes records the quoted spans of text: code fences first, then the
// quotation marks outside them.
func (x *extractor) quotes(text string) {
	var outside strings.Builder
	for fenced := false; ; fenced = true {
		i := strings.Index(text, "```")
		j := -1
		if i >= 0 {
			j = strings.Index(text[i+3:], "```")
		}
		if j < 0 {
			if fenced {
				outside.WriteString(text)
				text = outside.String()
			}
			break
		}
		x.addQuote(text[i+3 : i+3+j])
		outside.WriteString(text[:i])
		outside.WriteByte(' ')
		text = text[i+6+j:]
	}
	var open rune
	start := 0
	prev := ' '
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		next, _ := utf8.DecodeRuneInString(text[i+n:])
		switch {
		case open == 0:
			switch r {
			case '"', '`', '“', '«', '„':
				open, start = r, i+n
			case '\'', '‘', '’':
				if !isWordRune(prev) && next != utf8.RuneError && !unicode.IsSpace(next) {
					open, start = r, i+n
				}
			}
		case closes(open, r) && (open == '"' || open == '`' || !isWordRune(next)):
			x.addQuote(text[start:i])
			open = 0
		}
		prev = r
		i += n
	}
}

// addQuote records a quoted span. Its words do not count for the language of
// the text: "How do I say 'je ne sais pas'?" is English.
func (x *extractor) addQuote(q string) {
	if q = strings.TrimSpace(q); q == "" {
		return
	}
	x.f.Quoted = append(x.f.Quoted, q)
	for w := range strings.FieldsSeq(q) {
		w = strings.TrimFunc(w, func(r rune) bool { return !isWordRune(r) && r != '\'' })
		if lex := lexicon[toLower(w)]; lex != nil {
			for i := range numLatinLangs {
				if lex.langs&(1<<i) != 0 {
					x.langHits[i]--
				}
			}
		}
	}
}

// closes reports whether r closes a quotation opened by open.
func closes(open, r rune) bool {
	switch open {
	case '"':
		return r == '"' || r == '”'
	case '“':
		return r == '”' || r == '"'
	case '„':
		return r == '“' || r == '”'
	case '«':
		return r == '»'
	case '`':
		return r == '`'
	default: // ' ‘ ’
		return r == '\'' || r == '’'
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

func isAlpha(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '\'' && r != '’' {
			return false
		}
	}
	return s != ""
}

// allCapitalised reports whether every hyphen-separated part of c starts
// with a capital letter.
func allCapitalised(c string) bool {
	for part := range strings.SplitSeq(c, "-") {
		r, _ := utf8.DecodeRuneInString(part)
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// isAcronym reports whether w is two or more capitals (AWS, GDPR, IT).
func isAcronym(w string) bool {
	n := 0
	for _, r := range w {
		if r == '\'' || r == '’' {
			break
		}
		if !unicode.IsUpper(r) {
			return r == 's' && n >= 2 // APIs
		}
		n++
	}
	return n >= 2
}

// isCamel reports whether w has an upper-case letter after a lower-case one
// (iPhone, JavaScript, macOS).
func isCamel(w string) bool {
	prevLower := false
	for _, r := range w {
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

// toLower lower-cases s, without allocating when it is lower case already.
func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return strings.ToLower(s)
		}
		if c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// nameKey is wordKey with aliases resolved: "golang" is "go".
func nameKey(lower string, lex *lexeme) string {
	if lex != nil && lex.alias != "" {
		return lex.alias
	}
	if lex != nil && lex.name {
		return strings.TrimSuffix(lower, "'s") // not stemmed: "paris", "aws"
	}
	k := wordKey(lower)
	if k != lower {
		if l := lexicon[k]; l != nil && l.alias != "" {
			return l.alias
		}
	}
	return k
}

// wordKey is the key of a lowercase word in Words and Entities: without a
// possessive "'s" or a plural "s".
func wordKey(lower string) string {
	lower = strings.TrimSuffix(lower, "'s")
	lower = strings.TrimSuffix(lower, "'")
	if len(lower) > 3 && lower[len(lower)-1] == 's' {
		switch lower[len(lower)-2] {
		case 's', 'u', 'i':
		default:
			return lower[:len(lower)-1]
		}
	}
	return lower
}
