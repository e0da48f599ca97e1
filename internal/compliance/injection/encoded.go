package injection

import (
	"encoding/base64"
	"unicode"
	"unicode/utf8"
)

// Encoded payloads: base64 (standard or URL alphabet, padded or not) and hex
// (contiguous, \xHH or %HH escapes, space-separated pairs) blobs are decoded
// and, if they decode to text, scanned like the text itself, one level deeper
// (at most maxDepth levels). A hit in a payload is reported over the span of
// the encoded blob, with the payload's family in its rule
// ("encoded:base64+override") and a bonus: nobody encodes a harmless
// instruction to a model.
//
// Bounds: blobs of minBlob to maxBlob bytes, at most maxDecodeTries decode
// attempts per scanned text (all levels together), payloads that are not
// mostly printable text dropped.
const (
	minBlob        = 16
	maxBlob        = 8192
	maxDecodeTries = 24
	encodedBonus   = 1.0
	encodedFloor   = -0.5 // the least payload evidence reported
)

func (sc *scanner) encoded() {
	t := sc.text
	for i := 0; i < len(t) && sc.tries > 0; {
		c := t[i]
		switch {
		case c == '%' && i+2 < len(t) && isHex(t[i+1]) && isHex(t[i+2]),
			c == '\\' && i+3 < len(t) && t[i+1] == 'x' && isHex(t[i+2]) && isHex(t[i+3]):
			end := sc.escapedHex(i)
			if end > i {
				i = end
				continue
			}
		case isB64(c):
			j := i
			for j < len(t) && isB64(t[j]) {
				j++
			}
			pad := j
			for pad < len(t) && pad-j < 2 && t[pad] == '=' {
				pad++
			}
			if !sc.blob(i, j, pad) && isHex(c) {
				if end := sc.spacedHex(i); end > i {
					i = end
					continue
				}
			}
			i = pad
			continue
		}
		i++
	}
}

// blob tries text[i:j] (with padding up to pad) as hex, then base64. It
// reports whether it was tried.
func (sc *scanner) blob(i, j, pad int) bool {
	run := sc.text[i:j]
	if len(run) < minBlob || len(run) > maxBlob {
		return false
	}
	if i > 0 && (sc.text[i-1] == '/' || sc.text[i-1] == '.') && pad == j {
		// a path or a domain continues a word before it
		if !mixedCase(run) {
			return false
		}
	}
	if len(run)%2 == 0 && allHex(run) {
		sc.tries--
		buf := sc.decodeBuf(len(run) / 2)
		for k := range buf {
			buf[k] = unhex(run[2*k])<<4 | unhex(run[2*k+1])
		}
		if sc.payload(buf, encHex, i, j) {
			return true
		}
	}
	if !mixedCase(run) {
		return false
	}
	sc.tries--
	enc := base64.RawStdEncoding
	for k := 0; k < len(run); k++ {
		if run[k] == '-' || run[k] == '_' {
			enc = base64.RawURLEncoding
			break
		}
	}
	data := run
	if len(data)%4 == 1 {
		data = data[:len(data)-1]
	}
	sc.src = append(sc.src[:0], data...)
	buf := sc.decodeBuf(enc.DecodedLen(len(data)))
	n, err := enc.Decode(buf, sc.src)
	if err != nil {
		return true
	}
	sc.payload(buf[:n], encBase64, i, pad)
	return true
}

// escapedHex reads \xHH… or %HH… at text[i:] and scans it; it returns the
// end of the run, or i if it is too short.
func (sc *scanner) escapedHex(i int) int {
	t := sc.text
	prefix := t[i : i+1]
	if prefix == "\\" {
		prefix = t[i : i+2]
	}
	dec := sc.dec[:0]
	j := i
	for j+len(prefix)+2 <= len(t) && t[j:j+len(prefix)] == prefix && len(dec) < maxBlob {
		a, b := t[j+len(prefix)], t[j+len(prefix)+1]
		if !isHex(a) || !isHex(b) {
			break
		}
		dec = append(dec, unhex(a)<<4|unhex(b))
		j += len(prefix) + 2
		if prefix == "%" { // URL escapes mix with plain bytes
			for j < len(t) && t[j] > ' ' && t[j] != '%' && t[j] < 0x80 && len(dec) < maxBlob {
				dec = append(dec, t[j])
				j++
			}
		}
	}
	sc.dec = dec
	if len(dec) < minBlob/2 {
		return i
	}
	sc.tries--
	enc := encHex
	if prefix == "%" {
		enc = encURL
	}
	sc.payload(dec, enc, i, j)
	return j
}

// spacedHex reads space-separated hex pairs ("69 67 6e …") at text[i:].
func (sc *scanner) spacedHex(i int) int {
	t := sc.text
	pair := func(j int) bool {
		return j+2 <= len(t) && isHex(t[j]) && isHex(t[j+1]) && (j+2 == len(t) || t[j+2] == ' ' || t[j+2] == '\n')
	}
	n, j := 0, i
	for pair(j) && n < maxBlob {
		n++
		j += 3
	}
	if n < minBlob/2 {
		return i
	}
	dec := sc.decodeBuf(n)
	for k := range dec {
		at := i + 3*k
		dec[k] = unhex(t[at])<<4 | unhex(t[at+1])
	}
	sc.tries--
	sc.payload(dec, encHex, i, i+3*n-1)
	return min(j, len(t))
}

func (sc *scanner) decodeBuf(n int) []byte {
	if cap(sc.dec) < n {
		sc.dec = make([]byte, n, max(n, 512))
	}
	return sc.dec[:n]
}

// payload scans decoded bytes if they are text, and adds a hit over
// text[start:end] for the best evidence found in them. It reports whether
// the bytes were text.
func (sc *scanner) payload(data []byte, enc encoding, start, end int) bool {
	if !isText(data) {
		return false
	}
	if sc.inner == nil {
		sc.inner = new(scanner)
	}
	in := sc.inner
	in.tries = sc.tries
	in.scan(string(data), sc.depth+1)
	sc.tries = in.tries
	best := -1
	for k, h := range in.hits {
		if !h.support && (best < 0 || h.z > in.hits[best].z) { // "write" before a quote in a JWT's claims is no evidence
			best = k
		}
	}
	sc.trigrs += in.trigrs
	if best < 0 || in.hits[best].z < encodedFloor {
		return true
	}
	h := in.hits[best]
	inner := h.fam
	if inner == famEncoded {
		inner = h.inner
	}
	sc.addRaw(hit{start: start, end: end, z: h.z + encodedBonus, fam: famEncoded, enc: enc, inner: inner, raw: true})
	return true
}

// isText reports whether data is UTF-8 text with spaces between words:
// at least 8 bytes, 90 % printable, one space.
func isText(data []byte) bool {
	if len(data) < 8 || !utf8.Valid(data) {
		return false
	}
	printable, spaces, runes := 0, 0, 0
	for _, r := range string(data) {
		runes++
		switch {
		case r == ' ':
			spaces++
			printable++
		case r == '\n' || r == '\t' || r == '\r' || unicode.IsPrint(r):
			printable++
		}
	}
	return spaces > 0 && printable*10 >= runes*9
}

func isB64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func allHex(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
		digit = digit || s[i] <= '9'
	}
	return digit
}

// mixedCase reports whether s has an upper- and a lower-case letter, or a
// letter and a digit: base64 of text does; words and identifiers mostly do
// not.
func mixedCase(s string) bool {
	upper, lower, digit := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		}
	}
	return upper && lower || (upper || lower) && digit
}
