package gemini_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestDecodeErrorScrub checks that a key Google echoes in its error reaches
// nothing a caller, a log or a store sees once svc scrubs the key it sent.
// The code is Google's status (which the adapter lowercases), the param a
// field violation.
func TestDecodeErrorScrub(t *testing.T) {
	for name, a := range map[string]*gemini.Adapter{"gemini": gemini.New(), "vertex": gemini.NewVertex()} {
		t.Run(name, func(t *testing.T) {
			goldentest.CheckScrub(t,
				func(status int, h http.Header, body []byte) *apierr.Error {
					return a.DecodeError(name, status, h, body)
				},
				func(status int, message, param, code string) (http.Header, []byte) {
					b, _ := json.Marshal(map[string]any{"error": map[string]any{
						"code": status, "message": message, "status": code,
						"details": []any{map[string]any{
							"@type":           "type.googleapis.com/google.rpc.BadRequest",
							"fieldViolations": []any{map[string]any{"field": param, "description": message}},
						}}}})
					return http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, b
				})
		})
	}
}
