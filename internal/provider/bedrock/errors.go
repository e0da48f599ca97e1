package bedrock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// errorBody is an AWS JSON error: {"message": …} (some services spell it
// "Message") with the type in the x-amzn-errortype header or "__type".
type errorBody struct {
	Message  string `json:"message"`
	MessageU string `json:"Message"`
	Type     string `json:"__type"`
}

// errorType is the short AWS error type: "ValidationException" from
// "ValidationException:http://internal.amazon.com/coral/…" or
// "com.amazon.coral.validate#ValidationException".
func errorType(header http.Header, b errorBody) string {
	t := header.Get("X-Amzn-Errortype")
	if t == "" {
		t = b.Type
	}
	t, _, _ = strings.Cut(t, ":")
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// DecodeError maps Bedrock's error answer with the policy of every adapter:
// the caller's mistakes (400 ValidationException, 404 ResourceNotFound, 413)
// keep the provider's message; the refusal of svc's credentials (401, 403
// AccessDenied, UnrecognizedClient) is a 502 without it; throttling is 429;
// the model's and the service's failures (5xx, ServiceUnavailable,
// ModelNotReady) are 502; 408 and ModelTimeout are timeouts.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	msg := apierr.Redact(strings.TrimSpace(orDefault(b.Message, b.MessageU)))
	typ := errorType(header, b)
	e := &apierr.Error{Code: typ, Message: msg, Err: fmt.Errorf("%s answered HTTP %d %s", providerName, status, typ)}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		typ == "AccessDeniedException" || typ == "UnrecognizedClientException" || typ == "InvalidSignatureException" ||
		typ == "ExpiredTokenException" || typ == "MissingAuthenticationTokenException":
		// Never relay the message: it may name the account, role or key id.
		e.Kind, e.Code = apierr.UpstreamError, "upstream_auth_failed"
		e.Message = fmt.Sprintf("%s rejected svc's credentials for this provider (HTTP %d); an administrator must fix the provider credentials", providerName, status)
	case typ == "ModelNotReadyException" || typ == "ServiceUnavailableException" || status >= 500:
		e.Kind, e.Code = apierr.UpstreamError, "upstream_error"
		e.Message = fmt.Sprintf("%s failed (HTTP %d)", providerName, status)
		if msg != "" {
			e.Message += ": " + msg
		}
	case status == http.StatusRequestTimeout || typ == "ModelTimeoutException":
		e.Kind, e.Code = apierr.UpstreamTimeout, "upstream_timeout"
		e.Message = fmt.Sprintf("%s timed out", providerName)
		if msg != "" {
			e.Message += ": " + msg
		}
	case status == http.StatusTooManyRequests || typ == "ThrottlingException":
		e.Kind, e.Code = apierr.RateLimited, "upstream_rate_limited"
		e.Message = fmt.Sprintf("%s rate limit: %s", providerName, orDefault(msg, "too many requests"))
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
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
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusConflict:
		e.Kind = apierr.InvalidRequest
		if msg == "" {
			e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)", providerName, status)
		}
	default: // 424 ModelErrorException and anything else
		e.Kind, e.Code = apierr.UpstreamError, "upstream_error"
		e.Message = fmt.Sprintf("%s failed (HTTP %d)", providerName, status)
		if msg != "" {
			e.Message += ": " + msg
		}
	}
	if e.Code == "" {
		e.Code = "upstream_error"
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
