package kerberos

import (
	"errors"
	"net/http"

	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/messages"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Reason names the check a Kerberos sign-in failed. The API error code is
// "kerberos_" + the reason.
type Reason string

// The reasons Verify and New fail with.
const (
	// ReasonNoToken: the Negotiate header carried no token.
	ReasonNoToken Reason = "no_token"
	// ReasonMalformed: the token is not base64, too large, or not a
	// decodable SPNEGO or Kerberos GSS-API initial token with an AP-REQ.
	ReasonMalformed Reason = "malformed"
	// ReasonUnsupportedMechanism: the client's preferred mechanism is not
	// Kerberos (NTLM, typically from a machine outside the realm).
	ReasonUnsupportedMechanism Reason = "unsupported_mechanism"
	// ReasonWrongService: the ticket is for another service principal or realm.
	ReasonWrongService Reason = "wrong_service"
	// ReasonKeytab: the keytab has no key for the ticket (key version or
	// encryption type; a rotated service key), or cannot be loaded.
	ReasonKeytab Reason = "keytab"
	// ReasonTicketInvalid: the ticket or authenticator does not decrypt or
	// does not match, the ticket carries addresses, or its PAC does not
	// verify.
	ReasonTicketInvalid Reason = "ticket_invalid"
	// ReasonExpired: the ticket's end time is past (beyond the clock skew).
	ReasonExpired Reason = "expired"
	// ReasonClockSkew: the authenticator's time, or the ticket's start
	// time, is further from ours than the allowed clock skew.
	ReasonClockSkew Reason = "clock_skew"
	// ReasonReplay: this authenticator was already presented (gokrb5's
	// replay cache, kept for the clock skew).
	ReasonReplay Reason = "replay"
)

// messages are the client-safe texts per reason; they never carry the token.
var reasonMessages = map[Reason]string{
	ReasonNoToken:              "no Negotiate token was sent",
	ReasonMalformed:            "the Negotiate token is not a valid SPNEGO or Kerberos token",
	ReasonUnsupportedMechanism: "the Negotiate token does not offer Kerberos first (NTLM is not supported)",
	ReasonWrongService:         "the Kerberos ticket is for another service principal",
	ReasonKeytab:               "the service has no key for this Kerberos ticket (key version or encryption type)",
	ReasonTicketInvalid:        "the Kerberos ticket or authenticator did not verify",
	ReasonExpired:              "the Kerberos ticket has expired",
	ReasonClockSkew:            "the Kerberos authenticator or ticket time is outside the allowed clock skew",
	ReasonReplay:               "the Kerberos authenticator was already used (replay)",
}

// Error is a failed Kerberos check. Detail is safe to show the caller and
// never holds the token; Err is the library's cause, for logs.
type Error struct {
	Reason Reason
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := "kerberos: " + string(e.Reason) + ": " + e.message()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) message() string {
	if e.Detail != "" {
		return e.Detail
	}
	if m, ok := reasonMessages[e.Reason]; ok {
		return m
	}
	return "Kerberos sign-in failed"
}

// API is e as svc's error: 401 (Unauthenticated) with code
// "kerberos_<reason>" and the header "WWW-Authenticate: Negotiate", so
// the client may try again with a fresh ticket.
func (e *Error) API() *apierr.Error {
	return &apierr.Error{
		Kind:    apierr.Unauthenticated,
		Code:    "kerberos_" + string(e.Reason),
		Message: "Kerberos sign-in failed: " + e.message(),
		Err:     e,
		Header:  http.Header{"Www-Authenticate": {scheme}},
	}
}

// ReasonOf is the Reason of the Kerberos check err failed, or "" when err
// is not one.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// fail is the *apierr.Error Verify returns for reason.
func fail(reason Reason, detail string, cause error) *apierr.Error {
	return (&Error{Reason: reason, Detail: detail, Err: cause}).API()
}

// classify maps a gokrb5 AP-REQ verification error to its reason, by the
// Kerberos error code when there is one. Other failures (decryption, PAC)
// are ticket_invalid.
func classify(err error) Reason {
	var ke messages.KRBError
	if !errors.As(err, &ke) {
		return ReasonTicketInvalid
	}
	switch ke.ErrorCode {
	case errorcode.KRB_AP_ERR_SKEW, errorcode.KRB_AP_ERR_TKT_NYV:
		return ReasonClockSkew
	case errorcode.KRB_AP_ERR_TKT_EXPIRED:
		return ReasonExpired
	case errorcode.KRB_AP_ERR_REPEAT:
		return ReasonReplay
	case errorcode.KRB_AP_ERR_NOKEY:
		return ReasonKeytab
	default:
		return ReasonTicketInvalid
	}
}
