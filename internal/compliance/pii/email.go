package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

var emailWords = newWordSet("email", "e-mail", "mail", "mailto", "contact", "reach", "write", "from", "to", "cc")

// notTLDs are file extensions that follow an '@' in asset names
// ("icon@2x.png") and in package specifiers, never top-level domains
// people write.
var notTLDs = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "ico": true,
	"bmp": true, "tif": true, "tiff": true, "css": true, "js": true, "mjs": true, "ts": true,
	"tsx": true, "jsx": true, "map": true, "json": true, "lock": true, "tgz": true, "gz": true,
	"zip": true, "html": true, "htm": true, "txt": true, "yaml": true, "yml": true, "toml": true,
	"xml": true, "java": true, "class": true, "jar": true, "whl": true, "exe": true, "dll": true, "wasm": true,
	"woff": true, "woff2": true, "ttf": true, "mp3": true, "mp4": true,
	"pdf": true, "csv": true, "scss": true, "vue": true, "svelte": true, "rb": true,
	"kt": true, "swift": true, "h": true, "c": true, "cpp": true,
}

// localByte reports whether c may be in an e-mail's local part (the
// common subset of RFC 5322's atext, and '.').
func localByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c == '\'' || c >= 0x80
}

func domainByte(c byte) bool { return isAlnum(c) || c == '-' || c == '.' || c >= 0x80 }

// scanEmails finds e-mail addresses around each '@': a local part, a
// domain of at least two labels and an alphabetic top-level domain of two
// or more letters. Package specifiers (@scope/pkg@1.2.3), asset names
// (icon@2x.png), user@host without a dot and git's ssh form
// (git@github.com:org/repo) are not addresses.
func scanEmails(text string, dst []detect.Finding) []detect.Finding {
	from := 0
	for from < len(text) {
		k := strings.IndexByte(text[from:], '@')
		if k < 0 {
			break
		}
		at := from + k
		from = at + 1
		start := at
		for start > 0 && at-start < 64 && localByte(text[start-1]) {
			start--
		}
		start = trimLocal(text, start, at)
		if start == at {
			continue
		}
		end := at + 1
		for end < len(text) && end-at < 256 && domainByte(text[end]) {
			end++
		}
		end = trimDomain(text, at+1, end)
		if end <= at+1 {
			continue
		}
		dom := text[at+1 : end]
		tld := dom[strings.LastIndexByte(dom, '.')+1:]
		if !strings.Contains(dom, ".") || !validDomain(dom) || !alphaTLD(tld) || notTLDs[strings.ToLower(tld)] {
			continue
		}
		if first := dom[:strings.IndexByte(dom, '.')]; len(first) >= 2 && first[len(first)-1] == 'x' && isDigit(first[0]) {
			continue // icon@2x.png
		}
		if end < len(text) && text[end] == ':' && text[start:at] == "git" {
			continue
		}
		if urlUserinfo(text, start) {
			continue
		}
		score := 0.95
		if near(text, start, end, 32, emailWords) {
			score = 0.99
		}
		dst = append(dst, finding(detect.Email, start, end, score, "email"))
		from = end
	}
	return dst
}

// trimLocal moves start past bytes that cannot begin a local part (dots,
// quotes, a broken UTF-8 sequence, a non-letter rune) and returns it.
func trimLocal(text string, start, at int) int {
	for start < at {
		c := text[start]
		if c == '.' || c == '\'' || c == '-' || c == '+' {
			start++
			continue
		}
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(text[start:at])
			if r == utf8.RuneError || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				start += max(n, 1)
				continue
			}
		}
		break
	}
	// A non-letter rune inside the local part (a dash or a quote mark
	// written in UTF-8) ends it: keep what follows it.
	for i := start; i < at; {
		if text[i] < 0x80 {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:at])
		if r == utf8.RuneError || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			start = i + max(n, 1)
		}
		i += max(n, 1)
	}
	if start < at && text[at-1] == '.' {
		return at // "john.@x.com" is not an address
	}
	return start
}

// trimDomain returns the end of the domain that starts at from: it stops
// at a non-letter rune and drops trailing dots and dashes.
func trimDomain(text string, from, end int) int {
	for i := from; i < end; {
		if text[i] < 0x80 {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:end])
		if r == utf8.RuneError || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			end = i
			break
		}
		i += n
	}
	for end > from && (text[end-1] == '.' || text[end-1] == '-') {
		end--
	}
	return end
}

// validDomain reports whether every label of dom is non-empty, at most 63
// bytes and neither starts nor ends with a dash.
func validDomain(dom string) bool {
	for dom != "" {
		i := strings.IndexByte(dom, '.')
		label := dom
		if i >= 0 {
			label, dom = dom[:i], dom[i+1:]
		} else {
			dom = ""
		}
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
	}
	return true
}

// alphaTLD reports whether tld is two or more letters (a UTF-8 letter
// counts) or an IDN "xn--" label.
func alphaTLD(tld string) bool {
	if strings.HasPrefix(tld, "xn--") && len(tld) > 4 {
		return true
	}
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if !isLetter(tld[i]) && tld[i] < 0x80 {
			return false
		}
	}
	return true
}

// urlUserinfo reports whether the local part starting at start is the
// user-information part of a URL ("postgres://app:secret@db.host"): the
// token it is in holds "://" before it.
func urlUserinfo(text string, start int) bool {
	for i := start - 1; i >= 2 && start-i < 256; i-- {
		c := text[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '"' || c == '\'' || c == '<' || c == '(' {
			return false
		}
		if c == '/' && text[i-1] == '/' && text[i-2] == ':' {
			return true
		}
	}
	return false
}
