package policy

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Bounds of Compile.
const (
	// MaxKeywords bounds the keywords of one policy.
	MaxKeywords = 100
	// MaxTopics bounds the topics of one policy.
	MaxTopics = 20
	// MaxKeywordLen bounds one keyword or topic, in bytes.
	MaxKeywordLen = 200
	// MaxNotes bounds the notes of one compilation.
	MaxNotes = 32
	// DefaultMinScore is the confidence from which a finding counts when
	// the content names none.
	DefaultMinScore = 0.5
)

// maxTopicWords bounds the words of a topic read from prose.
const maxTopicWords = 8

// phrase maps words of prose to the detector types they name.
type phrase struct {
	re    *regexp.Regexp
	types []detect.Type
}

// Type groups named by prose.
var (
	piiTypes = []detect.Type{detect.Email, detect.Phone, detect.SSN, detect.CreditCard, detect.IBAN,
		detect.IPAddress, detect.Person, detect.DateOfBirth, detect.Passport, detect.DriversLicense}
	secretTypes = []detect.Type{detect.APIKey, detect.AWSAccessKey, detect.AWSSecretKey, detect.PrivateKey,
		detect.JWT, detect.DatabaseURL, detect.Secret}
	injectionTypes = []detect.Type{detect.PromptInjection, detect.Jailbreak}
	// phiTypes are HIPAA Safe Harbor identifiers the engine detects: names,
	// dates of birth, contact details, SSNs, account and licence numbers,
	// IP addresses.
	phiTypes = []detect.Type{detect.Person, detect.DateOfBirth, detect.SSN, detect.Email, detect.Phone,
		detect.IPAddress, detect.IBAN, detect.DriversLicense}
	// allTypes is every type in the canonical order Checks lists them.
	allTypes = slices.Concat(piiTypes, secretTypes, injectionTypes)
)

// phrases is the prose vocabulary of detectors; docs/policy-language.md
// lists it, change both together. Patterns are matched case-insensitively
// on word boundaries.
var phrases = []phrase{
	{re: wordRE(`social[\s-]+security(?:[\s-]+numbers?)?|ssns?`), types: []detect.Type{detect.SSN}},
	{re: wordRE(`e-?mails?(?:[\s-]+address(?:es)?)?`), types: []detect.Type{detect.Email}},
	{re: wordRE(`(?:tele)?phone(?:s|[\s-]+numbers?)?|(?:mobile|cell)[\s-]+(?:phone[\s-]+)?numbers?`), types: []detect.Type{detect.Phone}},
	{re: wordRE(`credit[\s-]+cards?(?:[\s-]+numbers?)?|(?:payment|debit)[\s-]+cards?(?:[\s-]+numbers?)?|card[\s-]+numbers?|primary[\s-]+account[\s-]+numbers?`), types: []detect.Type{detect.CreditCard}},
	{re: wordRE(`ibans?|bank[\s-]+accounts?(?:[\s-]+numbers?)?|account[\s-]+numbers?`), types: []detect.Type{detect.IBAN}},
	{re: wordRE(`ip[\s-]+address(?:es)?`), types: []detect.Type{detect.IPAddress}},
	{re: wordRE(`(?:full|person(?:'s|al)?|people's|customer|patient|employee)[\s-]+names?|names?[\s-]+of[\s-]+(?:people|persons|individuals|customers|patients|employees)`), types: []detect.Type{detect.Person}},
	{re: wordRE(`dates?[\s-]+of[\s-]+birth|birth[\s-]?dates?|birthdays?|dobs?`), types: []detect.Type{detect.DateOfBirth}},
	{re: wordRE(`passports?(?:[\s-]+numbers?)?`), types: []detect.Type{detect.Passport}},
	{re: wordRE(`drivers?'?s?'?[\s-]+licen[cs]es?(?:[\s-]+numbers?)?|driving[\s-]+licen[cs]es?`), types: []detect.Type{detect.DriversLicense}},
	{re: wordRE(`api[\s-]+keys?|access[\s-]+keys?|secret[\s-]+keys?|credentials?|passwords?|passwd|secrets?|(?:access|auth|bearer|api)[\s-]+tokens?`), types: secretTypes},
	{re: wordRE(`(?:private|ssh)[\s-]+keys?`), types: []detect.Type{detect.PrivateKey}},
	{re: wordRE(`jwts?|json[\s-]+web[\s-]+tokens?`), types: []detect.Type{detect.JWT}},
	{re: wordRE(`aws[\s-]+(?:access[\s-]+|secret[\s-]+)?(?:keys?|credentials?)`), types: []detect.Type{detect.AWSAccessKey, detect.AWSSecretKey}},
	{re: wordRE(`database[\s-]+(?:urls?|passwords?|credentials?)|connection[\s-]+strings?`), types: []detect.Type{detect.DatabaseURL}},
	{re: wordRE(`prompt[\s-]+injections?|injection[\s-]+attacks?|injections?`), types: []detect.Type{detect.PromptInjection}},
	{re: wordRE(`jail[\s-]?break(?:s|ing)?`), types: []detect.Type{detect.Jailbreak}},
	{re: wordRE(`prompt[\s-]+attacks?|manipulation[\s-]+attempts?`), types: injectionTypes},
	{re: wordRE(`personal[\s-]+(?:data|information|details)|personally[\s-]+identifiable[\s-]+information|piis?`), types: piiTypes},
	{re: wordRE(`(?:protected[\s-]+)?health[\s-]+(?:information|data|records?)|phi|medical[\s-]+records?|patient[\s-]+(?:data|information|records?)`), types: phiTypes},
	{re: wordRE(`(?:payment|financial|cardholder)[\s-]+(?:data|information|details)`), types: []detect.Type{detect.CreditCard, detect.IBAN}},
	{re: wordRE(`contact[\s-]+(?:details|information|data)`), types: []detect.Type{detect.Email, detect.Phone}},
	{re: wordRE(`(?:government|national)[\s-]+(?:ids?|identifiers?|identity[\s-]+numbers?)|identity[\s-]+documents?`), types: []detect.Type{detect.SSN, detect.Passport, detect.DriversLicense}},
}

// wordRE compiles a case-insensitive pattern matched on word boundaries.
func wordRE(alt string) *regexp.Regexp { return regexp.MustCompile(`(?i)\b(?:` + alt + `)\b`) }

// Words of prose that set the action and the side.
var (
	blockWords  = wordRE(`block(?:s|ed|ing)?|reject(?:s|ed|ing)?|refuse[sd]?|deny|denied|prohibit(?:s|ed)?|forbid(?:s|den)?|disallow(?:s|ed)?|stop`)
	redactWords = wordRE(`redact(?:s|ed|ion|ing)?|mask(?:s|ed|ing)?|anonymi[sz]e[sd]?|pseudonymi[sz]e[sd]?|scrub(?:s|bed)?|strip(?:s|ped)?|remove[sd]?|replace[sd]?`)
	flagWords   = wordRE(`flag(?:s|ged)?|warn(?:s|ing)?|alert|log(?:s|ged)?|report(?:s|ed)?|monitor(?:s|ed)?|audit(?:s|ed)?|review`)
	// prohibition is language that forbids without naming an action.
	prohibition = wordRE(`(?:do|does|must|shall|should|may|can|will|is|are)\s+not|don't|doesn't|mustn't|shouldn't|shan't|can't|cannot|never|not\s+(?:be\s+)?(?:allowed|permitted)`)
	promptWords = wordRE(`prompts?|inputs?|requests?|questions?|quer(?:y|ies)|user[\s-]+messages?|sent\s+to\s+the\s+model`)
	answerWords = wordRE(`answers?|responses?|outputs?|completions?|repl(?:y|ies)|model[\s-]+messages?|generated\s+text`)
	// examples introduce a list of keywords.
	examples = regexp.MustCompile(`(?i)\b(?:such\s+as|e\.g\.,?|for\s+example,?|for\s+instance,?|including|namely|i\.e\.,?)\s+([^.;:!?\n]+)`)
	quoted   = regexp.MustCompile(`"([^"\n]{1,200})"|“([^”\n]{1,200})”`)
	// explicit is an explicit line: "Name: value".
	explicit = regexp.MustCompile(`(?i)^\s*(?:[-*•]\s*)?(detectors?|actions?|keywords?|topics?|applies[\s_-]*to|scope|min[\s_-]*score)\s*:\s*(.*?)\s*$`)
	// clauseEnd splits prose into clauses.
	clauseEnd = regexp.MustCompile(`[.!?;\n]+(?:\s+|$)|\n`)
	// listSep splits a list of keywords or topics.
	listSep = regexp.MustCompile(`(?i)\s*(?:,|/|\band\b|\bor\b|\betc\.?|&)\s*`)
)

// scaffold are the words of a prohibition that are not its subject: what
// is left of "Do not discuss medical diagnoses" once they are dropped is
// the topic.
var scaffold = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`a an the any all every each some this that these those which who whom whose what
	it its it's they them their there here we our us you your i my me he she his her
	is are was were be been being am do does did done doing don't doesn't didn't not no never nothing none
	must mustn't shall shan't should shouldn't may might can cannot can't could will won't would
	to of in on at by for from with without into onto about regarding concerning related relating around over
	and or nor but if when while unless except than then as so also only even just very more most less
	block blocks blocked blocking reject rejects rejected refuse refuses refused deny denied prohibit prohibits
	prohibited forbid forbids forbidden disallow disallowed stop allowed permitted allow allows
	redact redacts redacted mask masked anonymise anonymize remove removed strip scrub replace
	flag flags flagged warn warns alert log logged report reported monitor monitored audit review
	discuss discusses discussing discussed talk talks talking mention mentions mentioning mentioned
	give gives giving provide provides providing offer offers offering share shares sharing disclose
	discloses disclosing reveal reveals revealing send sends sending generate generates generating
	produce produces write writes include includes including contain contains containing answer answers
	answering respond responds respond reply replies engage engages engaging help helps assist assists
	prompt prompts input inputs request requests question questions query queries message messages
	response responses output outputs completion completions user users model models assistant assistants
	chatbot ai llm bot topic topics subject subjects content anything something everything matters
	please always ensure make sure`) {
		scaffold[s] = true
	}
}

// Compile reads a policy's content (prose, optionally with explicit lines)
// into the checks the evaluator runs. It never fails: what it cannot read
// it says in Notes. It is deterministic and bounded (MaxContent,
// MaxKeywords, MaxTopics).
func Compile(content string) Checks {
	var c compiler
	if len(content) > MaxContent {
		cut := MaxContent
		for cut > 0 && !utf8.RuneStart(content[cut]) {
			cut--
		}
		content = content[:cut]
		c.note("content over 64 KiB: only the first 64 KiB read")
	}
	content = strings.ToValidUTF8(content, "\uFFFD")
	var prose []string
	for line := range strings.SplitSeq(content, "\n") {
		if m := explicit.FindStringSubmatch(line); m != nil {
			c.line(strings.ToLower(m[1]), m[2])
			continue
		}
		prose = append(prose, line)
	}
	c.prose(strings.Join(prose, "\n"))
	return c.checks()
}

// compiler holds what Compile read: from prose, and from explicit lines
// (nil or empty: none given).
type compiler struct {
	proseDet   []detect.Type
	proseKw    []string
	proseTop   []string
	proseAct   Action
	actWhy     string
	proseScope Scope
	scopeWhy   string

	det      []detect.Type
	detSet   bool
	kw       []string
	kwSet    bool
	top      []string
	topSet   bool
	act      Action
	scope    Scope
	minScore float64
	minSet   bool

	notes    []string
	dropped  int
	capNoted map[string]bool
}

func (c *compiler) note(format string, args ...any) {
	if len(c.notes) >= MaxNotes {
		c.dropped++
		return
	}
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// line reads one explicit line; a second line of the same name replaces
// the first.
func (c *compiler) line(name, value string) {
	switch {
	case strings.HasPrefix(name, "detector"):
		var got []detect.Type
		for _, f := range splitList(value) {
			ts, ok := parseDetector(f)
			if !ok {
				c.note("unknown detector %q ignored", clipN(f, 40))
				continue
			}
			got = append(got, ts...)
		}
		if c.detSet {
			c.note("two Detectors lines: the last one is used")
		}
		c.det, c.detSet = got, true
	case strings.HasPrefix(name, "action"):
		a := Action(strings.ToLower(strings.TrimSpace(value)))
		if a != ActionBlock && a != ActionRedact && a != ActionFlag {
			c.note("Action %q is not block, redact or flag: ignored", clipN(value, 40))
			return
		}
		if c.act != "" && c.act != a {
			c.note("two Action lines (%s, %s): the last one is used", c.act, a)
		}
		c.act = a
	case strings.HasPrefix(name, "keyword"):
		if c.kwSet {
			c.note("two Keywords lines: the last one is used")
		}
		c.kw, c.kwSet = c.cleanList(splitList(value), MaxKeywords, "keywords"), true
	case strings.HasPrefix(name, "topic"):
		if c.topSet {
			c.note("two Topics lines: the last one is used")
		}
		c.top, c.topSet = c.cleanList(splitList(value), MaxTopics, "topics"), true
	case strings.HasPrefix(name, "applies"), name == "scope":
		s, ok := parseScope(value)
		if !ok {
			c.note("Applies to %q is not prompt, answer or both: ignored", clipN(value, 40))
			return
		}
		if c.scope != "" && c.scope != s {
			c.note("two Applies to lines (%s, %s): the last one is used", c.scope, s)
		}
		c.scope = s
	default: // min score
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || f != f || f < 0 || f > 1 {
			c.note("Min score %q is not a number from 0 to 1: ignored", clipN(value, 40))
			return
		}
		c.minScore, c.minSet = f, true
	}
}

// parseDetector reads a detector type by name ("SSN", "credit card",
// "credit-card") or a group ("PII", "secrets", "injection", "PHI").
func parseDetector(s string) ([]detect.Type, bool) {
	n := strings.ToUpper(strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '\t'
	}), "_"))
	for _, t := range allTypes {
		if string(t) == n {
			return []detect.Type{t}, true
		}
	}
	switch n {
	case "PII", "PERSONAL_DATA":
		return piiTypes, true
	case "PHI", "HEALTH_INFORMATION":
		return phiTypes, true
	case "SECRET", "SECRETS", "CREDENTIALS":
		if n == "SECRET" {
			return []detect.Type{detect.Secret}, true
		}
		return secretTypes, true
	case "INJECTION", "PROMPT_ATTACKS":
		return injectionTypes, true
	case "E_MAIL":
		return []detect.Type{detect.Email}, true
	}
	return nil, false
}

// parseScope reads prompt, answer or both (and their plurals and
// synonyms; "prompt, answer" is both).
func parseScope(s string) (Scope, bool) {
	p := promptWords.MatchString(s) || strings.Contains(strings.ToLower(s), "prompt")
	a := answerWords.MatchString(s)
	if b := strings.Contains(strings.ToLower(s), "both"); b || p && a {
		return ScopeBoth, true
	}
	switch {
	case p:
		return ScopePrompt, true
	case a:
		return ScopeAnswer, true
	}
	return "", false
}

// splitList splits a comma-separated list whose items may be quoted
// (`a, "b, c"`), with encoding/csv; an unbalanced quote falls back to a
// plain split on commas.
func splitList(s string) []string {
	r := csv.NewReader(strings.NewReader(s))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var out []string
	rec, err := r.Read()
	if err != nil && err != io.EOF {
		rec = strings.Split(s, ",")
	}
	for _, f := range rec {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// cleanList trims, bounds and deduplicates (case-insensitively) a list of
// keywords or topics.
func (c *compiler) cleanList(in []string, limit int, what string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.Trim(strings.TrimSpace(s), `"“”'`)
		s = strings.Join(strings.Fields(s), " ")
		if s == "" || !hasWordRune(s) {
			continue
		}
		if len(s) > MaxKeywordLen {
			c.note("a %s entry over %d bytes ignored", what[:len(what)-1], MaxKeywordLen)
			continue
		}
		k := strings.ToLower(s)
		if seen[k] {
			continue
		}
		if len(out) == limit {
			if c.capNoted == nil {
				c.capNoted = map[string]bool{}
			}
			if !c.capNoted[what] {
				c.capNoted[what] = true
				c.note("%s capped at %d", what, limit)
			}
			break
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

func hasWordRune(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// prose reads what the prose implies: detectors, keywords, topics, the
// action and the side.
func (c *compiler) prose(text string) {
	// Detectors.
	seen := map[detect.Type]bool{}
	var named []string
	masked := []byte(text) // text with detector phrases blanked, for the other reads
	for _, p := range phrases {
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			named = append(named, strings.ToLower(text[m[0]:m[1]]))
			for i := m[0]; i < m[1]; i++ {
				masked[i] = ' '
			}
			for _, t := range p.types {
				seen[t] = true
			}
		}
	}
	for _, t := range allTypes {
		if seen[t] {
			c.proseDet = append(c.proseDet, t)
		}
	}
	if len(named) > 0 {
		slices.Sort(named)
		named = slices.Compact(named)
		c.note("detectors read from %s", quoteList(named, 6))
	}
	rest := string(masked)

	// Action.
	switch {
	case blockWords.MatchString(rest):
		c.proseAct, c.actWhy = ActionBlock, "action block from "+strconv.Quote(strings.ToLower(blockWords.FindString(rest)))
	case redactWords.MatchString(rest):
		c.proseAct, c.actWhy = ActionRedact, "action redact from "+strconv.Quote(strings.ToLower(redactWords.FindString(rest)))
	case flagWords.MatchString(rest):
		c.proseAct, c.actWhy = ActionFlag, "action flag from "+strconv.Quote(strings.ToLower(flagWords.FindString(rest)))
	case prohibition.MatchString(rest):
		c.proseAct, c.actWhy = ActionBlock, "action block from the prohibition "+strconv.Quote(strings.ToLower(prohibition.FindString(rest)))
	}

	// Side.
	p, a := promptWords.MatchString(rest), answerWords.MatchString(rest)
	switch {
	case p && a:
		c.proseScope, c.scopeWhy = ScopeBoth, "applies to both: prompts and answers named"
	case p:
		c.proseScope, c.scopeWhy = ScopePrompt, "applies to prompts only: only prompts named"
	case a:
		c.proseScope, c.scopeWhy = ScopeAnswer, "applies to answers only: only answers named"
	}

	// Keywords and topics, clause by clause.
	var kws, tops []string
	at := 0
	for _, end := range append(clauseEnd.FindAllStringIndex(rest, -1), []int{len(rest), len(rest)}) {
		clause := rest[at:end[0]]
		orig := text[at:end[0]]
		at = end[1]
		if strings.TrimSpace(clause) == "" {
			continue
		}
		got := false
		for _, m := range quoted.FindAllStringSubmatch(clause, -1) {
			kws, got = append(kws, m[1]+m[2]), true
		}
		for _, m := range examples.FindAllStringSubmatchIndex(clause, -1) {
			for _, item := range listSep.Split(clause[m[2]:m[3]], -1) {
				item = strings.Trim(strings.TrimSpace(item), `"“”`)
				item = strings.TrimPrefix(strings.TrimPrefix(item, "the "), "The ")
				if len(strings.Fields(item)) > 5 || !hasWordRune(item) {
					continue
				}
				kws, got = append(kws, item), true
			}
		}
		if got || clause != orig {
			continue // a clause naming detectors or keywords is no topic
		}
		if !blockWords.MatchString(clause) && !redactWords.MatchString(clause) &&
			!flagWords.MatchString(clause) && !prohibition.MatchString(clause) {
			continue // no restriction, no topic ("This policy protects…")
		}
		for _, part := range listSep.Split(clause, -1) {
			if t := topicWords(part); t != "" {
				tops = append(tops, t)
			}
		}
	}
	c.proseKw = c.cleanList(kws, MaxKeywords, "keywords")
	c.proseTop = c.cleanList(tops, MaxTopics, "topics")
}

// topicWords is part without its scaffolding words, or "".
func topicWords(part string) string {
	var keep []string
	for _, f := range strings.FieldsFunc(part, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-' || r == '’')
	}) {
		if !scaffold[strings.ToLower(strings.Trim(f, "'’-"))] && len(keep) < maxTopicWords {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

func quoteList(s []string, n int) string {
	var b strings.Builder
	for i, x := range s {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(s)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(x))
	}
	return b.String()
}

// checks merges the explicit lines over the prose.
func (c *compiler) checks() Checks {
	var ch Checks
	ch.Detectors = c.proseDet
	if c.detSet {
		if !slices.Equal(c.det, c.proseDet) && len(c.proseDet) > 0 {
			c.note("Detectors line overrides the detectors the prose names")
		}
		seen := map[detect.Type]bool{}
		for _, t := range c.det {
			seen[t] = true
		}
		ch.Detectors = nil
		for _, t := range allTypes {
			if seen[t] {
				ch.Detectors = append(ch.Detectors, t)
			}
		}
	}
	ch.Keywords = c.proseKw
	if c.kwSet {
		if len(c.proseKw) > 0 && !slices.Equal(c.kw, c.proseKw) {
			c.note("Keywords line overrides the keywords the prose lists")
		}
		ch.Keywords = c.kw
	} else if len(c.proseKw) > 0 {
		c.note("keywords read from the prose: %s", quoteList(c.proseKw, 6))
	}
	ch.Topics = c.proseTop
	if c.topSet {
		if len(c.proseTop) > 0 && !slices.Equal(c.top, c.proseTop) {
			c.note("Topics line overrides the topics the prose implies")
		}
		ch.Topics = c.top
	} else if len(c.proseTop) > 0 {
		c.note("topics read from the prose (matched by meaning): %s", quoteList(c.proseTop, 6))
	}

	switch {
	case c.act != "":
		if c.proseAct != "" && c.proseAct != c.act {
			c.note("Action line (%s) overrides the prose (%s)", c.act, c.proseAct)
		}
		ch.Action = c.act
	case c.proseAct != "":
		ch.Action = c.proseAct
		c.note("%s", c.actWhy)
	default:
		ch.Action = ActionFlag
		c.note("no action word: flag")
	}
	switch {
	case c.scope != "":
		if c.proseScope != "" && c.proseScope != c.scope {
			c.note("Applies to line (%s) overrides the prose (%s)", c.scope, c.proseScope)
		}
		ch.AppliesTo = c.scope
	case c.proseScope != "":
		ch.AppliesTo = c.proseScope
		c.note("%s", c.scopeWhy)
	default:
		ch.AppliesTo = ScopeBoth
		c.note("neither prompts nor answers named: both")
	}
	ch.MinScore = DefaultMinScore
	if c.minSet {
		ch.MinScore = c.minScore
	}
	if len(ch.Detectors) == 0 && len(ch.Keywords) == 0 && len(ch.Topics) == 0 {
		c.note("no detector, keyword or topic found: the policy matches nothing")
	}
	if ch.Action == ActionRedact && len(ch.Detectors) > 0 && !slices.ContainsFunc(ch.Detectors, func(t detect.Type) bool {
		return t.Category() != detect.CategoryInjection
	}) && len(ch.Keywords) == 0 && len(ch.Topics) == 0 {
		c.note("injection findings cannot be redacted: they are flagged")
	}
	if c.dropped > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d more notes left out", c.dropped))
	}
	if ch.Detectors == nil {
		ch.Detectors = []detect.Type{}
	}
	if ch.Keywords == nil {
		ch.Keywords = []string{}
	}
	if ch.Topics == nil {
		ch.Topics = []string{}
	}
	ch.Notes = c.notes
	return ch
}
