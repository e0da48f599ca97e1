package apierr

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxProviderMessage bounds a provider's message relayed to a caller.
const maxProviderMessage = 2000

// redacted replaces a credential.
const redacted = "[redacted]"

// prefixed are credentials whose prefix names them, as the providers and the
// secret scanners (gitleaks, Kingfisher, TruffleHog) document them. Lengths
// are lower bounds below the real ones, so a format that grows stays caught
// while a short word with the same prefix (the model pplx-70b-chat) does not.
var prefixed = []string{
	// OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-api03-,
	// sk-ant-admin01-), OpenRouter (sk-or-v1-), DeepSeek (sk-<hex>), masked
	// forms (sk-abc****wxyz), and pk-/rk-/key- keys.
	`(?:sk-ant|sk|pk|rk|key)-[A-Za-z0-9_\-*]{6,}`,
	`AIza[0-9A-Za-z_\-]{20,}`,                // Google API key
	`ya29\.[0-9A-Za-z_\-.]+`,                 // Google OAuth access token
	`(?:AKIA|ASIA|ABSK)[A-Za-z0-9+/=]{12,}`,  // AWS access key id, STS, Bedrock API key
	`gsk_[A-Za-z0-9]{20,}`,                   // Groq (gsk_ + 52)
	`xai-[A-Za-z0-9_]{20,}`,                  // xAI (xai- + 80)
	`pplx-[A-Za-z0-9]{32,}`,                  // Perplexity (pplx- + 48)
	`csk-[A-Za-z0-9]{32,}`,                   // Cerebras (csk- + 48)
	`fw_[A-Za-z0-9]{20,}`,                    // Fireworks (fw_ + 24 or more)
	`tgp_v1_[A-Za-z0-9_\-]{20,}`,             // Together (new keys; old ones are 64 hex)
	`nvapi-[A-Za-z0-9_\-]{30,}`,              // NVIDIA NIM
	`r8_[A-Za-z0-9]{30,}`,                    // Replicate
	`hf_[A-Za-z0-9]{30,40}\b`,                // Hugging Face (hf_ + 34)
	`api_org_[A-Za-z0-9]{30,40}\b`,           // Hugging Face organisation token
	`gh[pousr]_[A-Za-z0-9]{30,}`,             // GitHub tokens (ghp_ + 36, …)
	`github_pat_[A-Za-z0-9_]{30,}`,           // GitHub fine-grained token
	`[A-Za-z0-9]{52}JQQJ99[A-Za-z0-9]{26}\b`, // Azure AI services key (84 characters)
	`Bearer\s+\S+`,
}

// credentialLike matches the prefixed credentials, each after a character
// that is not a letter or digit (an underscore counts: providers join keys
// into codes, bad_key_gsk_…), so that ordinary words (risk-assessment,
// task-planner) stay as they are. The character before is group 1.
var credentialLike = regexp.MustCompile(`(^|[^A-Za-z0-9])(?:` + strings.Join(prefixed, "|") + `)`)

// opaqueToken is a run of 32 or more letters and digits: an opaque key
// (Mistral 32, Cohere 40, Azure OpenAI 32 hex, Together 64 hex) when
// looksRandom agrees. It stands between word boundaries, so that ids with a
// prefix (req_<32 hex>, which providers ask users to quote) stay readable;
// the exact scrub (Scrubber) finds such a key wherever it is.
var opaqueToken = regexp.MustCompile(`\b[A-Za-z0-9]{32,}\b`)

// awsSecret is an AWS secret access key (40 base64 characters) after a label
// that names it; the label is kept.
var awsSecret = regexp.MustCompile(`(?i)((?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["'\s:=]{1,5})[A-Za-z0-9/+=]{40,}`)

// basicAuth is an HTTP Basic credential, base64 of "user:password".
var basicAuth = regexp.MustCompile(`\bBasic\s+([A-Za-z0-9+/]{8,}={0,2})`)

// masked is a credential a provider masked in its message (gsk_ab****wxyz).
var masked = regexp.MustCompile(`[A-Za-z0-9_\-]{2,}\*{4,}[A-Za-z0-9_\-]{2,}`)

// looksRandom reports whether tok is more likely a key than a word: it has
// digits and letters, and either both cases or only hexadecimal letters.
// Words, however long, have no digits; CamelCase identifiers neither.
func looksRandom(tok string) bool {
	var digit, lower, upper, nonHex bool
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
			nonHex = nonHex || c > 'f'
		case c >= 'A' && c <= 'Z':
			upper = true
			nonHex = nonHex || c > 'F'
		case c == '+' || c == '/' || c == '=':
			digit = true // base64 punctuation: not a word either
		}
	}
	return digit && (lower || upper) && ((lower && upper) || !nonHex)
}

// RedactShapes replaces with [redacted] everything in s that has the shape of
// a credential: prefixed keys (OpenAI, Anthropic, Google, AWS, Groq, xAI,
// Perplexity, Cerebras, Fireworks, Together, Hugging Face, GitHub, Azure …),
// bearer and basic credentials, AWS secret keys after their label, masked
// keys, and opaque random-looking runs of 32 or more letters and digits
// (Mistral, Cohere, Azure's hex keys). Ordinary words stay as they are.
func RedactShapes(s string) string {
	s = credentialLike.ReplaceAllString(s, "${1}"+redacted)
	s = awsSecret.ReplaceAllString(s, "${1}"+redacted)
	s = basicAuth.ReplaceAllStringFunc(s, func(m string) string {
		if looksRandom(basicAuth.FindStringSubmatch(m)[1]) {
			return redacted
		}
		return m
	})
	s = masked.ReplaceAllString(s, redacted)
	return opaqueToken.ReplaceAllStringFunc(s, func(m string) string {
		if looksRandom(m) {
			return redacted
		}
		return m
	})
}

// Redact makes a provider's message safe to relay: anything that looks like
// a credential becomes [redacted] (RedactShapes), and the message is cut to
// 2000 bytes on a character boundary.
func Redact(msg string) string {
	if len(msg) > maxProviderMessage {
		cut := maxProviderMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return RedactShapes(msg)
}
