package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

type errorBody struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   *string         `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// DecodeError maps the provider's error answer: the caller's mistakes (400,
// 404, 413, 422) keep their status and the provider's message; the provider's
// refusal of svc's own credentials (401, 403) and its failures (5xx) are 502;
// 429 stays 429 with its Retry-After; 408 is a timeout.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	msg := apierr.Redact(strings.TrimSpace(b.Error.Message))
	code := strings.Trim(string(b.Error.Code), `"`)
	if code == "null" {
		code = ""
	}
	e := &apierr.Error{Code: code, Message: msg, Err: fmt.Errorf("%s answered HTTP %d", providerName, status)}
	if b.Error.Param != nil {
		e.Param = *b.Error.Param
	}
	switch {
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
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// Never relay the message: providers echo parts of the key in it.
		e.Kind, e.Code, e.Param = apierr.UpstreamError, "upstream_auth_failed", ""
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider key", providerName, status)
	case status == http.StatusTooManyRequests:
		e.Kind = apierr.RateLimited
		if e.Code == "" {
			e.Code = "upstream_rate_limited"
		}
		e.Message = fmt.Sprintf("%s rate limit: %s", providerName, orDefault(msg, "too many requests"))
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
	case status == http.StatusRequestTimeout:
		e.Kind, e.Code = apierr.UpstreamTimeout, "upstream_timeout"
		e.Message = fmt.Sprintf("%s timed out", providerName)
	default:
		e.Kind, e.Code, e.Param = apierr.UpstreamError, "upstream_error", ""
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
