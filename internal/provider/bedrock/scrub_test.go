package bedrock_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestDecodeErrorScrub checks that a key AWS echoes in its error reaches
// nothing a caller, a log or a store sees once svc scrubs the key it sent
// (a Bedrock API key; SigV4 signs with svc's AWS credentials instead). AWS
// errors have a message and a type: the test puts the param in the message
// and the code in the type (which becomes the code and the logged detail).
func TestDecodeErrorScrub(t *testing.T) {
	a := bedrock.New()
	goldentest.CheckScrub(t,
		func(status int, h http.Header, body []byte) *apierr.Error {
			return a.DecodeError("bedrock", status, h, body)
		},
		func(status int, message, param, code string) (http.Header, []byte) {
			// The type is cut at its first ':' (AWS appends a URL there).
			typ := strings.ReplaceAll(code, ":", "-")
			b, _ := json.Marshal(map[string]any{"message": message + " (" + param + ")"})
			return http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {typ}}, b
		})
}
