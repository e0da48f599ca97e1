package apierr

import (
	"regexp"
	"unicode/utf8"
)

// maxProviderMessage bounds a provider's message relayed to a caller.
const maxProviderMessage = 2000

// credentialLike matches credentials a provider might echo in a message:
// API keys with the usual prefixes (sk-, sk-ant-, pk-, rk-, key-), Google API
// keys (AIza…) and OAuth tokens (ya29.…), AWS access key ids (AKIA, ASIA,
// ABSK), and bearer tokens. Each starts at a word boundary, so ordinary words
// (risk-assessment) stay as they are.
var credentialLike = regexp.MustCompile(`\b(?:(?:sk-ant|sk|pk|rk|key)-[A-Za-z0-9_\-*]{6,}|AIza[0-9A-Za-z_\-]{20,}|ya29\.[0-9A-Za-z_\-.]+|(?:AKIA|ASIA|ABSK)[A-Za-z0-9+/=]{12,}|Bearer\s+\S+)`)

// Redact makes a provider's message safe to relay: anything that looks like
// a credential becomes [redacted], and the message is cut to 2000 bytes on a
// character boundary.
func Redact(msg string) string {
	if len(msg) > maxProviderMessage {
		cut := maxProviderMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return credentialLike.ReplaceAllString(msg, "[redacted]")
}
