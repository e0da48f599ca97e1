// Package fresh tells the prompts whose answer must be fresh: a cached
// answer to them is wrong by construction, so the semantic cache neither
// serves nor stores them. It flags four kinds of request:
//
//   - Random: the caller asks for a random pick — a number, a coin flip, a
//     dice roll, a shuffle, lottery numbers, "a random name", "surprise me".
//     Served from the cache, every caller would get the same "random" answer.
//   - Secret: the caller asks for a new secret — a password, passphrase, PIN,
//     API key, token, private or encryption key, salt, nonce, UUID or GUID.
//     A cached secret is a secret shared with everyone served it.
//   - Clock: the answer depends on the current date or time — "what time is
//     it", "what's today's date", "what day is it", "how many days until
//     Christmas", "is it the weekend today".
//   - Live: the answer is the state of the world now — the latest or today's
//     news, prices, exchange and interest rates, weather, scores, outages,
//     traffic, the latest version of a product.
//
// Hard negatives are what make it useful: questions about the same words
// that do not depend on when or how often they are asked are not flagged —
// "explain how random forests work", "how do I generate a UUID in Python",
// "what is the date format in ISO 8601", "history of the latest ice age",
// "what causes stock prices to rise". Check is a set of word rules, not a
// model: a request for a value (an imperative, a short phrase, "can you
// …", a value question on a live topic, a time marker such as "today",
// "right now", "latest") flags; a question about a concept or how to do
// something ("how do I", "why", "explain", "what is a …"), code ("in
// Python", "function"), a past or fixed time ("in 2014", "usually"), or a
// task on a given text ("summarise this news") does not. It reads the first
// maxWords words, in English.
//
// A wrong flag costs a cache hit (one upstream call); a missed one serves
// a stale or shared answer: the rules lean to flagging. Their precision
// and recall are measured on testdata (tune.jsonl, which they were written
// against, and heldout.jsonl, never tuned on); see docs/benchmarks.md.
//
// fresh imports nothing of svc; internal/cache imports it.
package fresh

import "iter"

// Reason is why a prompt needs a fresh answer, or None.
type Reason uint8

// Reasons, in the order Check tries them.
const (
	None   Reason = iota
	Clock         // the current date or time
	Live          // news, prices, rates, weather, scores, outages now
	Secret        // a new password, key, token, PIN, UUID
	Random        // a random pick
)

func (r Reason) String() string {
	switch r {
	case Clock:
		return "clock"
	case Live:
		return "live"
	case Secret:
		return "secret"
	case Random:
		return "random"
	}
	return "none"
}

// maxWords and maxBytes bound what Check reads of a prompt: requests for
// a fresh answer are short, and a long pasted text is not one.
const (
	maxWords = 64
	maxBytes = 1024
)

// Check reports why prompt needs a fresh answer, or None. A prompt without
// a word any rule needs (most prompts) costs one pass and a map lookup per
// word, without allocating.
func Check(prompt string) Reason {
	var p words
	if !p.scan(prompt) {
		return None
	}
	p.finish()
	switch {
	case p.clock():
		return Clock
	case p.live():
		return Live
	}
	if !p.request() {
		return None
	}
	switch {
	case p.secret():
		return Secret
	case p.random():
		return Random
	}
	return None
}

// words is a prompt's words, lower-cased, with the classes of each.
type words struct {
	buf   [maxBytes]byte      // the words, lower-cased, one space apart
	span  [maxWords][2]uint16 // word i is buf[span[i][0]:span[i][1]]
	cls   [maxWords]uint32    // classes of word i
	hash  [maxWords]uint32    // hash of word i
	n     int                 // words read
	text  string              // buf as a string, once finish made it
	class uint32              // union of the classes of the words
	bloom [4]uint64           // a Bloom filter of the words, so that find skips absent ones
	digit bool                // a word has a digit
	rng   bool                // a numeric range: "between 1 and 10", "from 1 to 6", "1-100"
	year  bool                // a year (1900–2099) as a word
}

// scan reads the words of text: letters, digits and inner apostrophes (’
// made '), lower-cased. It reports whether any word may matter to a rule.
func (p *words) scan(text string) bool {
	used, start := 0, -1
	dash := false // a '-' right after the last word, before a digit
	for i := 0; i <= len(text) && p.n < maxWords; i++ {
		c := byte(' ')
		if i < len(text) {
			c = text[i]
		}
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == 0xE2 && i+2 < len(text) && text[i+1] == 0x80 && text[i+2] == 0x99: // ’
			c = '\''
			i += 2
		}
		inWord := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 ||
			c == '\'' && start >= 0 && i+1 < len(text) && isAlnum(lower(text[i+1]))
		switch {
		case inWord && used < maxBytes:
			if start < 0 {
				start = used
			}
			p.buf[used] = c
			used++
		case start >= 0:
			p.add(start, used)
			if c == '-' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9' {
				dash = true
			}
			start = -1
			if used < maxBytes {
				p.buf[used] = ' '
				used++
			}
		}
		if used >= maxBytes && start < 0 {
			break
		}
	}
	p.rng = dash
	return p.class&cTrigger != 0 || p.digit
}

// add records the word buf[start:end].
func (p *words) add(start, end int) {
	w := p.buf[start:end]
	h := hash(w)
	c := classes.of(w, h)
	p.span[p.n] = [2]uint16{uint16(start), uint16(end)}
	p.cls[p.n], p.hash[p.n] = c, h
	p.n++
	p.class |= c
	p.bloom[h>>6&3] |= 1 << (h & 63)
	for _, b := range w {
		if b >= '0' && b <= '9' {
			p.digit = true
			break
		}
	}
}

// finish makes the words strings for the rules and finds years and ranges.
func (p *words) finish() {
	if p.n > 0 {
		p.text = string(p.buf[:p.span[p.n-1][1]])
	}
	dash := p.rng
	p.rng = false
	for i := range p.n {
		w := p.at(i)
		if !isDigits(w) {
			continue
		}
		if len(w) == 4 && (w[:2] == "19" || w[:2] == "20") {
			p.year = true
		}
		if dash && isDigits(p.at(i+1)) && p.text[p.span[i][1]] == ' ' {
			p.rng = true // "1-100": a digit word after a dash, approximately
		}
		if isDigits(p.at(i+2)) && (p.at(i-1) == "between" && p.at(i+1) == "and" || p.at(i-1) == "from" && p.at(i+1) == "to") {
			p.rng = true
		}
	}
}

// hash is FNV-1a of w.
func hash[T string | []byte](w T) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * 16777619
	}
	return h
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// has reports whether a word of class c is in p.
func (p *words) has(c uint32) bool { return p.class&c != 0 }

// at is the i-th word, or "" past either end.
func (p *words) at(i int) string {
	if i < 0 || i >= p.n {
		return ""
	}
	return p.text[p.span[i][0]:p.span[i][1]]
}

// all yields the words with their indexes.
func (p *words) all() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := range p.n {
			if !yield(i, p.at(i)) {
				return
			}
		}
	}
}

// clsAt is the classes of the i-th word, or 0 past either end.
func (p *words) clsAt(i int) uint32 {
	if i < 0 || i >= p.n {
		return 0
	}
	return p.cls[i]
}

// seq reports whether the words from i are ws.
func (p *words) seq(i int, ws ...string) bool {
	for j, w := range ws {
		if p.at(i+j) != w {
			return false
		}
	}
	return true
}

// find returns the index of the first occurrence of the words ws, or -1.
func (p *words) find(ws ...string) int {
	h := hash(ws[0])
	if p.bloom[h>>6&3]&(1<<(h&63)) == 0 {
		return -1
	}
	for i := range p.n {
		if p.hash[i] == h && p.seq(i, ws...) {
			return i
		}
	}
	return -1
}

// index returns the index of the first word of class c, or -1.
func (p *words) index(c uint32) int {
	if !p.has(c) {
		return -1
	}
	for i := range p.n {
		if p.cls[i]&c != 0 {
			return i
		}
	}
	return -1
}
