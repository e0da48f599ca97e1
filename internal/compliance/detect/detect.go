// Package detect is the compliance engine's shared vocabulary: the entity
// types, a Finding (one detected span with its confidence), the Detector
// interface every detector family implements (pii, secrets, injection), the
// context-word helper detectors use to raise or lower a confidence, and the
// resolution of overlapping findings and their redaction.
//
// It imports only the standard library; every compliance package may import
// it.
package detect

// Type names what a finding is: the placeholder written by redaction is
// "[" + Type + "]".
type Type string

// PII types.
const (
	Email          Type = "EMAIL"
	Phone          Type = "PHONE"
	SSN            Type = "SSN"
	CreditCard     Type = "CREDIT_CARD"
	IBAN           Type = "IBAN"
	IPAddress      Type = "IP_ADDRESS"
	Person         Type = "PERSON"
	DateOfBirth    Type = "DATE_OF_BIRTH"
	Passport       Type = "PASSPORT"
	DriversLicense Type = "DRIVERS_LICENSE"
)

// Secret types.
const (
	APIKey       Type = "API_KEY"
	AWSAccessKey Type = "AWS_ACCESS_KEY"
	AWSSecretKey Type = "AWS_SECRET_KEY"
	PrivateKey   Type = "PRIVATE_KEY"
	JWT          Type = "JWT"
	DatabaseURL  Type = "DATABASE_URL"
	// Secret is a high-entropy token next to a key word, of no known
	// provider.
	Secret Type = "SECRET"
)

// Injection types: instructions aimed at the model rather than content for
// it. Their findings are never redacted.
const (
	PromptInjection Type = "PROMPT_INJECTION"
	Jailbreak       Type = "JAILBREAK"
)

// Matched is the type of a span a caller matched with its own words (a
// policy's keyword or topic), not a detector: Redact replaces it only where
// it was found, since where else it may occur (inside other words, say) is
// the caller's rule, not a value's.
const Matched Type = "REDACTED"

// Category groups types by what a policy does with them.
type Category int

// Categories.
const (
	CategoryPII Category = iota + 1
	CategorySecret
	CategoryInjection
)

// Category is t's category; an unknown type counts as PII (redacted, the
// safe side).
func (t Type) Category() Category {
	switch t {
	case APIKey, AWSAccessKey, AWSSecretKey, PrivateKey, JWT, DatabaseURL, Secret:
		return CategorySecret
	case PromptInjection, Jailbreak:
		return CategoryInjection
	}
	return CategoryPII
}

// Finding is one detected span of the scanned text.
type Finding struct {
	Type Type
	// Start and End are byte offsets into the scanned text: text[Start:End]
	// is the whole value (with its separators), 0 <= Start < End <= len(text).
	Start, End int
	// Score is the confidence, 0–1, after context words were weighed.
	Score float64
	// Rule names what matched, for explanations and metrics: for instance
	// "luhn", "gitleaks:github-pat", "override:de". Never holds the value.
	Rule string
}

// Detector finds one family of entities.
//
// Detect appends the findings of text to dst and returns it. It must accept
// any string (invalid UTF-8, NUL bytes, megabytes) without panicking, keep no
// reference to text, and be safe for concurrent use. Findings it returns
// satisfy Finding's offset rules; they may overlap (Resolve settles that).
type Detector interface {
	Name() string
	Detect(text string, dst []Finding) []Finding
}
