package secrets

import (
	"bytes"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// This file holds the detectors that need a key word next to the value:
// AWS secret access keys, high-entropy tokens and passwords.

// awsSecret finds AWS secret access keys: exactly 40 characters of
// [A-Za-z0-9/+], mixed case with a digit or '/' or '+', within 100 bytes
// after an AWS secret key name ("aws_secret_access_key", "SecretAccessKey",
// "secret access key", "AWS", the German, Spanish and French words for
// secret), after the bare word "secret" (or "clave", "clé") when an AWS word
// is within 200 bytes, or within 200 bytes of an access key ID found.
func (sc *scratch) awsSecret(text string, pats []string) {
	for _, hi := range sc.native[natAWSSecret] {
		h := sc.hits[hi]
		sc.aws40(text, int(h.end), min(len(text), int(h.end)+100), 0.9, awsGeneric[pats[h.pat]])
	}
	for i, n := 0, len(sc.found); i < n; i++ {
		if f := sc.found[i]; f.Type == detect.AWSAccessKey {
			sc.aws40(text, max(0, f.Start-200), min(len(text), f.End+200), 0.85, false)
		}
	}
}

// awsGeneric are the AWS secret key triggers that need an AWS word near.
var awsGeneric = map[string]bool{"secret": true, "clave": true, "clé": true}

// awsWords raise an AWS secret key's score, or are required, when near it.
var awsWords = []string{"aws", "amazon", "iam", "s3", "boto3", "akia", "asia", "sts"}

func (sc *scratch) aws40(text string, from, to int, score float64, needAWS bool) {
	for i := from; i < to; {
		if !isAWSChar(text[i]) {
			i++
			continue
		}
		j := runOf(text, i, isAWSChar)
		if j-i == 40 && (i == 0 || !isAWSChar(text[i-1])) && (j == len(text) || text[j] != '=') {
			tok := text[i:j]
			if awsShape(tok) && entropy(tok) > 3.5 && !placeholder(tok, sc.lower[i:j]) {
				near := detect.Near(text, i, j, 200, awsWords)
				if needAWS && !near {
					i = j
					continue
				}
				s := score
				if near {
					s = min(0.95, s+0.05)
				}
				sc.found = append(sc.found, detect.Finding{Type: detect.AWSSecretKey, Start: i, End: j, Score: s, Rule: "aws-secret"})
			}
		}
		i = j
	}
}

func isAWSChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '+'
}

// awsShape: upper and lower case letters and a digit, '/' or '+'.
func awsShape(s string) bool {
	var up, low, other bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			up = true
		case 'a' <= c && c <= 'z':
			low = true
		default:
			other = true
		}
	}
	return up && low && other
}

// connectors are the short words allowed between a key word and its value
// ("the token is …", "API key for me: …" is not: "for me" stops it).
var connectors = map[string]bool{
	"is": true, "was": true, "are": true, "be": true, "as": true, "my": true, "our": true, "your": true,
	"the": true, "a": true, "an": true, "to": true, "set": true, "here": true, "value": true, "equals": true,
	"now": true, "this": true, "that": true, "it": true, "s": true, "new": true, "use": true, "used": true,
	"following": true, "please": true, "will": true, "should": true, "must": true, "reads": true,
	"called": true, "named": true, "string": true, "header": true, "with": true, "using": true, "got": true,
	"has": true, "have": true, "me": true, "i": true, "we": true, "bearer": true, "token": true, "key": true,
	"basic": true, "of": false,
}

// keywordTokens finds high-entropy tokens right after a key word ("token",
// "secret", "key", "API key", "credentials", "Bearer", …): the first token
// of 16 characters or more after the word, with at most three connector
// words between, no more than one line break, within 64 bytes. The token
// must mix letters and digits and have enough entropy (3.0 bits a character
// for hex, 3.2 for tokens under 24 characters, 3.5 otherwise), and not be a
// UUID, a path or URL, a version, an npm integrity hash, an identifier in
// SCREAMING_SNAKE or snake case, or a placeholder. A token after a word with
// "api" is an API_KEY, otherwise a SECRET.
func (sc *scratch) keywordTokens(text string) {
	for _, hi := range sc.native[natKeyword] {
		h := sc.hits[hi]
		p, e := int(h.start), int(h.end)
		if !sc.wordEdges(text, p, e) || nonSecretKinds[string(sc.prevWord(p))] {
			continue
		}
		lines, words := 0, 0
		for i := e; i < len(text) && i-e <= 64; {
			c := text[i]
			if c == '\n' {
				if lines++; lines > 1 {
					break
				}
			}
			if !isTokenChar(c) {
				i++
				continue
			}
			j := runOf(text, i, isTokenChar)
			for k := 0; k < 3 && j < len(text) && text[j] == '='; k++ {
				j++ // base64 padding
			}
			if i == e && j > i+1 && (text[i] == '_' || text[i] == '-' || text[i] == '.') && isAlnum(text[i+1]) {
				i = j // the word is the head of a longer name ("KEY_PROD:")
				continue
			}
			if j-i >= 16 {
				sc.token(text, p, e, i, j)
				break
			}
			if words++; words > 3 || !connectors[string(sc.lower[i:j])] {
				break
			}
			i = j
		}
	}
}

// nonSecretKinds are words that, before "key" or "token", name something
// that is not a credential: "primary key", "page token", "public key".
var nonSecretKinds = map[string]bool{
	"public": true, "pub": true, "primary": true, "foreign": true, "partition": true, "sort": true,
	"composite": true, "unique": true, "natural": true, "surrogate": true, "cache": true, "hash": true,
	"idempotency": true, "dedup": true, "dedupe": true, "routing": true, "lookup": true, "index": true,
	"csrf": true, "xsrf": true, "page": true, "nextpage": true, "next": true, "cursor": true,
	"continuation": true, "pagination": true, "sync": true, "cancellation": true, "input": true,
	"output": true, "prompt": true, "completion": true, "max": true, "total": true, "bucket": true,
	"object": true, "map": true, "dict": true, "sequence": true, "schema": true, "musical": true,
}

// prevWord is the word (lower case letters) before position p, across one
// separator (space, '_', '-', '.') or a camel-case hump.
func (sc *scratch) prevWord(p int) []byte {
	e := p
	if e > 0 && (sc.lower[e-1] == ' ' || sc.lower[e-1] == '_' || sc.lower[e-1] == '-' || sc.lower[e-1] == '.') {
		e--
	}
	s := e
	for s > 0 && e-s < 16 && 'a' <= sc.lower[s-1] && sc.lower[s-1] <= 'z' {
		s--
	}
	return sc.lower[s:e]
}

// token judges the candidate text[i:j] after the key word text[p:e].
func (sc *scratch) token(text string, p, e, i, j int) {
	if strings.Contains(text[i:j], "...") {
		return // elided: "sk-ant-api03-Xy9..."
	}
	for i < j && (text[i] == '.' || text[i] == '-' || text[i] == '~') {
		i++
	}
	for j > i && (text[j-1] == '.' || text[j-1] == ',') {
		j--
	}
	tok, low := text[i:j], sc.lower[i:j]
	if len(tok) < 16 || len(tok) > 1024 || !tokenShape(tok, low) || placeholder(tok, low) {
		return
	}
	hex := true
	for k := 0; k < len(tok); k++ {
		if !isHex(tok[k]) {
			hex = false
			break
		}
	}
	need := 3.5
	switch {
	case hex:
		need = 3.0
	case len(tok) < 24:
		need = 3.2
	}
	if entropy(tok) < need {
		return
	}
	typ := detect.Secret
	if bytes.Contains(sc.lower[p:e], []byte("api")) || bytes.Contains(sc.lower[max(0, p-4):p], []byte("api")) {
		typ = detect.APIKey
	}
	score := 0.6
	if len(tok) >= 32 {
		score = 0.65
	}
	sc.found = append(sc.found, detect.Finding{Type: typ, Start: i, End: j, Score: score, Rule: "keyword-entropy"})
}

// tokenShape rejects what is not a credential however random it looks.
func tokenShape(tok string, low []byte) bool {
	var letter, digit, lowerC, upperC bool
	underscores := 0
	for k := 0; k < len(tok); k++ {
		switch c := tok[k]; {
		case 'a' <= c && c <= 'z':
			letter, lowerC = true, true
		case 'A' <= c && c <= 'Z':
			letter, upperC = true, true
		case '0' <= c && c <= '9':
			digit = true
		case c == '_':
			underscores++
		}
	}
	switch {
	case !letter || !digit:
		return false
	case isUUID(tok):
		return false
	case bytes.IndexByte(low, '/') >= 0 && (bytes.IndexByte(low, '.') >= 0 || low[0] == '/' || low[0] == '~'):
		return false // a path or URL
	case bytes.HasPrefix(low, []byte("sha1-")), bytes.HasPrefix(low, []byte("sha256-")),
		bytes.HasPrefix(low, []byte("sha384-")), bytes.HasPrefix(low, []byte("sha512-")):
		return false // npm/SRI integrity
	case isVersion(tok):
		return false
	case underscores >= 2 && !(lowerC && upperC):
		return false // SCREAMING_SNAKE or snake_case identifier
	case !lowerC && shortDashed(tok):
		return false // an algorithm or part name: AWS4-HMAC-SHA256, ECDHE-RSA-AES128-GCM-SHA256
	}
	return true
}

// shortDashed reports a token of two or more '-'-separated parts of at
// most 8 characters each.
func shortDashed(tok string) bool {
	parts, run := 1, 0
	for i := 0; i < len(tok); i++ {
		if tok[i] == '-' {
			parts++
			run = 0
			continue
		}
		if run++; run > 8 {
			return false
		}
	}
	return parts >= 2
}

// isTokenChar reports the characters of a token ('=' only as padding at
// its end, so "NAME=value" is two tokens).
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '_' || c == '-' || c == '.' || c == '~'
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isUUID reports the 8-4-4-4-12 hex shape.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isVersion reports a version string: v?digits.digits…
func isVersion(s string) bool {
	if s[0] == 'v' || s[0] == 'V' {
		s = s[1:]
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(s) && s[i] == '.' && '0' <= s[i+1] && s[i+1] <= '9'
}

// wordEdges reports whether the key word text[p:e] stands as a word: a
// non-letter or a camel-case hump on each side ("apiKey", "api_key",
// "KEY=", "tokens:"), not inside "monkey" or "tokenizer".
func (sc *scratch) wordEdges(text string, p, e int) bool {
	if p > 0 && isAlpha(sc.lower[p-1]) && !(isUpper(text[p]) && !isUpper(text[p-1])) {
		return false
	}
	if e < len(text) && isAlpha(sc.lower[e]) {
		if sc.lower[e] == 's' && (e+1 == len(text) || !isAlpha(sc.lower[e+1])) {
			return true
		}
		return isUpper(text[e]) && !isUpper(text[e-1])
	}
	return true
}

func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// passwords finds the value assigned to a password-like name:
// "password: …", "PASSWORD=…", "pwd => '…'", "the password is …",
// "Password=…;" in a connection string. The value (quoted, or up to a space,
// ';' or "&name=") must be 6–128 characters and have a digit or a symbol beside
// letters, and not be a placeholder or a variable reference.
func (sc *scratch) passwords(text string) {
	for _, hi := range sc.native[natPassword] {
		h := sc.hits[hi]
		p, e := int(h.start), int(h.end)
		if !sc.wordEdges(text, p, e) {
			continue
		}
		i := skipSpaceQuote(text, e)
		switch {
		case hasAt(text, i, ":="), hasAt(text, i, "=>"), hasAt(text, i, "->"):
			i += 2
		case i < len(text) && (text[i] == ':' || text[i] == '='):
			i++
		case hasWordAt(sc.lower, i, "is"):
			i += 2
		case hasWordAt(sc.lower, i, "was"):
			i += 3
		default:
			continue
		}
		if i < len(text) && text[i] == ':' {
			i++
		}
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		vs, ve := passwordValue(text, i)
		if ve-vs < 6 || ve-vs > 128 {
			continue
		}
		v, low := text[vs:ve], sc.lower[vs:ve]
		if !passwordShape(v) || placeholder(v, low) || entropy(v) < 2.5 {
			continue
		}
		sc.found = append(sc.found, detect.Finding{Type: detect.Secret, Start: vs, End: ve, Score: 0.75, Rule: "password"})
	}
}

// passwordValue is the span of the value starting at i: inside quotes, or
// up to whitespace, ';', a quote or the next "&name=", less closing
// punctuation.
func passwordValue(text string, i int) (int, int) {
	if i >= len(text) {
		return i, i
	}
	if q := text[i]; q == '"' || q == '\'' || q == '`' {
		j := i + 1
		for j < len(text) && j-i <= 130 && text[j] != q && text[j] != '\n' {
			j++
		}
		if j < len(text) && text[j] == q {
			return i + 1, j
		}
		return i, i
	}
	j := i
	for j < len(text) && j-i <= 130 && !isSpace(text[j]) && text[j] != ';' && !queryNext(text, j) &&
		text[j] != '"' && text[j] != '\'' && text[j] != '`' {
		j++
	}
	for j > i && isClosing(text[j-1]) {
		j--
	}
	return i, j
}

// passwordShape: letters plus a digit or a symbol (other than _ - .), no
// call or reference syntax.
func passwordShape(v string) bool {
	var letter, digitOrSym bool
	for k := 0; k < len(v); k++ {
		switch c := v[k]; {
		case isAlpha(c):
			letter = true
		case '0' <= c && c <= '9':
			digitOrSym = true
		case c == '(' || c == '[' || c == '{' || c == '<':
			return false
		case c == '_' || c == '-' || c == '.':
		case c < 0x80:
			digitOrSym = true
		}
	}
	return letter && digitOrSym
}

// queryNext reports whether text[j] is '&' starting a query parameter
// ("&user=").
func queryNext(text string, j int) bool {
	if text[j] != '&' {
		return false
	}
	k := j + 1
	for k < len(text) && (isWord(text[k]) || text[k] == '.') {
		k++
	}
	return k > j+1 && k < len(text) && text[k] == '='
}

func skipSpaceQuote(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '"' || text[i] == '\'') {
		i++
	}
	return i
}

func hasAt(text string, i int, s string) bool {
	return i+len(s) <= len(text) && text[i:i+len(s)] == s
}

func hasWordAt(low []byte, i int, w string) bool {
	return i+len(w) <= len(low) && string(low[i:i+len(w)]) == w && (i+len(w) == len(low) || !isAlpha(low[i+len(w)]))
}

// dropDataURIs removes findings inside the payload of a base64 data: URI
// (an image or file inlined in the text is not a credential; its random
// bytes only look like one).
func (sc *scratch) dropDataURIs(text string) {
	for _, hi := range sc.native[natDataURI] {
		s := int(sc.hits[hi].end)
		e := runOf(text, s, isB64)
		kept := sc.found[:0]
		for _, f := range sc.found {
			if f.Start >= s && f.Start < e {
				continue
			}
			kept = append(kept, f)
		}
		sc.found = kept
	}
}
