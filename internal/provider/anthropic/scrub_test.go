package anthropic_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestDecodeErrorScrub checks that a key Anthropic echoes in its error
// reaches nothing a caller, a log or a store sees once svc scrubs the key it
// sent. Anthropic's errors have no param: the test puts it in the message;
// the code is the error type.
func TestDecodeErrorScrub(t *testing.T) {
	a := anthropic.New()
	goldentest.CheckScrub(t,
		func(status int, h http.Header, body []byte) *apierr.Error {
			return a.DecodeError("anthropic", status, h, body)
		},
		func(status int, message, param, code string) (http.Header, []byte) {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{
				"type": code, "message": message + " (" + param + ")"}})
			return http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_011CSHoEeqs5C35K2UUqR7Fy"}}, b
		})
}
