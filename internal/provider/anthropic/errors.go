package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// errorInfo is the "error" object of Anthropic's error body
// {"type":"error","error":{"type","message"}}, also sent as a stream event.
type errorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type errorBody struct {
	Type  string    `json:"type"`
	Error errorInfo `json:"error"`
}

// DecodeError maps Anthropic's error answer with the policy of every adapter:
// the caller's mistakes (400, 404, 413, 422) keep their status and the
// provider's message (credentials redacted); the provider's refusal of svc's
// own credentials (401, 403) is a 502 that does not relay the message; 429
// stays 429 with its Retry-After; the provider's failures (500, 502, 503,
// 529 overloaded, …) are 502; 408 and 504 are timeouts.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	msg := apierr.Redact(strings.TrimSpace(b.Error.Message))
	cause := fmt.Sprintf("%s answered HTTP %d", providerName, status)
	if id := header.Get("Request-Id"); id != "" {
		cause += " (request-id " + id + ")"
	}
	if b.Error.Type != "" {
		cause += ": " + b.Error.Type
	}
	e := &apierr.Error{Code: b.Error.Type, Message: msg, Err: errors.New(cause)}
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict:
		e.Kind = apierr.InvalidRequest
		if msg == "" {
			e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)", providerName, status)
		}
	case http.StatusNotFound:
		e.Kind = apierr.NotFound
		if msg == "" {
			e.Message = fmt.Sprintf("%s: not found (HTTP 404)", providerName)
		}
	case http.StatusRequestEntityTooLarge:
		e.Kind = apierr.TooLarge
		if msg == "" {
			e.Message = fmt.Sprintf("%s: request too large", providerName)
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		// Never relay the message: it may quote the key.
		e.Kind, e.Code = apierr.UpstreamError, "upstream_auth_failed"
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider key", providerName, status)
	case http.StatusTooManyRequests:
		e.Kind = apierr.RateLimited
		if e.Code == "" {
			e.Code = "upstream_rate_limited"
		}
		e.Message = fmt.Sprintf("%s rate limit: %s", providerName, orDefault(msg, "too many requests"))
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		e.Kind, e.Code = apierr.UpstreamTimeout, "upstream_timeout"
		e.Message = fmt.Sprintf("%s timed out (HTTP %d)", providerName, status)
	default:
		e.Kind, e.Code = apierr.UpstreamError, "upstream_error"
		if status == 529 || b.Error.Type == "overloaded_error" {
			e.Code = "upstream_overloaded"
		}
		e.Message = fmt.Sprintf("%s failed (HTTP %d)", providerName, status)
		if msg != "" {
			e.Message += ": " + msg
		}
	}
	return e
}

// streamError is the error an in-stream error event ends the stream with.
func streamError(info errorInfo) error {
	msg := "the provider reported an error mid-stream"
	if m := apierr.Redact(strings.TrimSpace(info.Message)); m != "" {
		msg += ": " + m
	}
	kind, code := apierr.UpstreamError, "upstream_stream_error"
	switch info.Type {
	case "overloaded_error":
		code = "upstream_overloaded"
	case "rate_limit_error":
		kind, code = apierr.RateLimited, "upstream_rate_limited"
	}
	return &apierr.Error{Kind: kind, Code: code, Message: msg, Err: fmt.Errorf("stream error event: %s", info.Type)}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func retryAfter(v string) time.Duration {
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
