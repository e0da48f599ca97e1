package injection

import (
	"math"
	"slices"
	"sync"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// DefaultThreshold is the least score a finding needs when a Detector's
// Threshold is zero.
const DefaultThreshold = 0.5

// Detector finds prompt injections and jailbreaks. The zero value is ready to
// use; it is safe for concurrent use.
type Detector struct {
	// Threshold is the least score (0–1) a span needs to be reported by
	// Detect; 0 means DefaultThreshold. Score is not affected by it.
	Threshold float64
	// Learned turns the learned component on (learned.go): Score is the
	// fitted blend of the rules and a classifier over hashed n-grams, and a
	// text the classifier flags without a rule hit gets a finding with Rule
	// "learned". The zero value is the rules alone; the compliance engine
	// turns it on (compliance.DefaultInjection: chosen on the public dev
	// set, testdata/dev_public.jsonl, where it raises F1 from 0.369 to
	// 0.538 with 2 of 181 security-adjacent texts flagged against 1).
	Learned bool
}

var _ detect.Detector = Detector{}

// Prepare builds the lexicon and the Unicode fold table now; otherwise the
// first scan builds them (about 6 ms). Call it at start-up so that no
// request pays for it.
func Prepare() {
	lexicon()
	foldOnce.Do(buildFoldTable)
	loadLearned()
}

// Name is the detector family's name, "injection".
func (Detector) Name() string { return "injection" }

// Detect appends to dst a finding (Type detect.PromptInjection or
// detect.Jailbreak) for every span of text whose score reaches the
// threshold, and returns dst. Spans are byte offsets into text; for a payload
// that had to be decoded (base64, hex) the span is the encoded blob.
func (d Detector) Detect(text string, dst []detect.Finding) []detect.Finding {
	dst, _ = d.Scan(text, dst)
	return dst
}

// Score is the likelihood, 0–1, that text carries a prompt injection or a
// jailbreak: the highest score of the rules' spans or, when there is none, a
// small value that grows with the number of trigger words (so that texts
// without a finding are still ranked); with Learned, the blend of that and
// the classifier.
func (d Detector) Score(text string) float64 {
	sc := getScanner()
	defer putScanner(sc)
	sc.scan(text, 0)
	if m := d.learned(); m != nil {
		return sc.blended(m)
	}
	return sc.score()
}

// learned is the learned component, nil unless Learned is set and the
// embedded weights are usable.
func (d Detector) learned() *learnedModel {
	if !d.Learned {
		return nil
	}
	return loadLearned()
}

// Scan is Detect and Score in one pass: it appends the findings of text to
// dst and returns dst and text's score. With Learned a text
// has findings exactly when its score reaches the threshold: the rules'
// hits that reach it, or else one finding with Rule "learned" over the
// sentence that adds most to the classifier's logit.
func (d Detector) Scan(text string, dst []detect.Finding) ([]detect.Finding, float64) {
	th := d.Threshold
	if th <= 0 {
		th = DefaultThreshold
	}
	sc := getScanner()
	defer putScanner(sc)
	sc.scan(text, 0)
	m := d.learned()
	if m == nil {
		return sc.findings(text, th, dst), sc.score()
	}
	s := sc.blended(m)
	if s < th {
		return dst, s
	}
	n := len(dst)
	if dst = sc.findings(text, th, dst); len(dst) > n {
		return dst, s
	}
	if start, end := sc.bestSentence(m); start < end {
		dst = append(dst, detect.Finding{Type: sc.learnedType(), Start: start, End: end, Score: s, Rule: "learned"})
	}
	return dst, s
}

// learnedType is the type of a "learned" finding: a jailbreak when the
// rules' strongest evidence is of a jailbreak family, else a prompt
// injection.
func (sc *scanner) learnedType() detect.Type {
	best := -1
	for k, h := range sc.hits {
		if !h.support && (best < 0 || h.z > sc.hits[best].z) {
			best = k
		}
	}
	if best >= 0 {
		h := sc.hits[best]
		if h.fam == famEncoded {
			return h.inner.typ()
		}
		return h.fam.typ()
	}
	return detect.PromptInjection
}

// family is what a hit is evidence of.
type family uint8

const (
	famOverride family = iota
	famTemplate
	famExtraction
	famHijack
	famDAN
	famDevMode
	famJailbreak
	famExfilMarkdown
	famExfilLink
	famExfilHTML
	famEncoded
	numFamilies
)

// encoding of a decoded payload.
type encoding uint8

const (
	encNone encoding = iota
	encBase64
	encHex
	encURL
	numEncodings
)

var encNames = [numEncodings]string{"", "base64", "hex", "url"}

// famName is the rule name of a family (override takes a language).
var famName = [numFamilies]string{
	famOverride:      "override",
	famTemplate:      "override:template",
	famExtraction:    "extraction",
	famHijack:        "hijack",
	famDAN:           "dan",
	famDevMode:       "devmode",
	famJailbreak:     "jailbreak",
	famExfilMarkdown: "exfil:markdown",
	famExfilLink:     "exfil:link",
	famExfilHTML:     "exfil:html",
	famEncoded:       "encoded",
}

func (f family) typ() detect.Type {
	switch f {
	case famDAN, famDevMode, famJailbreak:
		return detect.Jailbreak
	}
	return detect.PromptInjection
}

// ruleNames holds every rule string, built once, so that findings do not
// allocate their names.
var ruleNames = func() (t struct {
	override [16]string
	encoded  [numEncodings][numFamilies]string
}) {
	for l := range t.override {
		t.override[l] = "override:" + langName(uint8(l))
	}
	for e := encBase64; e < numEncodings; e++ {
		for f := range numFamilies {
			inner := famName[f]
			if f == famOverride {
				inner = "override"
			}
			t.encoded[e][f] = "encoded:" + encNames[e] + "+" + inner
		}
	}
	return t
}()

// hit is one piece of evidence: a span of the original text, its family and
// its log-odds.
type hit struct {
	start, end int     // span in the scanned text
	t0, t1     int     // tokens [t0, t1) it covers; t0 == t1 when it has none
	z          float64 // log-odds; after weigh, final
	z0         float64 // log-odds before weigh
	fam        family
	lang       uint8
	enc        encoding // for famEncoded: the encoding
	inner      family   // for famEncoded: the decoded payload's family
	obf        bool     // matched over obfuscated characters
	raw        bool     // no meta-discussion discount (encoded payloads)
	support    bool     // evidence for others only: never a finding, not the score
}

// token is one word of the normalised text.
type token struct {
	s, e int32 // normalised offsets [s, e)
	cls  uint64
	lang uint8
	back uint8 // the phrase that gave cls began back tokens earlier
	sent bool  // a sentence boundary precedes the token
	obf  bool  // holds an obfuscated byte
}

// Scanning bounds.
const (
	maxHits        = 256 // evidence kept per text
	maxDepth       = 2   // decoding levels (base64 inside hex inside the text)
	maxTokenLookup = 40  // longer words are not looked up
)

// scanner is one scan's scratch space, pooled.
type scanner struct {
	text   string
	n      normText
	toks   []token
	brk    int // the first token after the text's first sentence break (math.MaxInt if none)
	hits   []hit
	dec    []byte   // decoded payload
	src    []byte   // a blob copied for decoding
	inner  *scanner // for decoded payloads, depth+1
	depth  int
	tries  int  // decode attempts left (shared with inner scanners)
	trigrs int  // trigger words seen (for the score of texts without hits)
	harm   bool // roleplayHarm reported
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func getScanner() *scanner { return scanners.Get().(*scanner) }

func putScanner(sc *scanner) {
	sc.text = ""
	if sc.inner != nil {
		sc.inner.text = ""
	}
	if cap(sc.n.b) > 1<<20 { // do not pin big buffers
		*sc = scanner{}
	}
	scanners.Put(sc)
}

// scan fills sc.hits with the evidence of text, final log-odds included.
func (sc *scanner) scan(text string, depth int) {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	sc.text = text
	sc.depth = depth
	sc.hits = sc.hits[:0]
	sc.trigrs = 0
	sc.harm = false
	if depth == 0 {
		sc.tries = maxDecodeTries
	}
	sc.n.normalize(text)
	sc.tokenize()
	sc.families()
	sc.templates()
	sc.exfil()
	if depth < maxDepth {
		sc.encoded()
	}
	sc.weigh()
}

// tokenize splits the normalised text into words and looks each up.
func (sc *scanner) tokenize() {
	b := sc.n.b
	sc.toks = sc.toks[:0]
	sc.brk = math.MaxInt
	lex := lexicon()
	sent := true
	for i := 0; i < len(b); {
		if b[i] == sepSpace || b[i] == sepSentence {
			sent = sent || b[i] == sepSentence
			i++
			continue
		}
		s := i
		obf := false
		digits, letters := false, false
		for ; i < len(b) && b[i] != sepSpace && b[i] != sepSentence; i++ {
			obf = obf || sc.n.obf[i]
			if '0' <= b[i] && b[i] <= '9' {
				digits = true
			} else {
				letters = true
			}
		}
		t := token{s: int32(s), e: int32(i), sent: sent, obf: obf}
		if sent && len(sc.toks) > 0 && sc.brk == math.MaxInt {
			sc.brk = len(sc.toks) // t's index: both branches below append it
		}
		sent = false
		if i-s <= maxTokenLookup {
			e := lex[string(b[s:i])]
			if e == nil && digits && letters {
				e = leetLookup(lex, b[s:i])
				if e != nil {
					t.obf = true
				}
			}
			if e != nil {
				t.cls, t.lang = e.cls, e.lang
				sc.toks = append(sc.toks, t)
				sc.phrases(e)
				continue
			}
			t.cls = compound(b[s:i])
		}
		sc.toks = append(sc.toks, t)
	}
}

// compound classes a German compound by its head, the last noun:
// Wartungsmodus, Sicherheitsregeln, Systemanweisungen.
func compound(w []byte) uint64 {
	for _, c := range compounds {
		if len(w) > len(c.suffix)+2 && string(w[len(w)-len(c.suffix):]) == c.suffix {
			return c.cls
		}
	}
	return 0
}

var compounds = []struct {
	suffix string
	cls    uint64
}{
	{"modus", cMode},
	{"anweisungen", cObjS | cExObj},
	{"regeln", cObjM | cRestr | cExObj},
	{"prompt", cObjS | cExObj | cSecMod},
	{"richtlinien", cObjS | cRestr | cExObj},
	{"beschrankungen", cObjM | cRestr},
	{"einschrankungen", cObjM | cRestr},
}

// phrases gives the last token the classes of the phrases it ends.
func (sc *scanner) phrases(e *entry) {
	last := len(sc.toks) - 1
	for _, p := range e.phrases {
		first := last - len(p.prev)
		if first < 0 {
			continue
		}
		ok := true
		for k, w := range p.prev {
			t := sc.toks[first+k]
			if string(sc.n.b[t.s:t.e]) != w {
				ok = false
				break
			}
		}
		if ok {
			t := &sc.toks[last]
			t.cls |= p.cls
			t.lang |= p.lang
			t.back = max(t.back, uint8(len(p.prev)))
		}
	}
}

// leetLookup looks up a word with digits read as letters (1gn0r3).
func leetLookup(lex map[string]*entry, w []byte) *entry {
	var buf [maxTokenLookup]byte
	for _, one := range [...]byte{'i', 'l'} {
		for k, c := range w {
			switch c {
			case '0':
				c = 'o'
			case '1':
				c = one
			case '3':
				c = 'e'
			case '4':
				c = 'a'
			case '5':
				c = 's'
			case '7':
				c = 't'
			case '8':
				c = 'b'
			}
			buf[k] = c
		}
		if e := lex[string(buf[:len(w)])]; e != nil {
			return e
		}
	}
	return nil
}

// span is the original-text span of tokens [t0, t1), phrase starts included.
func (sc *scanner) span(t0, t1 int) (int, int) {
	t0 = max(0, t0-int(sc.toks[t0].back))
	start := int(sc.n.off[sc.toks[t0].s])
	last := int(sc.n.off[sc.toks[t1-1].e-1])
	return start, last + runeLen(sc.text, last)
}

// runeLen is the length of the (possibly invalid) rune at s[i].
func runeLen(s string, i int) int {
	c := s[i]
	switch {
	case c < 0x80:
		return 1
	case c&0xE0 == 0xC0:
		return min(2, len(s)-i)
	case c&0xF0 == 0xE0:
		return min(3, len(s)-i)
	case c&0xF8 == 0xF0:
		return min(4, len(s)-i)
	}
	return 1
}

// add records a hit over tokens [t0, t1); it reports whether it did (the
// hit is then the last of sc.hits).
func (sc *scanner) add(fam family, t0, t1 int, z float64) bool {
	if t0 >= t1 || !sc.room(z) {
		return false
	}
	start, end := sc.span(t0, t1)
	h := hit{start: start, end: end, t0: max(0, t0-int(sc.toks[t0].back)), t1: t1, z: z, fam: fam}
	all := uint8(0xF)
	for k := h.t0; k < t1; k++ {
		t := sc.toks[k]
		h.obf = h.obf || t.obf
		if t.lang != 0 && all&t.lang != 0 {
			all &= t.lang
		}
	}
	h.lang = all
	sc.hits = append(sc.hits, h)
	return true
}

// room makes room for a hit of log-odds z: when the text has maxHits
// already, the weakest gives way to a stronger one (so that padding a text
// with weak cues cannot push an attack out).
func (sc *scanner) room(z float64) bool {
	if len(sc.hits) < maxHits {
		return true
	}
	weakest := 0
	for k, h := range sc.hits {
		if h.z < sc.hits[weakest].z {
			weakest = k
		}
	}
	if sc.hits[weakest].z >= z {
		return false
	}
	sc.hits = slices.Delete(sc.hits, weakest, weakest+1)
	return true
}

// addRaw records a hit over a span of the original text that no token
// delimits (a URL, a chat-template token, an encoded blob).
func (sc *scanner) addRaw(h hit) {
	if h.start >= h.end || !sc.room(h.z) {
		return
	}
	h.t0, h.t1 = sc.tokenAt(h.start), sc.tokenAt(h.end)
	sc.hits = append(sc.hits, h)
}

// tokenAt is the index of the first token that starts at or after offset at
// of the original text.
func (sc *scanner) tokenAt(at int) int {
	i, _ := slices.BinarySearchFunc(sc.toks, at, func(t token, at int) int {
		return int(sc.n.off[t.s]) - at
	})
	return i
}

// Weighing: the evidence of a hit is raised by other hits close to it and
// lowered when it sits in a discussion about attacks (a question about
// prompt injection, a filter's test phrase in quotes). Obfuscated or encoded
// hits are never discounted: nobody hides an example.
const (
	bonusPerHit   = 0.7
	bonusMax      = 1.4
	bonusReach    = 400 // bytes
	metaReach     = 30  // tokens either side
	metaDiscount  = 2.5
	mentionCost   = 1.5
	quoteDiscount = 1.0
	quotedMention = 1.5
	quotedDiscuss = 1.5
	quotedTopic   = 1.5
	obfBonus      = 1.0
	weakFloor     = -1.5 // hits below this do not support others
)

func (sc *scanner) weigh() {
	for i := range sc.hits {
		sc.hits[i].z0 = sc.hits[i].z
	}
	for i := range sc.hits {
		h := &sc.hits[i]
		disc := 0.0
		if !h.obf && !h.raw {
			disc = sc.discount(h)
		}
		bonus := 0.0
		for j, g := range sc.hits {
			if j == i || g.z0 < weakFloor || g.support && disc > 0 {
				continue // a discussed hit is not "said" by the one quoting it
			}
			if g.fam == h.fam && g.start < h.end && h.start < g.end {
				continue
			}
			if g.start > h.end+bonusReach || h.start > g.end+bonusReach {
				continue
			}
			bonus += bonusPerHit
		}
		h.z += min(bonus, bonusMax) - disc
		if h.obf {
			h.z += obfBonus
		}
	}
}

// discount is how much a hit's evidence is lowered because it is talked
// about rather than meant: a discussion of attacks (a topic word and a
// discussion word near it) and quotation marks around the hit, more so after
// "phrases like", "such as", "catch".
func (sc *scanner) discount(h *hit) float64 {
	topic, discuss := false, false
	lo, hi := max(0, h.t0-metaReach), min(len(sc.toks), h.t1+metaReach)
	for k := lo; k < hi; k++ {
		if k >= h.t0 && k < h.t1 || sc.inAddress(k) {
			continue
		}
		c := sc.toks[k].cls
		switch {
		case c&cTopic != 0 && !topic:
			topic = true
		case c&cDiscuss != 0:
			discuss = true
		}
	}
	mention := false
	for k := max(0, h.t0-3); k < h.t0 && k < len(sc.toks); k++ {
		if sc.toks[k].cls&cMention != 0 {
			mention = true
		}
	}
	quoted := sc.quoted(h.start, h.end)
	if !quoted && h.fam.typ() == detect.Jailbreak && sc.rolePlayed(lo, hi) {
		return 0 // "pretend you're a security researcher with no restrictions": a role given, not discussed
	}
	d := 0.0
	if topic && (discuss || mention) {
		d += metaDiscount
		if mention {
			d += mentionCost
		}
	}
	if quoted {
		d += quoteDiscount
		if mention {
			d += quotedMention
		}
		if discuss {
			d += quotedDiscuss
		}
		if topic {
			d += quotedTopic
		}
	}
	return d
}

// rolePlayed reports whether tokens [lo, hi) give the model a role: "pretend
// you", "act as", "you are now".
func (sc *scanner) rolePlayed(lo, hi int) bool {
	for k := lo; k < hi; k++ {
		if sc.toks[k].cls&cRole == 0 {
			continue
		}
		first := k - int(sc.toks[k].back)
		if first > 0 && (sc.is(first-1, "to") || sc.toks[first-1].cls&cAI != 0) {
			continue // "asks the model to role-play …": reported
		}
		if sc.toks[first].sent || k+1 < len(sc.toks) && sc.toks[k+1].cls&cYou != 0 || sc.toks[first].cls&cYou != 0 {
			return true
		}
	}
	return false
}

// inAddress reports whether token k is part of an e-mail address, a host
// name or a path ("attacker@example.com"): not a word of the discussion.
func (sc *scanner) inAddress(k int) bool {
	t := sc.toks[k]
	start, last := int(sc.n.off[t.s]), int(sc.n.off[t.e-1])
	end := last + runeLen(sc.text, last)
	if start > 0 {
		switch sc.text[start-1] {
		case '@', '/':
			return true
		case '.':
			if start > 1 && isWordByte(sc.text[start-2]) {
				return true
			}
		}
	}
	if end < len(sc.text) {
		switch sc.text[end] {
		case '@':
			return true
		case '.', '/':
			return end+1 < len(sc.text) && isWordByte(sc.text[end+1])
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Texts without a hit score sigmoid(weakBase + weakStep × trigger words).
const (
	weakBase = -4.5
	weakStep = 0.35
	weakMax  = 6
)

// score is the text's score after scan.
func (sc *scanner) score() float64 {
	weak := sigmoid(weakBase + weakStep*float64(min(sc.trigrs, weakMax)))
	best := weak
	for _, h := range sc.hits {
		if !h.support {
			best = max(best, sigmoid(h.z))
		}
	}
	return best
}

// findings appends the hits that reach th, merged per type where they
// overlap, to dst.
func (sc *scanner) findings(text string, th float64, dst []detect.Finding) []detect.Finding {
	first := len(dst)
	for _, h := range sc.hits {
		s := sigmoid(h.z)
		if h.support || s < th || h.start < 0 || h.end > len(text) || h.start >= h.end {
			continue
		}
		f := detect.Finding{Type: h.fam.typ(), Start: h.start, End: h.end, Score: s, Rule: sc.rule(h)}
		if h.fam == famEncoded {
			f.Type = h.inner.typ()
		}
		dst = mergeInto(dst, first, f)
	}
	out := dst[first:]
	slices.SortFunc(out, func(a, b detect.Finding) int { return a.Start - b.Start })
	return dst
}

// mergeInto adds f to dst[first:] unless a finding of the same type
// overlaps it; of two that overlap the higher score (then the longer) stays.
func mergeInto(dst []detect.Finding, first int, f detect.Finding) []detect.Finding {
	for i := first; i < len(dst); i++ {
		g := &dst[i]
		if g.Type != f.Type || f.Start >= g.End || g.Start >= f.End {
			continue
		}
		if f.Score > g.Score || f.Score == g.Score && f.End-f.Start > g.End-g.Start {
			*g = f
		}
		return dst
	}
	return append(dst, f)
}

func (sc *scanner) rule(h hit) string {
	switch h.fam {
	case famOverride:
		return ruleNames.override[h.lang&0xF]
	case famEncoded:
		return ruleNames.encoded[h.enc][h.inner]
	}
	return famName[h.fam]
}
