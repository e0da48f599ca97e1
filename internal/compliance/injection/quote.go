package injection

// Quotation marks: a hit between them is talked about, not meant (see
// discount), unless they hold a field's value in data.

// quoted reports whether text[start:end] sits between quotation marks on
// its line: a quotation opened before start (marks paired from the line's
// start, at most quoteLook bytes back) and a mark after end on the line.
// "Check 'this.' Now do that 'x'" does not quote "Now do that": the first
// pair closes before it.
func (sc *scanner) quoted(start, end int) bool {
	const reach = 120
	from := start
	for from > 0 && start-from < quoteLook && sc.text[from-1] != '\n' {
		from--
	}
	open, last := false, -1 // last: where the open quotation began
	for i := from; i < start; i++ {
		if c := sc.text[i]; c != '"' && c != '`' && c != '\'' && c != 0xE2 && c != 0xC2 {
			continue // the common case, kept out of quoteKind
		}
		switch q := quoteKind(sc.text, i); {
		case q == quoteToggle:
			open, last = !open, i
		case q == quoteOpen && !open, q == quoteEither && !open:
			open, last = true, i
		case q == quoteClose && open, q == quoteEither && open:
			open = false
		}
	}
	if !open || start-last > reach || fieldValue(sc.text, last) {
		return false
	}
	for i := end; i < len(sc.text) && i < end+reach; i++ {
		c := sc.text[i]
		if c == '\n' {
			break
		}
		if isQuoteAt(sc.text, i, false) {
			return true
		}
	}
	return false
}

// fieldValue reports whether the quotation mark at s[q] opens a field's
// value in data — {"note": "…"}, note='…', note="…" — rather than a
// quotation: a tool's output is not a mention.
func fieldValue(s string, q int) bool {
	i := q - 1
	for i >= 0 && (s[i] == ' ' || s[i] == '\t') {
		i--
	}
	if i < 0 {
		return false
	}
	switch s[i] {
	case '=':
		return true
	case ':':
		return i > 0 && (s[i-1] == '"' || s[i-1] == '\'')
	}
	return false
}

// quoteLook bounds how far back quoted pairs quotation marks.
const quoteLook = 1024

// Kinds of quotation mark (quoteKind).
const (
	quoteNone   = iota
	quoteToggle // ", `: opens or closes
	quoteOpen   // “ „ « ‹, an apostrophe before a word
	quoteClose  // ” » ›, an apostrophe after a word
	quoteEither // an apostrophe between spaces or punctuation
)

// quoteKind is the kind of quotation mark at s[i]; an apostrophe inside a
// word ("don't") is none.
func quoteKind(s string, i int) int {
	switch c := s[i]; c {
	case '"', '`':
		return quoteToggle
	case '\'':
		return apostrophe(i > 0 && isWordByte(s[i-1]), i+1 < len(s) && isWordByte(s[i+1]))
	case 0xE2:
		if i+2 < len(s) && s[i+1] == 0x80 {
			switch s[i+2] {
			case 0x9C, 0x9E, 0xB9: // “ „ ‹
				return quoteOpen
			case 0x9D, 0xBA: // ” ›
				return quoteClose
			case 0x98: // ‘
				return quoteOpen
			case 0x99: // ’
				return apostrophe(i > 0 && isWordByte(s[i-1]), i+3 < len(s) && isWordByte(s[i+3]))
			}
		}
	case 0xC2:
		if i+1 < len(s) {
			switch s[i+1] {
			case 0xAB: // «
				return quoteOpen
			case 0xBB: // »
				return quoteClose
			}
		}
	}
	return quoteNone
}

// apostrophe is the kind of an apostrophe after and before a word byte or
// not.
func apostrophe(afterWord, beforeWord bool) int {
	switch {
	case afterWord && beforeWord:
		return quoteNone
	case beforeWord:
		return quoteOpen
	case afterWord:
		return quoteClose
	}
	return quoteEither
}

// isQuoteAt reports whether a quotation mark starts at s[i]: ", `, the
// typographic quotes and guillemets, or an apostrophe on a word's outer edge
// (opening: not after a letter; closing: not before one).
func isQuoteAt(s string, i int, opening bool) bool {
	switch c := s[i]; c {
	case '"', '`':
		return true
	case '\'':
		if opening {
			return i == 0 || !isWordByte(s[i-1])
		}
		return i+1 >= len(s) || !isWordByte(s[i+1])
	case 0xE2: // “ ” „ ‘ ’ ‹ ›: E2 80 9C/9D/9E/98/99, E2 80 B9/BA
		if i+2 < len(s) && s[i+1] == 0x80 {
			switch s[i+2] {
			case 0x9C, 0x9D, 0x9E, 0x98, 0x99, 0xB9, 0xBA:
				return true
			}
		}
	case 0xC2: // « »
		if i+1 < len(s) && (s[i+1] == 0xAB || s[i+1] == 0xBB) {
			return true
		}
	}
	return false
}
