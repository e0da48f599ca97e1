package sqlstore

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Text a database cannot hold. A caller chooses some of what svc stores (a
// model name, the messages quoted in an error) and may send any bytes;
// PostgreSQL's text refuses NUL and invalid UTF-8. Text that is valid UTF-8
// without NUL is stored byte for byte. Otherwise:
//
//   - a text column holds the text with each NUL written \x00 and each byte
//     of invalid UTF-8 written \xHH, as a Go string literal writes them
//     (EscapeText): visible, and the same function applied to a query's
//     filter finds the row. It is not reversible: text that already held a
//     literal `\x00` is stored as is.
//   - a JSON column holds the document with each NUL written \u0000 (its
//     JSON escape: the document still decodes to the NUL the caller sent)
//     and each byte of invalid UTF-8 written \ufffd, the replacement
//     character, as encoding/json writes it (EscapeJSON).
//
// A row the database refuses even so (a database whose encoding is not
// UTF-8, a trigger) can be stored in its ASCII form: every non-ASCII
// character written \uXXXX (\UXXXXXXXX past the BMP) in a text column
// (ASCIIText) and \uXXXX (UTF-16 surrogate pairs past the BMP) in a JSON
// document, whose value is unchanged (ASCIIJSON).

// EscapeText writes NUL as \x00 and each byte of invalid UTF-8 as \xHH.
func EscapeText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) {
			b = appendHexByte(b, s[i])
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// EscapeJSON writes NUL as \u0000 and each byte of invalid UTF-8 as \ufffd.
func EscapeJSON(js []byte) []byte {
	if utf8.Valid(js) && bytes.IndexByte(js, 0) < 0 {
		return js
	}
	b := make([]byte, 0, len(js)+32)
	for i := 0; i < len(js); {
		r, n := utf8.DecodeRune(js[i:])
		switch {
		case r == 0:
			b = append(b, `\u0000`...)
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		default:
			b = append(b, js[i:i+n]...)
		}
		i += n
	}
	return b
}

// ASCIIText writes every non-ASCII character of s (valid UTF-8, as
// EscapeText leaves it) as \uXXXX or \UXXXXXXXX.
func ASCIIText(s string) string {
	if isASCII(s) {
		return s
	}
	b := make([]byte, 0, len(s)+32)
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
		case r <= 0xffff:
			b = append(b, `\u`...)
			b = appendHex(b, uint64(r), 4)
		default:
			b = append(b, `\U`...)
			b = appendHex(b, uint64(r), 8)
		}
	}
	return string(b)
}

// ASCIIJSON writes every non-ASCII character of js (valid UTF-8, as
// EscapeJSON leaves it) as JSON's \uXXXX, past the BMP as a surrogate pair.
func ASCIIJSON(js []byte) []byte {
	if isASCII(js) {
		return js
	}
	b := make([]byte, 0, len(js)+64)
	for _, r := range string(js) {
		if r < utf8.RuneSelf {
			b = append(b, byte(r))
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			b = append(b, `\u`...)
			b = appendHex(b, uint64(r1), 4)
			r = r2
		}
		b = append(b, `\u`...)
		b = appendHex(b, uint64(r), 4)
	}
	return b
}

func isASCII[T string | []byte](s T) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendHexByte appends \xHH.
func appendHexByte(b []byte, c byte) []byte {
	return appendHex(append(b, `\x`...), uint64(c), 2)
}

// appendHex appends v in lower-case hex, zero-padded to width digits.
func appendHex(b []byte, v uint64, width int) []byte {
	h := strconv.FormatUint(v, 16)
	for range width - len(h) {
		b = append(b, '0')
	}
	return append(b, h...)
}
