package quality

import (
	"regexp"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// naivePatterns is the baseline the issue compares against: a handful of
// bare regular expressions of the kind a thin PII filter ships, with no
// validator, no context and no guard.
var naivePatterns = []struct {
	typ detect.Type
	re  *regexp.Regexp
}{
	{detect.Email, regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)},
	{detect.SSN, regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)},
	{detect.CreditCard, regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`)},
	{detect.IBAN, regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)},
	{detect.IPAddress, regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`)},
	{detect.Phone, regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,5}\b`)},
	{detect.APIKey, regexp.MustCompile(`\b(?:sk|pk|rk|ghp|gho|xox[bp]|AIza|glpat|hf|SG|npm)[-_.][A-Za-z0-9_.\-]{10,}`)},
	{detect.AWSAccessKey, regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},
	{detect.AWSSecretKey, regexp.MustCompile(`\b[A-Za-z0-9/+]{40}\b`)},
}

// NaiveScan is the baseline Scanner: every match of naivePatterns, resolved
// by detect.Resolve (all at one score, so the longer match wins).
func NaiveScan(text string) []detect.Finding {
	var fs []detect.Finding
	for _, p := range naivePatterns {
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			fs = append(fs, detect.Finding{Type: p.typ, Start: m[0], End: m[1], Score: 0.5, Rule: "naive"})
		}
	}
	return detect.Resolve(fs, len(text))
}

// naiveTriggers are the phrases of the baseline injection scorer.
var naiveTriggers = []string{"ignore", "previous instructions", "system prompt", "jailbreak", "dan", "developer mode", "pretend", "act as", "override", "disregard"}

// NaiveInjectionScore is the baseline InjectionScorer: 1 when the text holds
// one of a handful of trigger words (ASCII case-insensitive, whole words),
// else 0.
func NaiveInjectionScore(text string) float64 {
	low := strings.ToLower(text)
	for _, w := range naiveTriggers {
		for i := 0; ; {
			j := strings.Index(low[i:], w)
			if j < 0 {
				break
			}
			at := i + j
			if wordEdge(low, at-1) && wordEdge(low, at+len(w)) {
				return 1
			}
			i = at + 1
		}
	}
	return 0
}

func wordEdge(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	c := s[i]
	return !('a' <= c && c <= 'z' || '0' <= c && c <= '9')
}
