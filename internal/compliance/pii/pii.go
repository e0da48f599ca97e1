package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// MinScore is the lowest score a finding is reported with. Context words
// can push a validated candidate below it (a Luhn-valid number next to
// "order", a dotted quad after "version"): such candidates are dropped.
// Scores at or above it order findings by confidence; a policy may ask for
// more.
const MinScore = 0.5

// Types lists the types this package detects, in a fixed order.
var Types = []detect.Type{
	detect.Email, detect.Phone, detect.SSN, detect.CreditCard, detect.IBAN,
	detect.IPAddress, detect.Person, detect.DateOfBirth, detect.Passport,
	detect.DriversLicense,
}

// Detectors runs the PII detectors of a set of types over a text. The
// numeric types (cards, SSNs, phones, IPv4) share one pass that finds runs
// of digits and separators; e-mail, IPv6 and IBAN candidates are found by
// scanning for '@', ':' and a country code; the context-bound types
// (PERSON, DATE_OF_BIRTH, PASSPORT, DRIVERS_LICENSE) share one pass over the
// words that looks for their key words. Every candidate is validated before
// it is reported.
//
// A Detectors is immutable and safe for concurrent use.
type Detectors struct {
	on                                map[detect.Type]bool
	email, phone, ssn, card, iban, ip bool
	words                             bool // PERSON, DATE_OF_BIRTH, PASSPORT, DRIVERS_LICENSE
	name                              string
}

var _ detect.Detector = (*Detectors)(nil)

// New returns the detectors of types, or of every type in Types when none
// is given; types this package does not detect are ignored.
func New(types ...detect.Type) *Detectors {
	if len(types) == 0 {
		types = Types
	}
	d := &Detectors{on: make(map[detect.Type]bool, len(types)), name: "pii"}
	for _, t := range types {
		d.on[t] = true
	}
	d.email, d.phone, d.ssn = d.on[detect.Email], d.on[detect.Phone], d.on[detect.SSN]
	d.card, d.iban, d.ip = d.on[detect.CreditCard], d.on[detect.IBAN], d.on[detect.IPAddress]
	d.words = d.on[detect.Person] || d.on[detect.DateOfBirth] || d.on[detect.Passport] || d.on[detect.DriversLicense]
	if len(types) == 1 {
		d.name = "pii:" + string(types[0])
	}
	return d
}

// Name is "pii", or "pii:TYPE" for the detector of a single type.
func (d *Detectors) Name() string { return d.name }

// Detect appends the PII findings of text to dst and returns it. Findings
// may overlap (a number may be both a phone and a card candidate);
// detect.Resolve settles them.
func (d *Detectors) Detect(text string, dst []detect.Finding) []detect.Finding {
	base := len(dst)
	if d.card || d.ssn || d.phone || d.ip {
		dst = d.scanNumbers(text, dst)
	}
	if d.email {
		dst = scanEmails(text, dst)
	}
	if d.ip {
		dst = scanIPv6(text, dst)
	}
	if d.iban {
		dst = scanIBANs(text, dst)
	}
	if d.words {
		dst = d.scanWords(text, dst)
	}
	// Drop what a type filter or MinScore excludes (the shared passes may
	// produce types not asked for).
	out := dst[:base]
	for _, f := range dst[base:] {
		if d.on[f.Type] && f.Score >= MinScore && f.Start >= 0 && f.Start < f.End && f.End <= len(text) {
			out = append(out, f)
		}
	}
	return out
}

// finding builds a Finding with its score clamped to [0, 1].
func finding(t detect.Type, start, end int, score float64, rule string) detect.Finding {
	return detect.Finding{Type: t, Start: start, End: end, Score: clamp(score), Rule: rule}
}

func clamp(s float64) float64 {
	switch {
	case s < 0:
		return 0
	case s > 1:
		return 1
	}
	return s
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }

func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

// isWordByte reports whether c may be part of a word or an identifier:
// ASCII letters and digits, '_', and any byte of a multi-byte UTF-8
// sequence.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' || c >= 0x80 }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// atoi parses the ASCII digits of s (at most 9 of them, the caller's
// bound), -1 if s is empty or holds another byte.
func atoi(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}
