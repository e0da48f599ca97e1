package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Class says what a provider's error answer means for the caller, when the
// provider tells more than its HTTP status (an AWS exception type, a Google
// reason). ClassByStatus leaves it to the status.
type Class uint8

// Classes of provider failures.
const (
	ClassByStatus  Class = iota
	ClassAuth            // the provider refused svc's credentials
	ClassInvalid         // the caller's request is wrong
	ClassNotFound        // the model or resource does not exist
	ClassRateLimit       // the provider throttles
	ClassTimeout         // the provider timed out
	ClassServer          // the provider failed
)

// Failure is a provider's error answer as its adapter read it. Message,
// Code, Param and Detail are the provider's text: UpstreamError redacts each
// (providers echo keys in any of them).
type Failure struct {
	Status  int
	Message string // the provider's message
	Code    string // the provider's code or type, kept where the caller can act on it
	Param   string // the offending field, when the provider names one
	Detail  string // logged only: request id, exception type
	Class   Class
	// RetryAfter from the body (Google's RetryInfo); the Retry-After header wins.
	RetryAfter time.Duration
	// Overloaded marks a failure from an overloaded provider (Anthropic's 529).
	Overloaded bool
}

// UpstreamError applies svc's one policy to a provider's error answer: the
// caller's mistakes (400, 404, 413, 422) keep their status and the provider's
// message; a refusal of svc's credentials (401, 403) is 502 without the
// provider's message (providers echo key fragments); 429 stays 429 with its
// Retry-After; 408/504 are timeouts; everything else is 502. Whatever has a
// credential's shape is redacted from every field (apierr.Redact); the caller
// scrubs the exact key it sent with apierr.Scrub.
func UpstreamError(provider string, header http.Header, f Failure) *apierr.Error {
	msg := apierr.Redact(f.Message)
	f.Code, f.Param = apierr.Redact(f.Code), apierr.Redact(f.Param)
	cause := fmt.Sprintf("%s answered HTTP %d", provider, f.Status)
	if f.Detail != "" {
		cause += ": " + apierr.Redact(f.Detail)
	}
	e := &apierr.Error{Code: f.Code, Message: msg, Err: errors.New(cause)}
	class := f.Class
	if class == ClassByStatus {
		class = classOf(f.Status)
	}
	switch class {
	case ClassAuth:
		e.Kind, e.Code = apierr.UpstreamError, "upstream_auth_failed"
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider's credentials", provider, f.Status)
	case ClassInvalid:
		e.Kind, e.Param = apierr.InvalidRequest, f.Param
		if f.Status == http.StatusRequestEntityTooLarge {
			e.Kind = apierr.TooLarge
		}
		if msg == "" {
			e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)", provider, f.Status)
		}
	case ClassNotFound:
		e.Kind = apierr.NotFound
		if msg == "" {
			e.Message = fmt.Sprintf("%s: not found (HTTP %d)", provider, f.Status)
		}
	case ClassRateLimit:
		e.Kind = apierr.RateLimited
		if e.Code == "" {
			e.Code = "upstream_rate_limited"
		}
		if msg == "" {
			msg = "too many requests"
		}
		e.Message = fmt.Sprintf("%s rate limit: %s", provider, msg)
		e.RetryAfter = RetryAfter(header.Get("Retry-After"))
		if e.RetryAfter == 0 {
			e.RetryAfter = f.RetryAfter
		}
	case ClassTimeout:
		e.Kind, e.Code = apierr.UpstreamTimeout, "upstream_timeout"
		e.Message = fmt.Sprintf("%s timed out (HTTP %d)", provider, f.Status)
		if msg != "" {
			e.Message += ": " + msg
		}
	default:
		e.Kind, e.Code, e.Param = apierr.UpstreamError, "upstream_error", ""
		if f.Overloaded {
			e.Code = "upstream_overloaded"
		}
		e.Message = fmt.Sprintf("%s failed (HTTP %d)", provider, f.Status)
		if msg != "" {
			e.Message += ": " + msg
		}
	}
	return e
}

func classOf(status int) Class {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict, http.StatusRequestEntityTooLarge:
		return ClassInvalid
	case http.StatusNotFound:
		return ClassNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ClassAuth
	case http.StatusTooManyRequests:
		return ClassRateLimit
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return ClassTimeout
	}
	return ClassServer
}

// RetryAfter reads a Retry-After header: seconds, or an HTTP date.
func RetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
