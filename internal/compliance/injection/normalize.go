package injection

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalisation turns the scanned text into a lower-case, folded byte string
// in which words are separated by one separator byte, and keeps, for every
// byte it writes, the offset of the source rune it came from, so that a match
// found in the normalised form maps back to a span of the original text.
//
// Folding, per rune:
//   - ASCII letters are lower-cased; ASCII digits are kept; any other ASCII
//     byte is a separator ('.' for sentence punctuation and line breaks,
//     ' ' otherwise);
//   - zero-width characters (U+200B..U+200D, U+2060..U+2064, U+FEFF), the
//     soft hyphen, variation selectors and combining marks are dropped;
//   - Unicode tag characters (U+E0020..U+E007E, "ASCII smuggling") are read
//     as the ASCII character they shadow;
//   - other runes are decomposed (NFKD: full-width and mathematical letters,
//     ligatures, accents), their marks dropped, lower-cased, and Cyrillic,
//     Greek and small-capital look-alikes folded to Latin letters; letters
//     of other scripts are kept as they are.
//
// A byte written from a rune that only an obfuscator would use (a
// look-alike, a compatibility form, a tag character, or a letter glued
// across a zero-width character) is flagged: a match over such bytes is more
// suspicious, not less.

// Separator bytes of the normalised text.
const (
	sepSpace    = ' '
	sepSentence = '.'
)

// maxScan bounds the bytes of one text that are normalised; offsets are kept
// as int32. The API caps content at 1 MiB, far below.
const maxScan = 1 << 26

// norm is the normalised form of a text and its offset map.
type normText struct {
	b   []byte  // normalised bytes
	off []int32 // off[i]: offset in the source of the rune b[i] came from
	obf []bool  // obf[i]: b[i] came from an obfuscating rune
}

func (n *normText) reset() {
	n.b = n.b[:0]
	n.off = n.off[:0]
	n.obf = n.obf[:0]
}

func (n *normText) emit(c byte, at int, obf bool) {
	n.b = append(n.b, c)
	n.off = append(n.off, int32(at))
	n.obf = append(n.obf, obf)
}

// sep writes a separator unless the last byte is one already; a sentence
// separator replaces a space.
func (n *normText) sep(at int, sentence bool) {
	last := len(n.b) - 1
	if last < 0 {
		return
	}
	switch n.b[last] {
	case sepSpace:
		if sentence {
			n.b[last] = sepSentence
		}
		return
	case sepSentence:
		return
	}
	c := byte(sepSpace)
	if sentence {
		c = sepSentence
	}
	n.emit(c, at, false)
}

// normalize fills n from s (at most maxScan bytes of it).
func (n *normText) normalize(s string) {
	n.reset()
	if len(s) > maxScan {
		s = s[:maxScan]
	}
	if cap(n.b) < len(s)+8 {
		n.b = make([]byte, 0, len(s)+len(s)/8+8)
		n.off = make([]int32, 0, cap(n.b))
		n.obf = make([]bool, 0, cap(n.b))
	}
	glue := false // a zero-width character was dropped since the last letter
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n.ascii(c, i, glue)
			glue = false
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n.sep(i, false)
			i++
			continue
		}
		if 0xE0020 <= r && r <= 0xE007E { // tag characters
			n.ascii(byte(r-0xE0000), i, true)
			if len(n.obf) > 0 { // a tag separator at the start writes nothing
				n.obf[len(n.obf)-1] = true
			}
			i += size
			continue
		}
		f := foldOf(r)
		switch f.kind {
		case foldDrop:
			glue = glue || f.obf
		case foldSep:
			n.sep(i, f.sentence)
			glue = false
		default:
			for k := 0; k < int(f.n); k++ {
				n.emit(f.b[k], i, f.obf || glue)
			}
			glue = false
		}
		i += size
	}
}

// ascii writes the fold of one ASCII byte at source offset at.
func (n *normText) ascii(c byte, at int, glue bool) {
	switch {
	case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		n.emit(c, at, glue)
	case 'A' <= c && c <= 'Z':
		n.emit(c+'a'-'A', at, glue)
	case c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' || c == '\r':
		n.sep(at, true)
	default:
		n.sep(at, false)
	}
}

// Fold kinds.
const (
	foldSep    = iota // a separator
	foldDrop          // nothing (zero-width, mark)
	foldLetter        // letters or digits, in b[:n]
)

// fold is what one rune becomes.
type fold struct {
	b        [6]byte
	n        uint8
	kind     uint8
	obf      bool // an obfuscator's rune (or, for foldDrop, a zero-width one)
	sentence bool // for foldSep: ends a sentence
}

// The fold of runes below tableEnd is computed once, on first use.
const tableEnd = 0x3000

var (
	foldOnce  sync.Once
	foldTable []fold
)

// foldOf returns the fold of a non-ASCII rune.
func foldOf(r rune) fold {
	if r < tableEnd {
		foldOnce.Do(buildFoldTable)
		return foldTable[r]
	}
	switch {
	case 0xFF01 <= r && r <= 0xFF5E: // full-width ASCII
		f := foldASCII(byte(r - 0xFEE0))
		f.obf = true
		return f
	case r == 0xFEFF || 0xFE00 <= r && r <= 0xFE0F || 0xE0000 <= r && r <= 0xE007F || 0xE0100 <= r && r <= 0xE01EF:
		return fold{kind: foldDrop, obf: true}
	case 0x3040 <= r && r <= 0x9FFF || 0xAC00 <= r && r <= 0xD7AF:
		// kana, CJK, hangul: letters, no case, no decomposition that matters
		var f fold
		f.kind = foldLetter
		f.n = uint8(utf8.EncodeRune(f.b[:], r))
		return f
	}
	return computeFold(r)
}

// foldASCII is the fold of an ASCII byte, as a fold.
func foldASCII(c byte) fold {
	switch {
	case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		return fold{b: [6]byte{c}, n: 1, kind: foldLetter}
	case 'A' <= c && c <= 'Z':
		return fold{b: [6]byte{c + 'a' - 'A'}, n: 1, kind: foldLetter}
	case c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' || c == '\r':
		return fold{kind: foldSep, sentence: true}
	}
	return fold{kind: foldSep}
}

func buildFoldTable() {
	t := make([]fold, tableEnd)
	for r := rune(0x80); r < tableEnd; r++ {
		t[r] = computeFold(r)
	}
	foldTable = t
}

// computeFold folds one non-ASCII rune.
func computeFold(r rune) fold {
	switch {
	case r == 0x00AD || 0x200B <= r && r <= 0x200D || 0x2060 <= r && r <= 0x2064 || r == 0x180E || r == 0xFEFF:
		return fold{kind: foldDrop, obf: true}
	case 0xFE00 <= r && r <= 0xFE0F:
		return fold{kind: foldDrop, obf: true}
	case r == 0x2028 || r == 0x2029 || r == 0x0085 || r == 0x3002 || r == 0xFF0E:
		return fold{kind: foldSep, sentence: true}
	case r == 'ß' || r == 'ẞ':
		return fold{b: [6]byte{'s', 's'}, n: 2, kind: foldLetter}
	}
	if c, ok := confusable[r]; ok {
		return fold{b: [6]byte{c}, n: 1, kind: foldLetter, obf: true}
	}
	if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
		return fold{kind: foldDrop}
	}
	var src [utf8.UTFMax]byte
	n := utf8.EncodeRune(src[:], r)
	var dk, dc [32]byte
	k := norm.NFKD.Append(dk[:0], src[:n]...)
	compat := string(k) != string(norm.NFD.Append(dc[:0], src[:n]...))
	var f fold
	for i := 0; i < len(k); {
		d, size := utf8.DecodeRune(k[i:])
		i += size
		if unicode.Is(unicode.Mn, d) {
			continue
		}
		d = unicode.ToLower(d)
		if c, ok := confusable[d]; ok {
			d = rune(c)
			compat = true
		}
		if !unicode.IsLetter(d) && !unicode.IsDigit(d) {
			continue
		}
		if int(f.n)+utf8.RuneLen(d) > len(f.b) {
			break
		}
		f.n += uint8(utf8.EncodeRune(f.b[f.n:], d))
	}
	if f.n == 0 {
		sentence := r == '…' || r == '。' || r == '¡' || r == '¿' || unicode.Is(unicode.Zl, r)
		return fold{kind: foldSep, sentence: sentence}
	}
	f.kind = foldLetter
	f.obf = compat
	return f
}

// confusable maps the Cyrillic, Greek, Armenian and phonetic letters that
// look like Latin ones (after lower-casing) to those Latin letters.
var confusable = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ү': 'y', 'ɡ': 'g', 'ѵ': 'v', 'ɑ': 'a',
	'А': 'a', 'В': 'b', 'Е': 'e', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o', 'Р': 'p', 'С': 'c',
	'Т': 't', 'У': 'y', 'Х': 'x', 'І': 'i', 'Ј': 'j', 'Ѕ': 's', 'Ү': 'y', 'Ԁ': 'd', 'Ԛ': 'q',
	'Ԝ': 'w', 'Һ': 'h', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p',
	'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w', 'η': 'n', 'ϲ': 'c', 'ϳ': 'j', 'ί': 'i', 'ό': 'o',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n',
	'Ο': 'o', 'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x', 'Ϲ': 'c',
	// Armenian
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g', 'զ': 'q',
	// Latin look-alikes and small capitals
	'ı': 'i', 'ȷ': 'j', 'ɩ': 'i', 'ʏ': 'y', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e',
	'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o',
	'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z',
}
