package token

import (
	"errors"

	"github.com/golang-jwt/jwt/v5"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Reasons a token is refused.
const (
	ReasonMalformed   = "malformed"
	ReasonSignature   = "signature"
	ReasonExpired     = "expired"
	ReasonNotYetValid = "not_yet_valid"
	ReasonIssuer      = "issuer"
	ReasonAudience    = "audience"
	ReasonRevoked     = "revoked"
	ReasonUnavailable = "revocations_unavailable" // the revocation list could not be read
)

// Error is a refused token: Reason names the check. It never holds the
// token.
type Error struct {
	Reason string
	cause  error
}

func (e *Error) Error() string { return "token: " + e.Reason }

// Unwrap gives the cause of a ReasonUnavailable.
func (e *Error) Unwrap() error { return e.cause }

// API is the error as svc answers it: 401 with a code naming the check
// (503 when the revocation list could not be read: a token is never
// accepted unchecked).
func (e *Error) API() *apierr.Error {
	if e.Reason == ReasonUnavailable {
		return apierr.Wrap(apierr.Unavailable, "revocations_unavailable", "the sign-in revocation list could not be read", e.cause)
	}
	msg := map[string]string{
		ReasonMalformed:   "the sign-in token is malformed",
		ReasonSignature:   "the sign-in token's signature is not valid",
		ReasonExpired:     "the sign-in token has expired: sign in again",
		ReasonNotYetValid: "the sign-in token is not valid yet",
		ReasonIssuer:      "the sign-in token was not issued by svc",
		ReasonAudience:    "the sign-in token is not meant for svc",
		ReasonRevoked:     "the sign-in token was revoked",
	}[e.Reason]
	return apierr.New(apierr.Unauthenticated, "token_"+e.Reason, msg)
}

// classify maps golang-jwt's errors to a Reason.
func classify(err error) *Error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return &Error{Reason: ReasonExpired}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return &Error{Reason: ReasonNotYetValid}
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return &Error{Reason: ReasonIssuer}
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return &Error{Reason: ReasonAudience}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, errUnknownKey):
		return &Error{Reason: ReasonSignature}
	}
	return &Error{Reason: ReasonMalformed}
}
