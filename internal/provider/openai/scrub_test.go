package openai_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// TestDecodeErrorScrub checks that a key OpenAI (or an OpenAI-compatible
// provider: Groq, xAI, Azure, a local server) echoes in its error's message,
// param or code reaches nothing a caller, a log or a store sees once svc
// scrubs the key it sent.
func TestDecodeErrorScrub(t *testing.T) {
	for name, a := range map[string]*openai.Adapter{"openai": openai.New(), "azure": openai.NewAzure()} {
		t.Run(name, func(t *testing.T) {
			goldentest.CheckScrub(t,
				func(status int, h http.Header, body []byte) *apierr.Error {
					return a.DecodeError(name, status, h, body)
				},
				func(status int, message, param, code string) (http.Header, []byte) {
					b, _ := json.Marshal(map[string]any{"error": map[string]any{
						"message": message, "type": "invalid_request_error", "param": param, "code": code}})
					return http.Header{"Content-Type": {"application/json"}}, b
				})
		})
	}
}
