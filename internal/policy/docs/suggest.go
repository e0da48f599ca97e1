package docs

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/policy"
)

// Bounds of the suggestions drafted from one document.
const (
	maxSuggestions      = 200
	maxSentencesPerRule = 8
	maxSentence         = 600 // bytes of a source sentence kept
	maxName             = 120
)

// Obligation language. Prohibitions first: "must not" is a prohibition,
// not a requirement.
var (
	prohibitionRe = regexp.MustCompile(`(?i)\b(?:shall not|must not|may not|must never|shall never|cannot be|can not be|is prohibited|are prohibited|prohibited from|is forbidden|are forbidden|is not permitted|are not permitted|not be permitted|is not allowed|are not allowed|never|do not|does not|under no circumstances)\b`)
	requireRe     = regexp.MustCompile(`(?i)\b(?:must|shall|is required to|are required to|required to|may only|only\b.{1,60}\bmay|needs? to|has to|have to)\b`)
	shouldRe      = regexp.MustCompile(`(?i)\b(?:should|is recommended|are recommended|are encouraged|is encouraged|ought to)\b`)
	vagueRe       = regexp.MustCompile(`(?i)\b(?:should consider|consider|where possible|where appropriate|as appropriate|if feasible|as far as practicable|may wish to)\b`)
	redactRe      = regexp.MustCompile(`(?i)\b(?:mask(?:ed|ing)?|redact(?:ed|ion)?|anonymi[sz](?:ed|ation)|pseudonymi[sz](?:ed|ation)|de-?identified|tokeni[sz]ed|obfuscated|truncated)\b`)
	flagRe        = regexp.MustCompile(`(?i)\b(?:report(?:ed)?|log(?:ged)?|monitor(?:ed)?|notif(?:y|ied)|review(?:ed)?|record(?:ed)?|audit(?:ed)?|escalate[ds]?)\b`)
	severeRe      = regexp.MustCompile(`(?i)\b(?:critical|severe|strictly|under no circumstances|zero tolerance|immediately|at all times|disciplinary|termination|criminal)\b`)
	promptSideRe  = regexp.MustCompile(`(?i)\b(?:(?:enter|paste|upload|submit|send|shar|share|disclos|disclose|provide|transmit|input)(?:s|d|ed|ing|ted|ting)?|sent|prompts?)\b`)
	answerSideRe  = regexp.MustCompile(`(?i)\b(?:output|outputs|responses?|answers?|generated|generate[sd]?|produce[sd]?|display(?:ed)?|returned|replies)\b`)
	// obligationRe is any obligation language (used also to tell a
	// numbered rule from a numbered heading).
	obligationRe = regexp.MustCompile(prohibitionRe.String() + `|` + requireRe.String()[4:] + `|` + shouldRe.String()[4:])
)

// dataTerm maps words naming a kind of data to the detector types that
// find it.
type dataTerm struct {
	re    *regexp.Regexp
	types []detect.Type
	// generic terms ("personal data") raise confidence less.
	generic bool
}

var dataTerms = []dataTerm{
	{re: regexp.MustCompile(`(?i)\b(?:social security numbers?|SSNs?|taxpayer identification numbers?)\b`), types: []detect.Type{detect.SSN}},
	{re: regexp.MustCompile(`(?i)\b(?:credit cards?|debit cards?|payment cards?|card numbers?|cardholder data|primary account numbers?|PANs?|card data)\b`), types: []detect.Type{detect.CreditCard}},
	{re: regexp.MustCompile(`(?i)\b(?:e-?mail addresses?|e-?mails?)\b`), types: []detect.Type{detect.Email}},
	{re: regexp.MustCompile(`(?i)\b(?:(?:tele)?phone numbers?|mobile numbers?|telephone)\b`), types: []detect.Type{detect.Phone}},
	{re: regexp.MustCompile(`(?i)\b(?:IBANs?|bank account(?: number)?s?|account numbers?)\b`), types: []detect.Type{detect.IBAN}},
	{re: regexp.MustCompile(`(?i)\bIP addresses?\b`), types: []detect.Type{detect.IPAddress}},
	{re: regexp.MustCompile(`(?i)\b(?:dates? of birth|birth ?dates?|DOB)\b`), types: []detect.Type{detect.DateOfBirth}},
	{re: regexp.MustCompile(`(?i)\bpassports?(?: numbers?)?\b`), types: []detect.Type{detect.Passport}},
	{re: regexp.MustCompile(`(?i)\bdriver'?s'? licen[cs]es?\b`), types: []detect.Type{detect.DriversLicense}},
	{re: regexp.MustCompile(`(?i)\b(?:health (?:data|information|records?)|medical (?:data|information|records?)|patient (?:data|information|records?|names?)|protected health information|PHI|ePHI|diagnos[ie]s)\b`), types: []detect.Type{detect.Person, detect.DateOfBirth, detect.SSN}},
	{re: regexp.MustCompile(`(?i)\b(?:personal data|personal information|personally identifiable information|PII)\b`), types: []detect.Type{detect.Person, detect.Email, detect.Phone, detect.DateOfBirth}, generic: true},
	{re: regexp.MustCompile(`(?i)\b(?:(?:full|customer|client|employee|patient|personal) names?|home address(?:es)?)\b`), types: []detect.Type{detect.Person}, generic: true},
	{re: regexp.MustCompile(`(?i)\b(?:passwords?|passphrases?|credentials?|secrets?)\b`), types: []detect.Type{detect.Secret, detect.APIKey}},
	{re: regexp.MustCompile(`(?i)\b(?:API keys?|access keys?|access tokens?|auth(?:entication)? tokens?|bearer tokens?)\b`), types: []detect.Type{detect.APIKey, detect.JWT}},
	{re: regexp.MustCompile(`(?i)\bprivate keys?\b`), types: []detect.Type{detect.PrivateKey}},
	{re: regexp.MustCompile(`(?i)\bAWS\b`), types: []detect.Type{detect.AWSAccessKey, detect.AWSSecretKey}},
	{re: regexp.MustCompile(`(?i)\b(?:connection strings?|database (?:URLs?|credentials?))\b`), types: []detect.Type{detect.DatabaseURL}},
	{re: regexp.MustCompile(`(?i)\b(?:prompt injections?|jailbreak(?:s|ing)?)\b`), types: []detect.Type{detect.PromptInjection, detect.Jailbreak}},
}

// detectorOrder is the order detector types are listed in.
var detectorOrder = []detect.Type{
	detect.SSN, detect.CreditCard, detect.Email, detect.Phone, detect.IBAN, detect.IPAddress,
	detect.Person, detect.DateOfBirth, detect.Passport, detect.DriversLicense,
	detect.APIKey, detect.AWSAccessKey, detect.AWSSecretKey, detect.PrivateKey, detect.JWT,
	detect.DatabaseURL, detect.Secret, detect.PromptInjection, detect.Jailbreak,
}

// frameworks are the regulatory frameworks recognised, with the words and
// references that name them.
var frameworks = []struct {
	name string
	re   *regexp.Regexp
}{
	{"GDPR", regexp.MustCompile(`(?i)\b(?:GDPR|General Data Protection Regulation|Regulation \(EU\) 2016/679|data subjects?|data protection officer|supervisory authority|Art(?:icle|\.)? ?\d+ (?:of the )?(?:GDPR|UK GDPR))\b`)},
	{"HIPAA", regexp.MustCompile(`(?i)\b(?:HIPAA|HITECH|protected health information|ePHI|PHI|45 CFR|covered entit(?:y|ies)|business associates?)\b`)},
	{"PCI DSS", regexp.MustCompile(`(?i)\b(?:PCI[ -]?DSS|PCI|cardholder data|primary account numbers?|payment card industry)\b`)},
	{"SOX", regexp.MustCompile(`(?i)\b(?:SOX|Sarbanes[- ]Oxley|Section 404|Section 302|internal controls? over financial reporting|ICFR)\b`)},
	{"CCPA", regexp.MustCompile(`(?i)\b(?:CCPA|CPRA|California Consumer Privacy Act|California Privacy Rights Act|Cal\. Civ\. Code|1798\.\d+)\b`)},
	{"ISO 27001", regexp.MustCompile(`(?i)\b(?:ISO(?:/IEC)? ?27001|ISO(?:/IEC)? ?27002|Annex A(?:\.\d+)*)\b`)},
	{"SOC 2", regexp.MustCompile(`(?i)\b(?:SOC ?2|Trust Services Criteria|CC\d\.\d)\b`)},
	{"NIST", regexp.MustCompile(`(?i)\b(?:NIST|SP 800-\d+|800-53|800-171|Cybersecurity Framework)\b`)},
}

// typeWords are the vocabularies that tell a policy's type; a
// regulatory framework counts for "compliance".
var typeWords = map[string]*regexp.Regexp{
	"security":   regexp.MustCompile(`(?i)\b(?:passwords?|credentials?|API keys?|secrets?|encrypt(?:ed|ion)?|access control|authenticat\w*|malware|vulnerabilit\w*|prompt injections?|jailbreak\w*|private keys?|tokens?)\b`),
	"legal":      regexp.MustCompile(`(?i)\b(?:legal advice|contracts?|litigation|attorney|privileged?|intellectual property|copyright\w*|liabilit\w*|trade secrets?|confidentiality agreements?)\b`),
	"brand":      regexp.MustCompile(`(?i)\b(?:brand\w*|tone of voice|logos?|trademarks?|marketing|press|public statements?|competitors?|reputation)\b`),
	"format":     regexp.MustCompile(`(?i)\b(?:format\w*|citations?|markdown|templates?|disclaimers?|word limit|in English|length)\b`),
	"role":       regexp.MustCompile(`(?i)\b(?:roles?|managers?|administrators?|authori[sz]ed personnel|departments?|role-based|need[- ]to[- ]know|employees? in)\b`),
	"industry":   regexp.MustCompile(`(?i)\b(?:medical advice|clinical|diagnos\w*|financial advice|investment advice|trading|insurance claims?|underwriting)\b`),
	"compliance": regexp.MustCompile(`(?i)\b(?:personal data|personal information|PII|privacy|data protection|retention|consent|regulat\w*|complian\w*|social security|card numbers?|health (?:data|information))\b`),
}

// obligation is one sentence that states a rule.
type obligation struct {
	sentence  string
	action    policy.Action
	scope     policy.Scope
	detectors []detect.Type
	framework string
	typ       string
	priority  int
	conf      float64
}

// Suggest drafts policies from the obligations in doc: sentences with
// modal or prohibition language, grouped by section heading and, within a
// section, by action and scope. Each suggestion's Content is the rule in
// the document's words plus the lines the policy compiler reads
// ("Detectors: …", "Action: …", "Applies to: …"). The result is
// deterministic (IDs are hashes of the content) and never nil.
func Suggest(doc Document) []policy.Suggestion {
	docFramework := dominantFramework(doc)
	out := []policy.Suggestion{}
	for _, sec := range doc.Sections {
		secFramework := frameworkOf(sec.Heading)
		type key struct {
			action policy.Action
			scope  policy.Scope
		}
		groups := map[key][]obligation{}
		var order []key
		for _, para := range sec.Paragraphs {
			for _, s := range sentences(para) {
				o, ok := analyse(s, sec.Heading)
				if !ok {
					continue
				}
				if o.framework == "" {
					o.framework = secFramework
				}
				if o.framework == "" {
					o.framework = docFramework
				}
				k := key{o.action, o.scope}
				if _, seen := groups[k]; !seen {
					order = append(order, k)
				}
				if len(groups[k]) < maxSentencesPerRule {
					groups[k] = append(groups[k], o)
				}
			}
		}
		for _, k := range order {
			if len(out) == maxSuggestions {
				return out
			}
			out = append(out, suggestion(sec.Heading, groups[k]))
		}
	}
	return out
}

// analyse reads one sentence; ok is false when it states no obligation.
func analyse(s, heading string) (obligation, bool) {
	prohibit := prohibitionRe.MatchString(s)
	require := requireRe.MatchString(s)
	should := shouldRe.MatchString(s)
	if !prohibit && !require && !should {
		return obligation{}, false
	}
	o := obligation{sentence: s}
	o.detectors, o.conf = detectors(s)
	mayOnly := strings.Contains(strings.ToLower(s), "may only")
	switch {
	case redactRe.MatchString(s) && (require || should) && !strings.Contains(strings.ToLower(s), "not be redacted"):
		o.action = policy.ActionRedact
	case prohibit:
		o.action = policy.ActionBlock
	case mayOnly && len(o.detectors) > 0:
		// Sending such data to a model is a use outside the one allowed.
		o.action = policy.ActionBlock
	case should, flagRe.MatchString(s):
		o.action = policy.ActionFlag
	case len(o.detectors) > 0:
		o.action = policy.ActionBlock
	default:
		o.action = policy.ActionFlag
	}
	in, outSide := promptSideRe.MatchString(s), answerSideRe.MatchString(s)
	switch {
	case in && !outSide:
		o.scope = policy.ScopePrompt
	case outSide && !in:
		o.scope = policy.ScopeAnswer
	default:
		o.scope = policy.ScopeBoth
	}
	o.framework = frameworkOf(s)
	o.typ = policyType(s + " " + heading)

	vague := vagueRe.MatchString(s)
	base := 0.0
	switch {
	case prohibit || (require && !vague):
		base = 0.6
		o.priority = 70
		if prohibit {
			o.priority = 80
		}
	case vague:
		base, o.priority = 0.25, 20
	default: // should
		base, o.priority = 0.4, 40
	}
	if severeRe.MatchString(s) {
		o.priority += 15
	}
	if len(o.detectors) > 0 {
		o.priority += 10
	}
	if o.framework != "" {
		o.conf += 0.05
	}
	o.priority = min(o.priority, 100)
	o.conf = math.Round(min(base+o.conf, 0.95)*100) / 100
	return o, true
}

// detectors are the types the sentence names, in detectorOrder, and the
// confidence they add (a named kind of data is explicit; "personal data"
// is less so).
func detectors(s string) ([]detect.Type, float64) {
	set := map[detect.Type]bool{}
	add := 0.0
	for _, t := range dataTerms {
		if !t.re.MatchString(s) {
			continue
		}
		for _, d := range t.types {
			set[d] = true
		}
		if t.generic {
			add = max(add, 0.15)
		} else {
			add = 0.3
		}
	}
	var out []detect.Type
	for _, d := range detectorOrder {
		if set[d] {
			out = append(out, d)
		}
	}
	return out, add
}

// frameworkOf is the first framework s names ("" if none).
func frameworkOf(s string) string {
	for _, f := range frameworks {
		if f.re.MatchString(s) {
			return f.name
		}
	}
	return ""
}

// dominantFramework is the framework named most often in doc (ties to
// the earlier in the list), "" if none.
func dominantFramework(doc Document) string {
	best, bestN := "", 0
	for _, f := range frameworks {
		n := 0
		for _, s := range doc.Sections {
			n += len(f.re.FindAllStringIndex(s.Heading, -1))
			for _, p := range s.Paragraphs {
				n += len(f.re.FindAllStringIndex(p, 100))
			}
		}
		if n > bestN {
			best, bestN = f.name, n
		}
	}
	return best
}

// policyType is the policy.Types entry whose vocabulary s uses most
// ("compliance" when none or a tie with it; a named framework counts for
// compliance).
func policyType(s string) string {
	best, bestN := "compliance", len(typeWords["compliance"].FindAllStringIndex(s, -1))
	if frameworkOf(s) != "" {
		bestN += 2
	}
	for _, t := range policy.Types {
		if t == "compliance" {
			continue
		}
		if n := len(typeWords[t].FindAllStringIndex(s, -1)); n > bestN {
			best, bestN = t, n
		}
	}
	return best
}

// suggestion merges the obligations of one section, action and scope.
func suggestion(heading string, obs []obligation) policy.Suggestion {
	first := obs[0]
	var dets []detect.Type
	seen := map[detect.Type]bool{}
	var srcs []string
	prio, conf := 0, 0.0
	types := map[string]int{}
	framework := ""
	for _, o := range obs {
		for _, d := range o.detectors {
			if !seen[d] {
				seen[d] = true
				dets = append(dets, d)
			}
		}
		srcs = append(srcs, o.sentence)
		prio = max(prio, o.priority)
		conf = max(conf, o.conf)
		types[o.typ]++
		if framework == "" {
			framework = o.framework
		}
	}
	slices.SortFunc(dets, func(a, b detect.Type) int {
		return slices.Index(detectorOrder, a) - slices.Index(detectorOrder, b)
	})
	typ := first.typ
	for _, t := range policy.Types {
		if types[t] > types[typ] {
			typ = t
		}
	}

	var c strings.Builder
	title := strings.TrimSpace(stripNumber(heading))
	if title == "" {
		title = "General"
	}
	c.WriteString(strings.Join(srcs, " "))
	c.WriteString("\n\n")
	if len(dets) > 0 {
		names := make([]string, len(dets))
		for i, d := range dets {
			names[i] = string(d)
		}
		c.WriteString("Detectors: " + strings.Join(names, ", ") + "\n")
	}
	c.WriteString("Action: " + string(first.action) + "\n")
	c.WriteString("Applies to: " + string(first.scope))
	content := c.String()

	name := title + ": " + actionWord(first.action, dets)
	if len(name) > maxName {
		name = truncate(name, maxName)
	}
	sum := sha256.Sum256([]byte(heading + "\x00" + content))
	return policy.Suggestion{
		ID:                  "sug_" + hex.EncodeToString(sum[:8]),
		Name:                name,
		Type:                typ,
		Content:             content,
		Priority:            prio,
		RegulatoryFramework: framework,
		Confidence:          conf,
		Section:             heading,
		Source:              srcs[0],
	}
}

// actionWord names what a suggestion does, for its name.
func actionWord(a policy.Action, dets []detect.Type) string {
	what := "this rule"
	if len(dets) > 0 {
		parts := make([]string, 0, 3)
		for i, d := range dets {
			if i == 3 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, strings.ToLower(strings.ReplaceAll(string(d), "_", " ")))
		}
		what = strings.Join(parts, ", ")
	}
	switch a {
	case policy.ActionBlock:
		return "block " + what
	case policy.ActionRedact:
		return "redact " + what
	}
	return "flag " + what
}

// stripNumber drops a heading's section number ("3.1 Payment data").
func stripNumber(h string) string {
	w, rest, ok := strings.Cut(h, " ")
	if ok && numbered(w) {
		return rest
	}
	return h
}

// abbreviations end with a dot without ending a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "art": true, "no": true, "sec": true, "vs": true,
	"mr": true, "mrs": true, "ms": true, "dr": true, "inc": true, "ltd": true, "cf": true, "para": true,
	"u.s": true, "approx": true, "fig": true, "civ": true, "cal": true,
}

// sentences splits a paragraph after ".", "!" or "?" followed by a space
// and a capital, digit or quote, unless the dot ends an abbreviation.
// Each sentence is cut to maxSentence bytes.
func sentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '.' && c != '!' && c != '?' && c != ';' {
			continue
		}
		if i+2 >= len(p) || p[i+1] != ' ' {
			continue
		}
		next := rune(p[i+2])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && next != '"' && next != '(' && c != ';' {
			continue
		}
		if c == '.' {
			word := p[start:i]
			if j := strings.LastIndexAny(word, " ("); j >= 0 {
				word = word[j+1:]
			}
			if abbreviations[strings.ToLower(word)] || (len(word) == 1 && unicode.IsUpper(rune(word[0]))) {
				continue
			}
		}
		out = appendSentence(out, p[start:i+1])
		start = i + 2
	}
	return appendSentence(out, p[start:])
}

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return out
	}
	return append(out, truncate(s, maxSentence))
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
