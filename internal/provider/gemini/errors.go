package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
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

// DecodeError reads Google's error body and applies svc's policy
// (provider.UpstreamError). A 400 whose reason is an invalid key (how the
// Gemini API reports one) is a refusal of svc's credentials.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	b := parseError(body)
	f := provider.Failure{Status: status, Message: strings.TrimSpace(b.Error.Message), Code: strings.ToLower(b.Error.Status)}
	for _, d := range b.Error.Details {
		if d.Reason == "API_KEY_INVALID" || d.Reason == "ACCESS_TOKEN_EXPIRED" || d.Reason == "CREDENTIALS_MISSING" {
			f.Class = provider.ClassAuth
		}
		if d.RetryDelay != "" {
			if dd, err := time.ParseDuration(d.RetryDelay); err == nil && dd > 0 {
				f.RetryAfter = dd
			}
		}
	}
	if f.Class == provider.ClassByStatus && b.Error.Status == "DEADLINE_EXCEEDED" {
		f.Class = provider.ClassTimeout
	}
	return provider.UpstreamError(providerName, header, f)
}
