package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// This file holds the detectors that validate structure rather than match
// a pattern: private-key blocks, JWTs and URLs with a password.

// runNative runs the native detectors woken by keyword hits, then drops
// findings inside base64 data: URIs.
func (e *engine) runNative(sc *scratch, text string) {
	sc.pem(text)
	sc.jwt(text)
	sc.urls(text)
	sc.awsSecret(text, e.pats)
	sc.keywordTokens(text)
	sc.passwords(text)
	sc.dropDataURIs(text)
}

// pemHead is a private-key block's first line (gitleaks' private-key rule
// without the body).
var pemHead = regexp.MustCompile(`(?i)^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)

// maxPEM bounds how far after a header the END line is looked for.
const maxPEM = 64 << 10

// pem finds private-key blocks: from BEGIN through the END line's closing
// dashes, or, when the END line is missing (a truncated paste), through the
// last line of the base64 body. The body must hold at least 64 base64
// characters, most of what it holds: "-----BEGIN PRIVATE KEY-----
// <your key> -----END PRIVATE KEY-----" is a placeholder.
func (sc *scratch) pem(text string) {
	last := 0
	for _, hi := range sc.native[natPEM] {
		p := int(sc.hits[hi].start)
		if p < last {
			continue
		}
		loc := pemHead.FindStringIndex(text[p:min(len(text), p+160)])
		if loc == nil {
			continue
		}
		bodyStart := p + loc[1]
		end, bodyEnd, score := 0, 0, 0.99
		limit := min(len(text), bodyStart+maxPEM)
		if k := bytes.Index(sc.lower[bodyStart:limit], []byte("-----end")); k >= 0 {
			bodyEnd = bodyStart + k
			end = bodyEnd + len("-----end")
			if c := bytes.Index(sc.lower[end:min(len(text), end+128)], []byte("-----")); c >= 0 && !bytes.ContainsAny(sc.lower[end:end+c], "\n") {
				end += c + len("-----")
			}
		} else {
			bodyEnd = pemBodyEnd(text, bodyStart, limit)
			end, score = bodyEnd, 0.9
		}
		if !pemBody(text[bodyStart:bodyEnd]) {
			continue
		}
		sc.found = append(sc.found, detect.Finding{Type: detect.PrivateKey, Start: p, End: end, Score: score, Rule: "pem"})
		last = end
	}
}

// pemBodyEnd is where a block without an END line stops: at the first
// character that cannot be in a PEM body, or a blank line.
func pemBodyEnd(text string, from, limit int) int {
	end := from
	for i := from; i < limit; i++ {
		c := text[i]
		if c == '\n' && i+1 < limit && (text[i+1] == '\n' || text[i+1] == '\r' && i+2 < limit && text[i+2] == '\n') {
			break
		}
		if !isB64(c) && !isSpace(c) && c != '\\' && c != ':' && c != ',' && c != '-' {
			break
		}
		if !isSpace(c) {
			end = i + 1
		}
	}
	return end
}

// pemBody reports whether body looks like key material: 64 or more base64
// characters that make up most of it.
func pemBody(body string) bool {
	b64, other := 0, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case isB64(c):
			b64++
		case isSpace(c), c == '\\':
		default:
			other++
		}
	}
	return b64 >= 64 && other*5 < b64 && !strings.Contains(body, "...") && !strings.Contains(body, "\u2026")
}

func isB64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

func isB64URL(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// maxJWTPart bounds a JWT header that is decoded.
const maxJWTPart = 1024

// jwt finds JSON Web Tokens: three base64url parts (the signature may be
// empty) whose header decodes to a JSON object with "alg" and whose payload
// decodes to a JSON object.
func (sc *scratch) jwt(text string) {
	last := 0
	for _, hi := range sc.native[natJWT] {
		p := int(sc.hits[hi].start)
		if p < last || p > 0 && (isB64URL(text[p-1]) || text[p-1] == '.') {
			continue
		}
		h := runOf(text, p, isB64URL)
		if h >= len(text) || text[h] != '.' || h-p < 10 {
			continue
		}
		pl := runOf(text, h+1, isB64URL)
		if pl-(h+1) < 4 || pl >= len(text) || text[pl] != '.' {
			continue
		}
		end := runOf(text, pl+1, isB64URL)
		for end < len(text) && text[end] == '=' {
			end++
		}
		if !sc.jsonPart(text[p:h], true) || !sc.jsonPart(text[h+1:pl], false) {
			continue
		}
		if placeholder(text[p:end], sc.lower[p:end]) {
			continue
		}
		sc.found = append(sc.found, detect.Finding{Type: detect.JWT, Start: p, End: end, Score: 0.92, Rule: "jwt"})
		last = end
	}
}

// jsonPart reports whether part base64url-decodes to a JSON object (with
// "alg" when header); a payload longer than the buffer is only checked to
// start like one.
func (sc *scratch) jsonPart(part string, header bool) bool {
	part = strings.TrimRight(part, "=")
	if len(part) > maxJWTPart {
		if header {
			return false
		}
		part = part[:maxJWTPart/4*4]
	}
	n, err := base64.RawURLEncoding.Decode(sc.b64[:], []byte(part))
	if err != nil && !(len(part) == maxJWTPart/4*4 && !header) {
		return false
	}
	dec := bytes.TrimSpace(sc.b64[:n])
	if len(dec) == 0 || dec[0] != '{' {
		return false
	}
	if !header {
		return true
	}
	return json.Valid(dec) && bytes.Contains(dec, []byte(`"alg"`))
}

func runOf(text string, from int, in func(byte) bool) int {
	i := from
	for i < len(text) && in(text[i]) {
		i++
	}
	return i
}

// dbSchemes are URL schemes of databases and brokers (the part before any
// "+", as in "postgresql+psycopg2" or "mongodb+srv").
var dbSchemes = map[string]bool{
	"postgres": true, "postgresql": true, "postgis": true, "pgsql": true, "timescale": true, "cockroachdb": true,
	"cockroach": true, "redshift": true, "mysql": true, "mysql2": true, "mysqlx": true, "mariadb": true,
	"tidb": true, "mongodb": true, "mongo": true, "redis": true, "rediss": true, "valkey": true,
	"memcached": true, "amqp": true, "amqps": true, "mssql": true, "sqlserver": true, "oracle": true,
	"db2": true, "clickhouse": true, "couchdb": true, "couchbase": true, "couchbases": true, "neo4j": true,
	"bolt": true, "cassandra": true, "scylla": true, "elasticsearch": true, "opensearch": true,
	"influxdb": true, "snowflake": true, "vertica": true, "presto": true, "trino": true, "hive": true,
	"sybase": true, "firebird": true, "nats": true, "kafka": true, "mqtt": true, "mqtts": true,
	"stomp": true, "rabbitmq": true, "ldap": true, "ldaps": true,
}

// credSchemes are other schemes whose user:password@ is a credential.
var credSchemes = map[string]bool{
	"http": true, "https": true, "ftp": true, "ftps": true, "sftp": true, "ssh": true, "smtp": true,
	"smtps": true, "imap": true, "imaps": true, "pop3": true, "pop3s": true, "git": true, "svn": true,
	"ws": true, "wss": true, "socks5": true, "socks5h": true, "socks": true,
}

// placeholderPasswords are passwords in documentation URLs.
var placeholderPasswords = map[string]bool{
	"password": true, "pass": true, "passwd": true, "pwd": true, "pw": true, "secret": true,
	"changeme": true, "mypassword": true, "yourpassword": true, "your_password": true, "user": true,
	"username": true, "xxx": true, "****": true, "***": true, "...": true, "p": true, "x": true,
	"pass123": true, "password123": true, "mysecretpassword": true, "dbpassword": true, "db_password": true,
	"example": true, "token": true, "apikey": true, "api_key": true, "key": true, "change-me": true,
	"change_me": true,
}

// urls finds URLs with a password in their user info:
// scheme://user:password@host… for a database or broker scheme
// (DATABASE_URL, the whole URL as the span) or another scheme (SECRET). A
// URL with a user but no password, an empty password or a placeholder one
// ("password", "<password>", "${DB_PASS}", "****") is not a secret.
func (sc *scratch) urls(text string) {
	last := 0
	for _, hi := range sc.native[natURL] {
		p := int(sc.hits[hi].start)
		if p < last {
			continue
		}
		s := p
		for s > 0 && p-s < 40 && isSchemeChar(text[s-1]) {
			s--
		}
		if s == p {
			continue
		}
		if s >= 5 && string(sc.lower[s-5:s]) == "jdbc:" {
			s -= 5
		}
		base := sc.lower[s:p]
		if bytes.HasPrefix(base, []byte("jdbc:")) {
			base = base[len("jdbc:"):]
		}
		if i := bytes.IndexByte(base, '+'); i > 0 {
			base = base[:i]
		}
		typ, score := detect.DatabaseURL, 0.95
		switch {
		case dbSchemes[string(base)]:
		case credSchemes[string(base)]:
			typ, score = detect.Secret, 0.8
		default:
			continue
		}
		end := p + 3
		for end < len(text) && end-p < 2048 && isURLChar(text[end]) {
			end++
		}
		for end > p+3 && isClosing(text[end-1]) {
			end--
		}
		rest := text[p+3 : end]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			slash = len(rest)
		}
		at := strings.LastIndexByte(rest[:slash], '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(rest[:at], ':')
		if colon < 0 {
			continue
		}
		pw := rest[colon+1 : at]
		if pw == "" || placeholderPassword(pw, sc.lower[p+3+colon+1:p+3+at]) {
			continue
		}
		sc.found = append(sc.found, detect.Finding{Type: typ, Start: s, End: end, Score: score, Rule: "url-password"})
		last = end
	}
}

func isSchemeChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
}

// isURLChar reports whether c may be part of a URL as written in text.
func isURLChar(c byte) bool {
	switch c {
	case '"', '\'', '`', '<', '>', '\\':
		return false
	}
	return c > ' ' && c != 0x7f
}

// placeholderPassword reports whether a URL's password is a placeholder.
func placeholderPassword(pw string, low []byte) bool {
	if placeholderPasswords[string(low)] {
		return true
	}
	switch pw[0] {
	case '<', '{', '[', '$', '%', '*':
		return true
	}
	// Not placeholder(): a weak password ("changeme123") in a URL is still
	// a working credential.
	return bytes.Contains(low, []byte("password")) || bytes.Contains(low, []byte("xxx")) ||
		bytes.Contains(low, []byte("your")) || bytes.Contains(low, []byte("${")) ||
		bytes.Contains(low, []byte("{{")) || bytes.Contains(low, []byte("***")) ||
		bytes.Contains(low, []byte("...")) || bytes.Contains(low, []byte("\u2026"))
}
