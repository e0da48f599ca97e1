package secrets

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	ahocorasick "github.com/BobuSumisu/aho-corasick"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Detector finds secrets in text. It implements detect.Detector; the zero
// value is not usable: call New.
type Detector struct {
	e *engine
}

var _ detect.Detector = (*Detector)(nil)

// Stats describes the compiled rule set.
type Stats struct {
	// GitleaksRules and OwnRules count the rules in gitleaks.toml and
	// svc.toml; Running the rules compiled and run.
	GitleaksRules, OwnRules, Running int
	// Skipped lists the gitleaks rules not run because Go's regexp cannot
	// compile them or because they apply to file paths only; Replaced those
	// a native detector of this package stands in for.
	Skipped, Replaced []Skip
	// Patterns is the number of patterns run: a rule whose pattern is an
	// alternation of unrelated shapes runs as one pattern per alternative.
	Patterns int
	// Prefix, Assign and Full count the patterns by how they are run:
	// anchored at a literal prefix, in windows around an assignment, or over
	// the whole text.
	Prefix, Assign, Full int
	// Required counts the patterns run in windows around a literal every
	// match holds.
	Required int
	// Keywords is the number of distinct prefilter keywords.
	Keywords int
	// Build is how long parsing and compiling took (once per process).
	Build time.Duration
}

var (
	sharedOnce sync.Once
	shared     *engine
	sharedErr  error
)

// New returns a Detector over the embedded rules. The rules are parsed and
// compiled once per process, on the first call; every Detector shares them.
func New() (*Detector, error) {
	sharedOnce.Do(func() { shared, sharedErr = build() })
	if sharedErr != nil {
		return nil, sharedErr
	}
	return &Detector{e: shared}, nil
}

// MustNew is New for callers that cannot go on without the detector; it
// panics only if the embedded rule files are broken, which the package's
// tests rule out.
func MustNew() *Detector {
	d, err := New()
	if err != nil {
		panic(err)
	}
	return d
}

// Name is the detector family's name.
func (d *Detector) Name() string { return "secrets" }

// Stats describes the rule set.
func (d *Detector) Stats() Stats { return d.e.stats }

// native detectors fed by keyword hits.
const (
	natPEM = iota
	natJWT
	natURL
	natAWSSecret
	natKeyword
	natPassword
	natDataURI
	natCount
)

// nativeKeywords are the words (lower case) that wake the native detectors.
var nativeKeywords = [natCount][]string{
	natPEM: {"-----begin"},
	natJWT: {"eyj"},
	natURL: {"://"},
	natAWSSecret: {"aws_secret_access_key", "secret_access_key", "secretaccesskey", "aws_secret_key",
		"aws_secret", "aws secret", "secret access key", "secret key", "secret_key", "secretkey",
		"aws", "secreta", "secrète", "secrete", "geheim", "secret", "clave", "clé"},
	natKeyword: {"key", "keys", "token", "secret", "apikey", "api_key", "api-key", "credential", "credentials",
		"bearer", "auth", "authorization", "passphrase", "client_secret"},
	natPassword: {"password", "passwd", "pwd", "passphrase", "passcode", "passwort", "kennwort",
		"contraseña", "contrasena", "mot de passe", "senha", "wachtwoord"},
	natDataURI: {";base64,"},
}

type engine struct {
	rs   *ruleSet
	trie *ahocorasick.Trie
	pats []string // AC pattern id → keyword
	// targets maps an AC pattern id to what it wakes: a rule index (its
	// keyword), anchorBase + a rule index (the name literal of an assignment
	// rule), or -1-native.
	targets [][]int32
	stop    []*ahocorasick.Trie
	stats   Stats
}

func build() (*engine, error) {
	start := time.Now()
	rs, err := loadRules()
	if err != nil {
		return nil, err
	}
	e := &engine{rs: rs}
	ids := map[string]int{}
	addKW := func(k string, t int32) {
		id, ok := ids[k]
		if !ok {
			id = len(e.pats)
			ids[k] = id
			e.pats = append(e.pats, k)
			e.targets = append(e.targets, nil)
		}
		if !slices.Contains(e.targets[id], t) {
			e.targets[id] = append(e.targets[id], t)
		}
	}
	for i, kws := range rs.keywords {
		for _, k := range kws {
			addKW(k, int32(i))
		}
	}
	for i, r := range rs.rules {
		for _, a := range r.anchors {
			addKW(a, anchorBase+int32(i))
		}
	}
	for n, kws := range nativeKeywords {
		for _, k := range kws {
			addKW(k, int32(-1-n))
		}
	}
	e.trie = ahocorasick.NewTrieBuilder().AddStrings(e.pats).Build()
	// Stop-word tries, one per allowlist that has stop words; the
	// allowlist keeps its index.
	for _, al := range rs.global {
		e.indexStops(al)
	}
	for _, r := range rs.rules {
		for _, al := range r.allow {
			e.indexStops(al)
		}
	}
	st := Stats{GitleaksRules: rs.gitleaksN, OwnRules: rs.ownN, Running: rs.running, Patterns: len(rs.rules),
		Skipped: rs.skipped, Replaced: rs.replaced, Keywords: len(e.pats)}
	for _, r := range rs.rules {
		switch r.mode {
		case modePrefix:
			st.Prefix++
		case modeRequired:
			st.Required++
		case modeAssign:
			st.Assign++
		default:
			st.Full++
		}
	}
	st.Build = time.Since(start)
	e.stats = st
	return e, nil
}

func (e *engine) indexStops(al *allowlist) {
	if len(al.stopwords) == 0 {
		return
	}
	al.stopIdx = len(e.stop)
	e.stop = append(e.stop, ahocorasick.NewTrieBuilder().AddStrings(al.stopwords).Build())
}

// hit is one keyword occurrence in the lower-cased text.
type hit struct {
	start, end int32
	pat        int32
}

// scratch is the per-call working memory, pooled.
type scratch struct {
	lower  []byte
	hits   []hit
	active []bool
	opAt   []int32 // per hit: assignment operator position, -1 none, -2 unknown
	cands  []int32
	wins   [][2]int
	found  []detect.Finding
	native [natCount][]int32 // hit indices per native detector
	// lineCache holds line-target allowlist verdicts of this call.
	lineCache []lineVerdict
	b64       [1024]byte
}

// anchorBase marks a target as an assignment rule's name literal.
const anchorBase = 1 << 20

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled bounds the memory a pooled scratch keeps after a large input.
const maxPooled = 1 << 20

// Detect appends the secrets in text to dst. Each finding's span is the
// secret itself (the value, not its key name), except for private keys
// (the whole block), JWTs (the whole token) and database URLs (the whole
// URL).
func (d *Detector) Detect(text string, dst []detect.Finding) []detect.Finding {
	if len(text) == 0 || len(text) > math.MaxInt32 {
		return dst
	}
	e := d.e
	sc := scratchPool.Get().(*scratch)
	defer func() {
		if cap(sc.lower) <= maxPooled && cap(sc.hits) <= maxPooled {
			scratchPool.Put(sc)
		}
	}()
	if !e.scan(sc, text) {
		return dst
	}
	e.runRules(sc, text, false)
	e.runNative(sc, text)
	sc.found = detect.Settle(sc.found)
	return append(dst, sc.found...)
}

// scan lower-cases text, finds the keywords in one Aho-Corasick pass and
// marks the rules and native detectors they wake. It reports whether any
// keyword occurs.
func (e *engine) scan(sc *scratch, text string) bool {
	sc.reset(len(e.rs.rules))
	sc.lower = asciiLower(sc.lower[:0], text)
	e.trie.Walk(sc.lower, func(end, n, pat int64) bool {
		sc.hits = append(sc.hits, hit{start: int32(end - n + 1), end: int32(end + 1), pat: int32(pat)})
		return true
	})
	if len(sc.hits) == 0 {
		return false
	}
	for i, h := range sc.hits {
		for _, t := range e.targets[h.pat] {
			if t >= anchorBase {
				continue
			}
			if t >= 0 {
				sc.active[t] = true
			} else if n := -1 - t; len(sc.native[n]) == 0 || sc.native[n][len(sc.native[n])-1] != int32(i) {
				sc.native[n] = append(sc.native[n], int32(i))
			}
		}
	}
	sc.opAt = slices.Grow(sc.opAt[:0], len(sc.hits))[:len(sc.hits)]
	for i := range sc.opAt {
		sc.opAt[i] = -2
	}
	return true
}

// runRules runs every rule a keyword woke. naive runs each over the whole
// text, as gitleaks does (tests compare the two).
func (e *engine) runRules(sc *scratch, text string, naive bool) {
	for ri, r := range e.rs.rules {
		if !sc.active[ri] {
			continue
		}
		switch {
		case naive || r.mode == modeFull:
			for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
				e.emit(sc, r, text, m, 0)
			}
		case r.mode == modePrefix:
			e.runPrefix(sc, r, text)
		case r.mode == modeRequired:
			e.runRequired(sc, r, text)
		default:
			e.runAssign(sc, ri, r, text)
		}
	}
}

func (sc *scratch) reset(rules int) {
	sc.hits = sc.hits[:0]
	sc.found = sc.found[:0]
	clear(sc.lineCache) // drop the allowlist pointers
	sc.lineCache = sc.lineCache[:0]
	if cap(sc.active) < rules {
		sc.active = make([]bool, rules)
	}
	sc.active = sc.active[:rules]
	clear(sc.active)
	for i := range sc.native {
		sc.native[i] = sc.native[i][:0]
	}
}

// asciiLower appends text lower-cased in ASCII to dst: offsets stay the
// same as text's.
func asciiLower(dst []byte, text string) []byte {
	dst = append(dst, text...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// emit turns one match of r (submatch offsets m, relative to base) into a
// finding if it passes the rule's entropy, the allowlists and the
// placeholder checks.
func (e *engine) emit(sc *scratch, r *rule, text string, m []int, base int) {
	ms, me := base+m[0], base+m[1]
	for ms < me && text[ms] == '\n' {
		ms++
	}
	for me > ms && text[me-1] == '\n' {
		me--
	}
	ss, se := ms, me
	if len(m) > 2 {
		if r.secretGroup > 0 {
			g := 2 * r.secretGroup
			if m[g] < 0 {
				return
			}
			ss, se = base+m[g], base+m[g+1]
		} else {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && m[g+1] > m[g] {
					ss, se = base+m[g], base+m[g+1]
					break
				}
			}
		}
	}
	if r.secretMax >= 0 && se-ss > r.secretMax {
		return
	}
	for se > ss && (text[se-1] == '.' || text[se-1] == ',') {
		se--
	}
	if se <= ss {
		return
	}
	secret := text[ss:se]
	if r.entropy != 0 && entropy(secret) <= r.entropy {
		return
	}
	lowSecret := sc.lower[ss:se]
	for _, al := range e.rs.global {
		if e.allows(sc, al, secret, lowSecret, text, ms, me) {
			return
		}
	}
	for _, al := range r.allow {
		if e.allows(sc, al, secret, lowSecret, text, ms, me) {
			return
		}
	}
	if r.placeholder(secret, lowSecret) {
		return
	}
	typ, score := r.typ, r.score
	if r.id == "generic-api-key" {
		if nonSecretKinds[string(sc.prevWord(ms))] {
			return // "CSRF token: …", "primary key = …" (the name's own words are allowlisted in svc.toml)
		}
		typ = genericType(sc.lower[ms:ss])
	}
	sc.found = append(sc.found, detect.Finding{Type: typ, Start: ss, End: se, Score: score, Rule: r.name})
}

// placeholder judges a rule's secret without the literal prefix the rule
// starts with ("AGE-SECRET-KEY-1", "bedrock-api-key-"): the marker words
// apply to the random part.
func (r *rule) placeholder(secret string, low []byte) bool {
	if r.mode != modePrefix {
		return placeholder(secret, low)
	}
	for _, l := range r.lits {
		if len(l) < len(secret) && bytes.HasPrefix(low, []byte(l)) || !r.fold && strings.HasPrefix(secret, l) {
			return placeholder(secret[len(l):], low[len(l):])
		}
	}
	return placeholder(secret, low)
}

// allows applies one allowlist to a finding: its regexes to the secret, the
// match or the line, and its stop words to the secret.
func (e *engine) allows(sc *scratch, al *allowlist, secret string, lowSecret []byte, text string, ms, me int) bool {
	stopOK := false
	if len(al.stopwords) > 0 {
		e.stop[al.stopIdx].Walk(lowSecret, func(_, _, _ int64) bool {
			stopOK = true
			return false
		})
		if stopOK && !al.and {
			return true
		}
	}
	regexOK := false
	if len(al.regexes) > 0 {
		ts, te := -1, -1 // target's bounds in text, when not the secret
		target, low := secret, lowSecret
		switch al.target {
		case "match":
			ts, te = ms, me
		case "line":
			ls := strings.LastIndexByte(text[:ms], '\n') + 1
			le := strings.IndexByte(text[me:], '\n')
			if le < 0 {
				le = len(text)
			} else {
				le += me
			}
			ts, te = ls, le
		}
		if ts >= 0 {
			target, low = text[ts:te], sc.lower[ts:te]
		}
		cached := false
		if al.target == "line" {
			regexOK, cached = sc.lineAllowed(al, ts, te)
		}
		if !cached {
			for _, m := range al.regexes {
				if m.match(target, low) {
					regexOK = true
					break
				}
			}
			if al.target == "line" {
				sc.lineCache = append(sc.lineCache, lineVerdict{al, ts, te, regexOK})
			}
		}
	}
	if al.and {
		return (!al.hasRegex || regexOK) && (!al.hasStop || stopOK)
	}
	return regexOK || stopOK
}

// lineVerdict remembers a line-target allowlist's regexes' verdict on one
// line: a one-line text of many findings is matched once, not per finding.
type lineVerdict struct {
	al     *allowlist
	ls, le int
	ok     bool
}

func (sc *scratch) lineAllowed(al *allowlist, ls, le int) (ok, found bool) {
	for _, v := range sc.lineCache {
		if v.al == al && v.ls == ls && v.le == le {
			return v.ok, true
		}
	}
	return false, false
}

// genericType decides the type of a generic-api-key finding from the name
// it was assigned to (lower case): a name with "api", or with "key" and no
// word of a password, secret or cryptographic key (master, signing,
// encryption, session, HMAC, JWT), names an API key; any other (password,
// secret, token, credential, auth) a SECRET.
func genericType(name []byte) detect.Type {
	switch {
	case bytes.Contains(name, []byte("api")):
		return detect.APIKey
	case bytes.Contains(name, []byte("passw")), bytes.Contains(name, []byte("secret")),
		bytes.Contains(name, []byte("private")), bytes.Contains(name, []byte("master")),
		bytes.Contains(name, []byte("encrypt")), bytes.Contains(name, []byte("signing")),
		bytes.Contains(name, []byte("session")), bytes.Contains(name, []byte("hmac")),
		bytes.Contains(name, []byte("jwt")), bytes.Contains(name, []byte("crypt")):
		return detect.Secret
	case bytes.Contains(name, []byte("key")):
		return detect.APIKey
	}
	return detect.Secret
}
