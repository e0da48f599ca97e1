package secret

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"unicode/utf8"
)

// knownPrefixes are public key-format prefixes that Mask shows in full before
// the revealed characters; longest first, so the most specific one is chosen.
var knownPrefixes = []string{"sk-proj-", "sk-svc-", "sk-ant-", "sk-"}

const (
	ellipsis    = "…"
	maxRevealed = 4 // secret characters shown after a known prefix
	minMasked   = 8 // shorter secrets show nothing
)

// Mask returns a display form of secret: a known prefix (sk-proj-, sk-svc-,
// sk-ant-, sk-), at most 4 further characters, and "…". The shown part never
// exceeds a quarter of the secret's characters, so short secrets show less
// ("sk-…") and a secret of fewer than 8 characters masks to "…".
//
//	Mask("sk-proj-abcdefgh…(48 chars)") == "sk-proj-abcd…"
//	Mask("sk-abcdefghi")                == "sk-…"
func Mask(secret string) string {
	n := utf8.RuneCountInString(secret)
	if n < minMasked {
		return ellipsis
	}
	budget := n / 4
	prefix, matched := "", false
	for _, p := range knownPrefixes {
		if strings.HasPrefix(secret, p) {
			matched = true
			if len(p) <= budget {
				prefix = p
				break
			}
		}
	}
	if matched && prefix == "" {
		return ellipsis // a known prefix too long to show: show nothing rather than part of it
	}
	end := len(prefix)
	for range min(maxRevealed, budget-len(prefix)) {
		_, size := utf8.DecodeRuneInString(secret[end:])
		end += size
	}
	return secret[:end] + ellipsis
}

// Equal reports whether a and b are equal in time that does not depend on
// their content: both are hashed with SHA-256 and the digests compared with
// crypto/subtle, so neither a mismatch position nor (beyond hashing time) a
// length difference is observable.
func Equal(a, b string) bool {
	ha := sha256.Sum256([]byte(a))
	hb := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
