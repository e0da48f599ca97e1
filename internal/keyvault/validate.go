package keyvault

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLen is the longest provider API key Put accepts, in bytes.
const MaxKeyLen = 4096

// maxProviderLen is the longest provider name.
const maxProviderLen = 64

// ValidationError reports an invalid argument to Put. Message is safe to show
// to a client: it never contains the key.
type ValidationError struct {
	Field   string // "provider" or "api_key"
	Message string
}

func (e *ValidationError) Error() string {
	return "keyvault: invalid " + e.Field + ": " + e.Message
}

// validProvider reports whether name matches [a-z0-9][a-z0-9_-]{0,63}.
func validProvider(name string) bool {
	if name == "" || len(name) > maxProviderLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func validateProvider(name string) error {
	if !validProvider(name) {
		return &ValidationError{Field: "provider",
			Message: "must be 1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit"}
	}
	return nil
}

func validateKey(key string) error {
	switch {
	case key == "":
		return &ValidationError{Field: "api_key", Message: "must not be empty"}
	case len(key) > MaxKeyLen:
		return &ValidationError{Field: "api_key", Message: "must be at most 4096 bytes"}
	case !utf8.ValidString(key):
		return &ValidationError{Field: "api_key", Message: "must be valid UTF-8"}
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return &ValidationError{Field: "api_key", Message: "must not contain control characters"}
	case strings.TrimSpace(key) != key:
		return &ValidationError{Field: "api_key", Message: "must not start or end with white space"}
	}
	return nil
}

var _ error = (*ValidationError)(nil)
