package apierr

import (
	"encoding/json"
	"net/http"
)

// anthropicTypes are the error types of Anthropic's API, for the native
// passthrough routes whose clients (Anthropic SDKs, editors) parse that shape.
var anthropicTypes = [...]string{
	Internal:         "api_error",
	InvalidRequest:   "invalid_request_error",
	Unauthenticated:  "authentication_error",
	BudgetExceeded:   "billing_error",
	Forbidden:        "permission_error",
	NotFound:         "not_found_error",
	Conflict:         "invalid_request_error",
	TooLarge:         "request_too_large",
	RateLimited:      "rate_limit_error",
	ClientClosed:     "api_error",
	UpstreamError:    "api_error",
	Unavailable:      "overloaded_error",
	UpstreamTimeout:  "timeout_error",
	UnsupportedMedia: "invalid_request_error",
}

// AnthropicJSON is err in Anthropic's shape:
// {"type":"error","error":{"type","message"}}.
func AnthropicJSON(err error) []byte {
	e := From(err)
	t := anthropicTypes[Internal]
	if int(e.Kind) < len(anthropicTypes) {
		t = anthropicTypes[e.Kind]
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": t, "message": e.Message}})
	return b
}

// WriteAnthropic answers err on w in Anthropic's shape, with its status and
// headers.
func WriteAnthropic(w http.ResponseWriter, err error) {
	e := From(err)
	h := w.Header()
	e.SetHeaders(h)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(e.Status())
	_, _ = w.Write(AnthropicJSON(e))
}
