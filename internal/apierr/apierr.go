// Package apierr owns svc's error model: one Error type carrying a Kind, the
// single Kind→HTTP status table, and the OpenAI-shaped JSON error body (and its
// SSE form for failures after a stream has started).
//
// Every package may import apierr; it imports only the standard library.
// Middlewares and adapters return *Error values; only the HTTP surfaces write
// them. Never choose a status by matching an error string.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Kind classifies an error. Each kind has exactly one HTTP status.
type Kind uint8

// The kinds, in the order of the status table.
const (
	Internal         Kind = iota // 500: a bug or an unexpected failure of ours
	InvalidRequest               // 400: malformed or invalid request from the caller
	Unauthenticated              // 401: missing, unknown or revoked credential
	BudgetExceeded               // 402: spend cap exhausted
	Forbidden                    // 403: policy, guard or model restriction
	NotFound                     // 404: resource or route does not exist
	Conflict                     // 409: resource already exists or state conflict
	TooLarge                     // 413: body over the limit
	RateLimited                  // 429: rate limit exceeded (ours or the provider's)
	ClientClosed                 // 499: the caller went away
	UpstreamError                // 502: provider answered with an error, or the connection failed
	Unavailable                  // 503: no provider available, fallback chain exhausted, store down
	UpstreamTimeout              // 504: provider did not answer in time
	UnsupportedMedia             // 415: a body of a type the route does not take
)

var statuses = [...]int{
	Internal:         http.StatusInternalServerError,
	InvalidRequest:   http.StatusBadRequest,
	Unauthenticated:  http.StatusUnauthorized,
	BudgetExceeded:   http.StatusPaymentRequired,
	Forbidden:        http.StatusForbidden,
	NotFound:         http.StatusNotFound,
	Conflict:         http.StatusConflict,
	TooLarge:         http.StatusRequestEntityTooLarge,
	RateLimited:      http.StatusTooManyRequests,
	ClientClosed:     499,
	UpstreamError:    http.StatusBadGateway,
	Unavailable:      http.StatusServiceUnavailable,
	UpstreamTimeout:  http.StatusGatewayTimeout,
	UnsupportedMedia: http.StatusUnsupportedMediaType,
}

// types are the OpenAI-style `error.type` values per kind.
var types = [...]string{
	Internal:         "server_error",
	InvalidRequest:   "invalid_request_error",
	Unauthenticated:  "authentication_error",
	BudgetExceeded:   "budget_exceeded",
	Forbidden:        "permission_error",
	NotFound:         "not_found_error",
	Conflict:         "conflict_error",
	TooLarge:         "invalid_request_error",
	RateLimited:      "rate_limit_error",
	ClientClosed:     "client_closed_request",
	UpstreamError:    "upstream_error",
	Unavailable:      "service_unavailable",
	UpstreamTimeout:  "timeout_error",
	UnsupportedMedia: "invalid_request_error",
}

// Status is the HTTP status of kind k.
func (k Kind) Status() int {
	if int(k) < len(statuses) {
		return statuses[k]
	}
	return http.StatusInternalServerError
}

// Type is the OpenAI-style error type string of kind k.
func (k Kind) Type() string {
	if int(k) < len(types) {
		return types[k]
	}
	return types[Internal]
}

// Error is svc's error value. Message is safe to show the caller; Err is the
// cause, logged but never sent.
type Error struct {
	Kind    Kind
	Code    string // machine-readable code, e.g. "invalid_api_key"; optional
	Param   string // the offending request field, when there is one
	Message string
	Err     error
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
	// Header carries extra response headers (x-ratelimit-*, provider's Retry-After).
	Header http.Header
	// Extra fields merged into the JSON error object (guard: rule_id, severity, …).
	Extra map[string]any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status for e.
func (e *Error) Status() int { return e.Kind.Status() }

// New returns an Error of kind with a client-safe message.
func New(kind Kind, code, msg string) *Error {
	return &Error{Kind: kind, Code: code, Message: msg}
}

// Newf is New with a formatted message.
func Newf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error of kind whose cause is err and whose message is msg.
func Wrap(kind Kind, code, msg string, err error) *Error {
	return &Error{Kind: kind, Code: code, Message: msg, Err: err}
}

// BadParam is an InvalidRequest about one request field.
func BadParam(param, format string, args ...any) *Error {
	return &Error{Kind: InvalidRequest, Code: "invalid_value", Param: param, Message: fmt.Sprintf(format, args...)}
}

// From returns err as an *Error. A cancelled context anywhere in err's
// chain is the caller going away (499), whatever wrapped it: this is the
// one place that decides so. Any other error that is not an *Error becomes
// Internal with a generic message, so no unexpected cause text reaches a
// caller.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	isErr := errors.As(err, &e)
	if isErr && e.Kind == ClientClosed {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Kind: ClientClosed, Code: "client_closed", Message: "the client closed the request", Err: err}
	}
	if isErr {
		return e
	}
	return &Error{Kind: Internal, Code: "internal_error", Message: "internal error", Err: err}
}

// KindOf is the kind of err (Internal when err is not an *Error, and for
// nil, which has none: callers ask about failures).
func KindOf(err error) Kind {
	if err == nil {
		return Internal
	}
	return From(err).Kind
}

// SetHeaders writes e's Retry-After and extra headers to h.
func (e *Error) SetHeaders(h http.Header) {
	for k, v := range e.Header {
		h[k] = v
	}
	if e.RetryAfter > 0 && h.Get("Retry-After") == "" {
		secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}

var names = [...]string{
	Internal:         "Internal",
	InvalidRequest:   "InvalidRequest",
	Unauthenticated:  "Unauthenticated",
	BudgetExceeded:   "BudgetExceeded",
	Forbidden:        "Forbidden",
	NotFound:         "NotFound",
	Conflict:         "Conflict",
	TooLarge:         "TooLarge",
	RateLimited:      "RateLimited",
	ClientClosed:     "ClientClosed",
	UpstreamError:    "UpstreamError",
	Unavailable:      "Unavailable",
	UpstreamTimeout:  "UpstreamTimeout",
	UnsupportedMedia: "UnsupportedMedia",
}

// String is the kind's name, as the constants spell it.
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}
