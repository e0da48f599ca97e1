package cohere_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestDecodeErrorScrub checks that a key Cohere echoes in its error reaches
// nothing a caller, a log or a store sees once svc scrubs the key it sent.
// Cohere's errors have only a message and an id: the test puts the param in
// the message and the code in the id (which is logged).
func TestDecodeErrorScrub(t *testing.T) {
	a := cohere.New()
	goldentest.CheckScrub(t,
		func(status int, h http.Header, body []byte) *apierr.Error {
			return a.DecodeError("cohere", status, h, body)
		},
		func(status int, message, param, code string) (http.Header, []byte) {
			b, _ := json.Marshal(map[string]any{"id": code, "message": message + " (" + param + ")"})
			return http.Header{"Content-Type": {"application/json"}}, b
		})
}
