package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// errorBody is Google's error shape, {"error":{"code","message","status",
// "details"}}; Vertex AI sometimes wraps it in an array.
type errorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			Reason     string `json:"reason"`
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	} `json:"error"`
}

func parseError(body []byte) errorBody {
	var b errorBody
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []errorBody
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			return list[0]
		}
		return b
	}
	_ = json.Unmarshal(body, &b)
	return b
}

// DecodeError maps Google's error answer, with the OpenAI adapter's policy:
// the caller's mistakes (400, 404, 413) keep their status and the message; a
// refusal of svc's credentials (401, 403, and a 400 whose reason is
// API_KEY_INVALID) is 502 without the message; 429 (RESOURCE_EXHAUSTED) stays
// 429 with Retry-After (from the header, else from RetryInfo); 504
// (DEADLINE_EXCEEDED) and 408 are timeouts; other failures are 502.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	b := parseError(body)
	msg := apierr.Redact(strings.TrimSpace(b.Error.Message))
	e := &apierr.Error{Code: strings.ToLower(b.Error.Status), Message: msg, Err: fmt.Errorf("%s answered HTTP %d", providerName, status)}
	keyInvalid, retryDelay := false, time.Duration(0)
	for _, d := range b.Error.Details {
		if d.Reason == "API_KEY_INVALID" || d.Reason == "ACCESS_TOKEN_EXPIRED" || d.Reason == "CREDENTIALS_MISSING" {
			keyInvalid = true
		}
		if d.RetryDelay != "" {
			if dd, err := time.ParseDuration(d.RetryDelay); err == nil && dd > 0 {
				retryDelay = dd
			}
		}
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || keyInvalid:
		// Never relay the message: it may describe or echo the credential.
		e.Kind, e.Code = apierr.UpstreamError, "upstream_auth_failed"
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider key", providerName, status)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusConflict:
		e.Kind = apierr.InvalidRequest
		if msg == "" {
			e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)", providerName, status)
		}
	case status == http.StatusNotFound:
		e.Kind = apierr.NotFound
		if msg == "" {
			e.Message = fmt.Sprintf("%s: not found (HTTP 404)", providerName)
		}
	case status == http.StatusRequestEntityTooLarge:
		e.Kind = apierr.TooLarge
		if msg == "" {
			e.Message = fmt.Sprintf("%s: request too large", providerName)
		}
	case status == http.StatusTooManyRequests:
		e.Kind = apierr.RateLimited
		if e.Code == "" {
			e.Code = "upstream_rate_limited"
		}
		e.Message = fmt.Sprintf("%s rate limit: %s", providerName, orDefault(msg, "too many requests"))
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
		if e.RetryAfter == 0 {
			e.RetryAfter = retryDelay
		}
	case status == http.StatusGatewayTimeout || status == http.StatusRequestTimeout || b.Error.Status == "DEADLINE_EXCEEDED":
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
