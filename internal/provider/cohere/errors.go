package cohere

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// errorBody is Cohere's error answer: {"message": "..."}, sometimes with an
// "id".
type errorBody struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// DecodeError reads Cohere's error body and applies svc's policy
// (provider.UpstreamError).
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	f := provider.Failure{Status: status, Message: strings.TrimSpace(b.Message)}
	if b.ID != "" {
		f.Detail = "request id " + b.ID
	}
	return provider.UpstreamError(providerName, header, f)
}
