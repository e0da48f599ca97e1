package kerberos

import (
	"net/http"
	"strings"
)

// scheme is the HTTP authentication scheme of SPNEGO (RFC 4559).
const scheme = "Negotiate"

// Challenge adds "WWW-Authenticate: Negotiate" to w's header, for the 401
// that answers a request without a Negotiate token (browsers and curl
// --negotiate send their token only after it). It leaves other schemes'
// challenges in place and does not add the header twice.
func Challenge(w http.ResponseWriter) {
	h := w.Header()
	for _, v := range h.Values("WWW-Authenticate") {
		if strings.EqualFold(strings.TrimSpace(v), scheme) {
			return
		}
	}
	h.Add("WWW-Authenticate", scheme)
}

// SetResponseToken sets "WWW-Authenticate: Negotiate <token>" on w, the
// mutual-authentication answer Verify returned; an empty token sets
// nothing.
func SetResponseToken(w http.ResponseWriter, token string) {
	if token != "" {
		w.Header().Set("WWW-Authenticate", scheme+" "+token)
	}
}

// TokenFromAuthorization returns the token of an Authorization header
// value "Negotiate <token>" (the scheme matched case-insensitively); ok is
// false for any other scheme. The token may be empty: Verify reports that
// as no_token.
func TokenFromAuthorization(value string) (token string, ok bool) {
	s := strings.TrimLeft(value, " \t")
	if len(s) < len(scheme) || !strings.EqualFold(s[:len(scheme)], scheme) {
		return "", false
	}
	rest := s[len(scheme):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "NegotiateX"
	}
	return strings.TrimSpace(rest), true
}
