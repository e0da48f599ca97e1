package saml

import (
	"errors"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Reason names the check an assertion failed. It is the suffix of the
// apierr code ("saml_" + reason) and safe to show and to count in metrics.
type Reason string

// The reasons Verify refuses an assertion for.
const (
	// ReasonMalformed: not base64, not XML, over a size or count bound,
	// comments or a DOCTYPE in the document, duplicate IDs, not exactly one
	// assertion, a missing or unparsable required field, a value with
	// control characters, no username.
	ReasonMalformed Reason = "malformed"
	// ReasonSignature: unsigned, or the signature does not verify against
	// the identity provider's certificate(s), or it does not reference the
	// element it sits in.
	ReasonSignature Reason = "signature"
	// ReasonAlgorithm: a signature, digest, canonicalization or transform
	// algorithm outside the allow-list (SHA-1 among them).
	ReasonAlgorithm Reason = "algorithm"
	// ReasonExpired: now is at or past a NotOnOrAfter (Conditions or
	// SubjectConfirmationData), beyond the skew.
	ReasonExpired Reason = "expired"
	// ReasonNotYetValid: now is before a NotBefore, beyond the skew.
	ReasonNotYetValid Reason = "not_yet_valid"
	// ReasonAudience: no AudienceRestriction, or one that does not name the
	// service provider's entity id.
	ReasonAudience Reason = "audience"
	// ReasonIssuer: the assertion's Issuer is not the identity provider's
	// entity id (checked when one is configured or the metadata names one).
	ReasonIssuer Reason = "issuer"
	// ReasonStatus: a Response whose StatusCode is not Success.
	ReasonStatus Reason = "status"
	// ReasonReplayed: the assertion's ID was already accepted.
	ReasonReplayed Reason = "replayed"
	// ReasonMetadataFetch: the identity provider's metadata could not be
	// fetched or holds no usable signing certificate (502).
	ReasonMetadataFetch Reason = "metadata_fetch"
	// ReasonReplayUnavailable: the replay cache could not record the
	// assertion (store down, or the in-memory cache full) (503).
	ReasonReplayUnavailable Reason = "replay_unavailable"
)

// Error is the cause inside every error Verify returns: which check failed,
// with the underlying error (a library's message, for logs). It never holds
// the assertion or any value read from it.
type Error struct {
	Reason Reason
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "saml: " + string(e.Reason) + ": " + e.Err.Error()
	}
	return "saml: " + string(e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the reason of an error Verify returned, or "" when err
// carries none.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// kindOf is the one reason→HTTP table: the identity provider unreachable is
// a bad gateway, the replay store down is unavailable, and every refused
// assertion is an unauthenticated caller.
func kindOf(r Reason) apierr.Kind {
	switch r {
	case ReasonMetadataFetch:
		return apierr.UpstreamError
	case ReasonReplayUnavailable:
		return apierr.Unavailable
	default:
		return apierr.Unauthenticated
	}
}

// fail returns the *apierr.Error for reason: code "saml_<reason>", the
// client-safe message msg (a fixed text, never assertion content), and the
// cause wrapped in *Error.
func fail(reason Reason, msg string, cause error) error {
	return &apierr.Error{
		Kind:    kindOf(reason),
		Code:    "saml_" + string(reason),
		Message: "SAML sign-in failed (" + string(reason) + "): " + msg,
		Err:     &Error{Reason: reason, Err: cause},
	}
}
