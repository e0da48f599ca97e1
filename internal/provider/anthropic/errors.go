package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
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

// DecodeError reads Anthropic's error body and applies svc's policy
// (provider.UpstreamError); the error type is kept as the code.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	f := provider.Failure{Status: status, Message: strings.TrimSpace(b.Error.Message), Code: b.Error.Type,
		Overloaded: status == 529 || b.Error.Type == "overloaded_error"}
	if id := header.Get("Request-Id"); id != "" {
		f.Detail = "request-id " + id
	}
	if b.Error.Type != "" {
		f.Detail = strings.TrimPrefix(f.Detail+"; "+b.Error.Type, "; ")
	}
	return provider.UpstreamError(providerName, header, f)
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
