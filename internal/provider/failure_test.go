package provider_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// TestUpstreamErrorRedactsEveryField checks that a key the provider echoes in
// its message, param, code or detail reaches neither the caller's body nor
// the logged cause, whatever the status.
func TestUpstreamErrorRedactsEveryField(t *testing.T) {
	key := "gsk_" + strings.Repeat("Ab3xQ9", 9)[:52]
	for _, status := range []int{400, 404, 409, 413, 422, 429, 500, 503, 504, 529} {
		f := provider.Failure{
			Status:  status,
			Message: "invalid value " + key,
			Param:   key,
			Code:    "bad_key_" + key,
			Detail:  "request for " + key,
		}
		e := provider.UpstreamError("groq", http.Header{}, f)
		for name, out := range map[string]string{"body": string(apierr.JSON(e)), "cause": e.Error(), "param": e.Param, "code": e.Code} {
			if strings.Contains(out, key) {
				t.Errorf("HTTP %d: the key reaches the %s: %s", status, name, out)
			}
		}
	}
}

// TestUpstreamErrorKeepsOrdinaryFields checks that redaction leaves a
// provider's ordinary param and code as they are.
func TestUpstreamErrorKeepsOrdinaryFields(t *testing.T) {
	e := provider.UpstreamError("openai", http.Header{}, provider.Failure{Status: 400, Message: "bad", Param: "messages[0].content", Code: "invalid_value"})
	if e.Param != "messages[0].content" || e.Code != "invalid_value" {
		t.Errorf("got param %q code %q, want messages[0].content and invalid_value", e.Param, e.Code)
	}
}
