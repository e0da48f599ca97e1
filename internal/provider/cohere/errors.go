package cohere

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// errorBody is Cohere's error answer: {"message": "..."}, sometimes with an
// "id".
type errorBody struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// DecodeError maps Cohere's error answer as the OpenAI adapter maps OpenAI's:
// the caller's mistakes (400, 404, 413, 422) keep their status and Cohere's
// message (credential-like strings redacted); Cohere's refusal of svc's own
// key (401, 403) is 502 without the message; 429 stays 429 with Retry-After;
// 408 is a timeout; anything else — 5xx, 402, and 499 (Cohere saying the
// request was cancelled: svc's caller did not close anything) — is 502.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	msg := apierr.Redact(strings.TrimSpace(b.Message))
	cause := fmt.Errorf("%s answered HTTP %d", providerName, status)
	if b.ID != "" {
		cause = fmt.Errorf("%s answered HTTP %d (request id %s)", providerName, status, b.ID)
	}
	e := &apierr.Error{Message: msg, Err: cause}
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict:
		e.Kind, e.Code = apierr.InvalidRequest, "invalid_request"
		if msg == "" {
			e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)", providerName, status)
		}
	case http.StatusNotFound:
		e.Kind, e.Code = apierr.NotFound, "not_found"
		if msg == "" {
			e.Message = fmt.Sprintf("%s: not found (HTTP 404)", providerName)
		}
	case http.StatusRequestEntityTooLarge:
		e.Kind, e.Code = apierr.TooLarge, "request_too_large"
		if msg == "" {
			e.Message = fmt.Sprintf("%s: request too large", providerName)
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		// Never relay the message: it may echo parts of the key.
		e.Kind, e.Code = apierr.UpstreamError, "upstream_auth_failed"
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider key", providerName, status)
	case http.StatusTooManyRequests:
		e.Kind, e.Code = apierr.RateLimited, "upstream_rate_limited"
		e.Message = fmt.Sprintf("%s rate limit: %s", providerName, orDefault(msg, "too many requests"))
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
	case http.StatusRequestTimeout:
		e.Kind, e.Code = apierr.UpstreamTimeout, "upstream_timeout"
		e.Message = fmt.Sprintf("%s timed out", providerName)
	default:
		e.Kind, e.Code = apierr.UpstreamError, "upstream_error"
		e.Message = fmt.Sprintf("%s failed (HTTP %d)", providerName, status)
		if msg != "" {
			e.Message += ": " + msg
		}
	}
	return e
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
