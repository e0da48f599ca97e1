package compliance

import (
	"slices"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Severity of a violation.
type Severity int

// Severities, weakest first.
const (
	Low Severity = iota + 1
	Medium
	High
	Critical
)

var severityNames = [...]string{"", "low", "medium", "high", "critical"}

func (s Severity) String() string {
	if s < Low || s > Critical {
		return "low"
	}
	return severityNames[s]
}

// weight is how much one violation of severity s at full confidence takes
// from the compliance score.
func (s Severity) weight() float64 {
	switch s {
	case Critical:
		return 0.9
	case High:
		return 0.6
	case Medium:
		return 0.3
	}
	return 0.1
}

// Action is what a policy recommends for content.
type Action int

// Actions, mildest first.
const (
	Allow Action = iota
	Flag
	Block
)

var actionNames = [...]string{"Allow", "Flag", "Block"}

func (a Action) String() string {
	if a < Allow || a > Block {
		return "Allow"
	}
	return actionNames[a]
}

// ParseAction reads "Allow", "Flag" or "Block" (any case).
func ParseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if strings.EqualFold(s, n) {
			return Action(i), true
		}
	}
	return Allow, false
}

// ParseRiskLevel reads "low", "medium", "high" or "critical" (any case).
func ParseRiskLevel(s string) (Severity, bool) {
	for i := Low; i <= Critical; i++ {
		if strings.EqualFold(s, severityNames[i]) {
			return i, true
		}
	}
	return 0, false
}

// Rule is what a policy does with one entity type.
type Rule struct {
	Severity Severity
	// Action is taken when a finding of the type reaches MinScore; Allow
	// reports the entity (pii_detected, redaction) without a violation.
	Action   Action
	MinScore float64
}

// Policy is a named family of rules.
type Policy struct {
	Name        string
	Description string
	Frameworks  []string
	Rules       map[detect.Type]Rule
}

// rule is p's rule for t; types it does not name are reported (Allow, low)
// from the confidence of 0.5, so pii_detected and redaction stay complete.
func (p *Policy) rule(t detect.Type) Rule {
	if r, ok := p.Rules[t]; ok {
		return r
	}
	return Rule{Severity: Low, Action: Allow, MinScore: 0.5}
}

// DefaultPolicy is the family used when a scan names none.
const DefaultPolicy = "enterprise_standard"

// Policies are the built-in families, by name. Each is documented in the
// README's compliance section; change both together.
var Policies = map[string]*Policy{
	"enterprise_standard": {
		Name:        "enterprise_standard",
		Description: "Secrets and prompt attacks blocked; government IDs and payment data flagged; contact details reported and redacted",
		Frameworks:  []string{"SOC 2", "ISO 27001"},
		Rules: rules(
			group(Rule{Critical, Block, 0.5}, secretTypes...),
			group(Rule{High, Block, 0.5}, detect.PromptInjection, detect.Jailbreak),
			group(Rule{High, Flag, 0.5}, detect.SSN, detect.CreditCard, detect.Passport, detect.DriversLicense),
			group(Rule{Medium, Flag, 0.5}, detect.IBAN, detect.DateOfBirth),
			group(Rule{Low, Allow, 0.5}, detect.Email, detect.Phone, detect.Person, detect.IPAddress),
		),
	},
	"hipaa": {
		Name:        "hipaa",
		Description: "HIPAA Safe Harbor identifiers (names, dates of birth, contact details, SSNs, account and licence numbers, IP addresses) flagged, SSNs blocked; secrets and prompt attacks blocked",
		Frameworks:  []string{"HIPAA"},
		Rules: rules(
			group(Rule{Critical, Block, 0.5}, secretTypes...),
			group(Rule{High, Block, 0.5}, detect.PromptInjection, detect.Jailbreak),
			group(Rule{Critical, Block, 0.5}, detect.SSN),
			group(Rule{High, Flag, 0.5}, detect.DateOfBirth, detect.Passport, detect.DriversLicense, detect.CreditCard, detect.IBAN),
			group(Rule{Medium, Flag, 0.5}, detect.Person, detect.Email, detect.Phone),
			group(Rule{Low, Flag, 0.5}, detect.IPAddress),
		),
	},
	"pci_dss": {
		Name:        "pci_dss",
		Description: "Primary account numbers blocked, bank accounts flagged; secrets and prompt attacks blocked; other personal data reported",
		Frameworks:  []string{"PCI DSS"},
		Rules: rules(
			group(Rule{Critical, Block, 0.5}, secretTypes...),
			group(Rule{High, Block, 0.5}, detect.PromptInjection, detect.Jailbreak),
			group(Rule{Critical, Block, 0.5}, detect.CreditCard),
			group(Rule{High, Flag, 0.5}, detect.IBAN, detect.SSN),
			group(Rule{Low, Allow, 0.5}, detect.Email, detect.Phone, detect.Person, detect.IPAddress, detect.DateOfBirth, detect.Passport, detect.DriversLicense),
		),
	},
	"gdpr": {
		Name:        "gdpr",
		Description: "Every kind of personal data flagged (identifiers, contact details, online identifiers, financial data); secrets and prompt attacks blocked",
		Frameworks:  []string{"GDPR"},
		Rules: rules(
			group(Rule{Critical, Block, 0.5}, secretTypes...),
			group(Rule{High, Block, 0.5}, detect.PromptInjection, detect.Jailbreak),
			group(Rule{High, Flag, 0.5}, detect.SSN, detect.Passport, detect.DriversLicense, detect.CreditCard, detect.IBAN, detect.DateOfBirth),
			group(Rule{Medium, Flag, 0.5}, detect.Email, detect.Phone, detect.Person, detect.IPAddress),
		),
	},
	"strict": {
		Name:        "strict",
		Description: "Anything detected from a confidence of 0.3 is blocked",
		Frameworks:  []string{"GDPR", "HIPAA", "PCI DSS", "SOC 2"},
		Rules: rules(
			group(Rule{Critical, Block, 0.3}, secretTypes...),
			group(Rule{Critical, Block, 0.3}, detect.PromptInjection, detect.Jailbreak),
			group(Rule{Critical, Block, 0.3}, detect.SSN, detect.CreditCard, detect.IBAN, detect.Passport, detect.DriversLicense),
			group(Rule{High, Block, 0.3}, detect.Email, detect.Phone, detect.Person, detect.IPAddress, detect.DateOfBirth),
		),
	},
}

var secretTypes = []detect.Type{detect.APIKey, detect.AWSAccessKey, detect.AWSSecretKey, detect.PrivateKey, detect.JWT, detect.DatabaseURL, detect.Secret}

func group(r Rule, types ...detect.Type) map[detect.Type]Rule {
	m := make(map[detect.Type]Rule, len(types))
	for _, t := range types {
		m[t] = r
	}
	return m
}

func rules(groups ...map[detect.Type]Rule) map[detect.Type]Rule {
	out := map[detect.Type]Rule{}
	for _, g := range groups {
		for t, r := range g {
			out[t] = r
		}
	}
	return out
}

// PolicyNames lists the built-in families, sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(Policies))
	for n := range Policies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
