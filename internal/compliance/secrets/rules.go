package secrets

import (
	_ "embed"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// gitleaksTOML is gitleaks' default rule set, unchanged (SOURCES.md).
//
//go:embed gitleaks.toml
var gitleaksTOML string

// svcTOML holds svc's own rules in the same format, for keys gitleaks' set
// lacks or matches only in one historical shape (svc.toml says which).
//
//go:embed svc.toml
var svcTOML string

// config is the part of a gitleaks configuration file that applies to text:
// rules and allowlists. Fields it does not name (paths, commits, tags,
// minVersion) are ignored by the decoder.
type config struct {
	Allowlist  *allowlistConfig  `toml:"allowlist"`
	Allowlists []allowlistConfig `toml:"allowlists"`
	Rules      []ruleConfig      `toml:"rules"`
}

type ruleConfig struct {
	ID          string            `toml:"id"`
	Regex       string            `toml:"regex"`
	Path        string            `toml:"path"`
	SecretGroup int               `toml:"secretGroup"`
	Entropy     float64           `toml:"entropy"`
	Keywords    []string          `toml:"keywords"`
	Allowlists  []allowlistConfig `toml:"allowlists"`
	// Type is svc's extension (svc.toml only): the finding's type.
	Type string `toml:"type"`
}

type allowlistConfig struct {
	Condition   string   `toml:"condition"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	TargetRules []string `toml:"targetRules"`
}

// Skip is a rule of the rule set that svc does not run, and why.
type Skip struct {
	ID     string
	Reason string
}

// Reasons a rule is not run.
const (
	// ReasonRegexp: Go's regexp package cannot compile the rule's pattern.
	ReasonRegexp = "regexp does not compile"
	// ReasonPath: the rule applies only to files whose path matches; a
	// prompt has no path.
	ReasonPath = "scoped to file paths"
	// ReasonNative: a validating detector of this package replaces the rule
	// (same shape, plus a structural check).
	ReasonNative = "replaced by a native detector"
)

// nativeRules are the gitleaks rules a native detector of this package
// replaces.
var nativeRules = map[string]bool{
	"private-key": true, // pem.go: the whole block, validated body, also when truncated
	"jwt":         true, // jwt.go: header decoded, JSON with "alg"
}

// execution modes of a rule.
const (
	// modeFull runs the pattern over the whole text.
	modeFull = iota
	// modePrefix: every match starts with one of a few literals; the
	// pattern runs anchored at each occurrence of one.
	modePrefix
	// modeRequired: every match holds one of a few literals and is at most
	// maxLen long; the pattern runs in windows around their occurrences.
	modeRequired
	// modeAssign: gitleaks' keyword-assignment template
	// (`<name with keyword> <op> <value>`); the pattern runs in small
	// windows around keyword occurrences that an operator and a long enough
	// value follow.
	modeAssign
)

// rule is one compiled rule.
type rule struct {
	id          string
	name        string // Finding.Rule: "gitleaks:<id>" or "svc:<id>"
	typ         detect.Type
	score       float64
	re          *regexp.Regexp
	anchored    *regexp.Regexp // modePrefix: "^(?:" + pattern + ")"
	secretGroup int
	entropy     float64
	allow       []*allowlist

	mode int
	// modePrefix
	lits       []string // match prefixes (lower case when fold)
	fold       bool
	leadBound  bool // the pattern begins with \b
	maxLen     int  // longest match in bytes, -1 if unbounded
	secretMax  int  // longest secret in bytes, -1 if unbounded
	valueSet   [256]bool
	valueMin   int // modeAssign: shortest value
	valueMax   int // modeAssign: longest value, -1 if unbounded
	valueAnyOK bool
	reach      int      // modeAssign: how far before the keyword a match may start
	anchors    []string // modeAssign: the name's literals (lower case)
	opBudget   int      // modeAssign: most bytes from an anchor's end to the operator
}

// allowlist is a compiled gitleaks allowlist as far as it applies to text.
type allowlist struct {
	target    string // "", "match" or "line"
	and       bool
	regexes   []*altMatcher
	stopwords []string // lower case
	stopIdx   int      // engine.stop index of the stop-word trie
	// hasStop/hasRegex: for AND lists, the checks that must all hold.
	hasStop, hasRegex bool
}

// assignOp is the operator group of gitleaks' keyword-assignment template.
const assignOp = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// assignHeads are how that template begins, and how far before the
// keyword a match may start.
var assignHeads = []struct {
	head  string
	reach int
}{
	{`(?i)[\w.-]{0,50}?(?:`, 50},
	{`[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:`, 100},
}

// gitleaksEnd is the terminator most gitleaks rules end with: a quote,
// whitespace, a semicolon, an escaped newline or the end of the text.
const gitleaksEnd = `(?:[\x60'"\s;]|\\[nr]|$)`

// proseEnd widens gitleaksEnd for prose, markdown and URLs: a key may also
// be followed by a bracket, '*', '|', '&', '#', '@' or '<', or by sentence
// punctuation (".", ",", ":", "!", "?") that whitespace, a quote or the end
// follows. The secret group is unchanged; only where it may stop is.
const proseEnd = `(?:[\x60'"\s;]|\\[nr]|$|[.,:!?]+(?:[\x60'"\s]|$)|[)\]}>(\[{<*|&#@])`

// ruleSet is everything compiled from the rule files.
type ruleSet struct {
	rules      []*rule
	keywords   [][]string // per rule, lower case
	global     []*allowlist
	skipped    []Skip
	replaced   []Skip
	running    int // rules run (rules holds one entry per alternative of a split rule)
	gitleaksN  int // rules in gitleaks.toml
	ownN       int // rules in svc.toml
	compileErr []string
}

// loadRules parses and compiles gitleaks.toml and svc.toml.
func loadRules() (*ruleSet, error) {
	var gl, own config
	if _, err := toml.Decode(gitleaksTOML, &gl); err != nil {
		return nil, fmt.Errorf("secrets: gitleaks.toml: %w", err)
	}
	if _, err := toml.Decode(svcTOML, &own); err != nil {
		return nil, fmt.Errorf("secrets: svc.toml: %w", err)
	}
	rs := &ruleSet{gitleaksN: len(gl.Rules), ownN: len(own.Rules)}
	globals := gl.Allowlists
	if gl.Allowlist != nil {
		globals = append(globals, *gl.Allowlist)
	}
	// svc.toml's allowlists must name the rules they apply to.
	for _, a := range own.Allowlists {
		if len(a.TargetRules) == 0 {
			return nil, fmt.Errorf("secrets: svc.toml: an allowlist without targetRules")
		}
		globals = append(globals, a)
	}
	targeted := map[string][]allowlistConfig{}
	for _, a := range globals {
		if len(a.TargetRules) > 0 {
			for _, id := range a.TargetRules {
				targeted[id] = append(targeted[id], a)
			}
			continue
		}
		al, err := compileAllowlist(a)
		if err != nil {
			return nil, fmt.Errorf("secrets: global allowlist: %w", err)
		}
		if al != nil {
			rs.global = append(rs.global, al)
		}
	}
	add := func(rc ruleConfig, own bool) error {
		switch {
		case nativeRules[rc.ID] && !own:
			rs.replaced = append(rs.replaced, Skip{rc.ID, ReasonNative})
			return nil
		case rc.Path != "" || rc.Regex == "":
			rs.skipped = append(rs.skipped, Skip{rc.ID, ReasonPath})
			return nil
		}
		// A pattern that is an alternation of unrelated shapes (atlassian's
		// assignment template | its ATATT3 prefix) is run as one pattern per
		// alternative, so each can be run its cheap way.
		parts := []string{rc.Regex}
		if rc.SecretGroup == 0 {
			parts = splitTop(rc.Regex)
		}
		var compiled []*rule
		for _, part := range parts {
			prc := rc
			prc.Regex = part
			r, err := compileRule(prc, append(rc.Allowlists, targeted[rc.ID]...), own)
			if err != nil {
				if own {
					return err
				}
				rs.skipped = append(rs.skipped, Skip{rc.ID, ReasonRegexp})
				rs.compileErr = append(rs.compileErr, err.Error())
				return nil
			}
			compiled = append(compiled, r)
		}
		kws := make([]string, 0, len(rc.Keywords))
		for _, k := range rc.Keywords {
			if k = strings.ToLower(k); k != "" {
				kws = append(kws, k)
			}
		}
		for _, r := range compiled {
			rs.rules = append(rs.rules, r)
			rs.keywords = append(rs.keywords, kws)
		}
		rs.running++
		return nil
	}
	for _, rc := range gl.Rules {
		if err := add(rc, false); err != nil {
			return nil, err
		}
	}
	for _, rc := range own.Rules {
		if err := add(rc, true); err != nil {
			return nil, fmt.Errorf("secrets: svc.toml: %w", err)
		}
	}
	return rs, nil
}

// compileRule compiles one rule and works out how to run it cheaply.
func compileRule(rc ruleConfig, als []allowlistConfig, own bool) (*rule, error) {
	src := strings.ReplaceAll(rc.Regex, gitleaksEnd, proseEnd)
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", rc.ID, err)
	}
	tree := parsed.Simplify() // a copy: parsed is relaxed below
	if relax(parsed) {
		src = parsed.String()
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", rc.ID, err)
	}
	if rc.SecretGroup < 0 || rc.SecretGroup > re.NumSubexp() {
		return nil, fmt.Errorf("rule %s: secretGroup %d out of range", rc.ID, rc.SecretGroup)
	}
	r := &rule{
		id:          rc.ID,
		name:        "gitleaks:" + rc.ID,
		re:          re,
		secretGroup: rc.SecretGroup,
		entropy:     rc.Entropy,
		maxLen:      maxLen(tree),
		secretMax:   -1,
	}
	if own {
		r.name = "svc:" + rc.ID
	}
	r.typ, r.score = typeOf(rc.ID, rc.Type, own)
	for _, a := range als {
		al, err := compileAllowlist(a)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", rc.ID, err)
		}
		if al != nil {
			r.allow = append(r.allow, al)
		}
	}
	g := valueGroup(tree, rc.SecretGroup)
	switch {
	case g != nil:
		r.secretMax = maxLen(g)
	case re.NumSubexp() == 0:
		r.secretMax = r.maxLen
	}
	switch {
	case assignReach(rc.Regex) > 0 && strings.Contains(rc.Regex, assignOp) && g != nil && r.setAnchors(tree):
		anch, err := regexp.Compile(`^(?:` + src + `)`)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", rc.ID, err)
		}
		r.mode, r.anchored = modeAssign, anch
		r.reach = assignReach(rc.Regex)
		r.valueMin = minLen(g)
		r.valueMax = maxLen(g)
		r.valueAnyOK = !charSet(g, &r.valueSet)
	default:
		if lits, fold, lead, ok := prefixes(tree); ok {
			anch, err := regexp.Compile(`^(?:` + src + `)`)
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", rc.ID, err)
			}
			r.mode, r.anchored, r.lits, r.fold, r.leadBound = modePrefix, anch, lits, fold, lead
		} else if req := required(tree); req != nil && r.maxLen > 0 && len(req) <= maxPrefixes {
			r.mode, r.lits = modeRequired, req
		}
	}
	return r, nil
}

// relaxBound is the widest counted repetition kept as written.
const relaxBound = 32

// relax turns wide counted repetitions (x{0,50}, x{10,150}) into open ones
// (x*, x{10,}), in place, and reports whether it changed anything. Go's
// regexp runs in time proportional to the pattern's size, and a wide
// repetition is as many copies of its operand; the bound it drops is put
// back by the checks around a match: the window a rule runs in bounds where
// a match may start and end, and emit rejects a secret longer than the
// group allowed.
func relax(re *syntax.Regexp) bool {
	changed := false
	if re.Op == syntax.OpRepeat && re.Max >= relaxBound && re.Max > re.Min {
		re.Max = -1
		changed = true
	}
	for _, s := range re.Sub {
		if relax(s) {
			changed = true
		}
	}
	return changed
}

// setAnchors finds, in an assignment template, the literals the name part
// starts with (the keyword alternation after the [\w.-]{0,50}? prefixes)
// and how far after one the operator may be. It reports false if the name
// part does not start with literals of two bytes or more.
func (r *rule) setAnchors(tree *syntax.Regexp) bool {
	seq := openAll(tree)
	i := 0
	for i < len(seq) && (seq[i].Op == syntax.OpQuest || seq[i].Op == syntax.OpStar || seq[i].Op == syntax.OpRepeat) {
		i++
	}
	if i == 0 || i >= len(seq) {
		return false
	}
	k := i // the name: the elements up to the next repetition
	for k < len(seq) && seq[k].Op != syntax.OpQuest && seq[k].Op != syntax.OpStar &&
		seq[k].Op != syntax.OpRepeat && seq[k].Op != syntax.OpPlus {
		k++
	}
	lits, _, _ := expand(seq[i:k], []string{""})
	if len(lits) == 0 || len(lits) > maxPrefixes {
		return false
	}
	shortest := -1
	for j, l := range lits {
		if len(l) < 2 {
			return false
		}
		lits[j] = strings.ToLower(l)
		if shortest < 0 || len(l) < shortest {
			shortest = len(l)
		}
	}
	name := 0
	for _, el := range seq[i:k] {
		n := maxLen(el)
		if n < 0 {
			return false
		}
		name += n
	}
	// [ \t\w.-]{0,20}[\s'"]{0,3} after the name, and what of the name the
	// shortest literal leaves.
	r.anchors = dedupe(lits)
	r.opBudget = 23 + name - shortest
	return true
}

// openAll opens every concatenation and capture of re into one sequence.
func openAll(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return openAll(re.Sub[0])
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, openAll(s)...)
		}
		return out
	}
	return []*syntax.Regexp{re}
}

// splitTop splits a pattern at its top-level '|' (outside groups and
// classes); a leading flag group such as "(?i)", which applies to every
// alternative, is repeated on each.
func splitTop(src string) []string {
	flags := ""
	if strings.HasPrefix(src, "(?") {
		if end := strings.IndexByte(src, ')'); end > 2 && !strings.ContainsAny(src[2:end], ":(") {
			flags, src = src[:end+1], src[end+1:]
		}
	}
	var parts []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
			if i+1 < len(src) && src[i+1] == ']' { // "[]" starts a class holding ']'
				i++
			} else if i+2 < len(src) && src[i+1] == '^' && src[i+2] == ']' {
				i += 2
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			parts = append(parts, flags+src[start:i])
			start = i + 1
		}
	}
	if len(parts) == 0 {
		return []string{flags + src}
	}
	return append(parts, flags+src[start:])
}

// assignReach is how far before its keyword a match of an assignment
// template rule may start, or 0 if re is not one.
func assignReach(re string) int {
	for _, h := range assignHeads {
		if strings.HasPrefix(re, h.head) {
			return h.reach
		}
	}
	return 0
}

// compileAllowlist compiles the text part of an allowlist. It returns nil
// for a list that can never allow a finding in text: one with only paths or
// commits, or an AND list that needs a path or a commit to match.
func compileAllowlist(a allowlistConfig) (*allowlist, error) {
	and := false
	switch strings.ToUpper(a.Condition) {
	case "", "OR", "||":
	case "AND", "&&":
		and = true
	default:
		return nil, fmt.Errorf("allowlist condition %q", a.Condition)
	}
	target := a.RegexTarget
	switch target {
	case "", "secret":
		target = ""
	case "match", "line":
	default:
		return nil, fmt.Errorf("allowlist regexTarget %q", target)
	}
	if and && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		return nil, nil
	}
	if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return nil, nil
	}
	al := &allowlist{target: target, and: and, hasRegex: len(a.Regexes) > 0, hasStop: len(a.StopWords) > 0}
	for _, x := range a.Regexes {
		m, err := newAltMatcher(x)
		if err != nil {
			return nil, fmt.Errorf("allowlist regex %q: %w", x, err)
		}
		al.regexes = append(al.regexes, m)
	}
	seen := map[string]bool{}
	for _, w := range a.StopWords {
		w = strings.ToLower(w)
		if w != "" && !seen[w] {
			seen[w] = true
			al.stopwords = append(al.stopwords, w)
		}
	}
	return al, nil
}

// typeOf maps a rule to the type of its findings and their base score.
// Provider rules (a distinctive prefix or the provider's name next to the
// value) are API keys; generic-api-key, the curl rules and password rules
// are SECRET (refined per finding: see genericType).
func typeOf(id, explicit string, own bool) (detect.Type, float64) {
	if own && explicit != "" {
		return detect.Type(explicit), 0.95
	}
	switch {
	case id == "aws-access-token":
		return detect.AWSAccessKey, 0.97
	case id == "jwt" || id == "jwt-base64":
		return detect.JWT, 0.9
	case id == "private-key":
		return detect.PrivateKey, 0.99
	case id == "generic-api-key":
		return detect.Secret, 0.7
	case strings.HasPrefix(id, "curl-") || strings.Contains(id, "password"):
		return detect.Secret, 0.8
	}
	return detect.APIKey, 0.95
}

// valueGroup is the capture group holding the secret: secretGroup, or the
// first group when it is 0.
func valueGroup(re *syntax.Regexp, secretGroup int) *syntax.Regexp {
	want := max(secretGroup, 1)
	var found *syntax.Regexp
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if found != nil {
			return
		}
		if r.Op == syntax.OpCapture && r.Cap == want {
			found = r
			return
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(re)
	return found
}
