package bedrock

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
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

// DecodeError reads AWS's error body and x-amzn-errortype and applies svc's
// policy (provider.UpstreamError); the exception type classifies the failure
// where it says more than the status.
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	typ := errorType(header, b)
	f := provider.Failure{Status: status, Message: strings.TrimSpace(orDefault(b.Message, b.MessageU)), Code: typ, Detail: typ}
	switch typ {
	case "AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException", "MissingAuthenticationTokenException":
		f.Class = provider.ClassAuth
	case "ModelNotReadyException", "ServiceUnavailableException":
		f.Class = provider.ClassServer
	case "ModelTimeoutException":
		f.Class = provider.ClassTimeout
	case "ThrottlingException":
		f.Class = provider.ClassRateLimit
	}
	return provider.UpstreamError(providerName, header, f)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
