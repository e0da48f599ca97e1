package openai

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

type errorBody struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   *string         `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// DecodeError reads OpenAI's error body and applies svc's policy
// (provider.UpstreamError).
func (a *Adapter) DecodeError(providerName string, status int, header http.Header, body []byte) *apierr.Error {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	code := strings.Trim(string(b.Error.Code), `"`)
	if code == "null" {
		code = ""
	}
	f := provider.Failure{Status: status, Message: strings.TrimSpace(b.Error.Message), Code: code}
	if b.Error.Param != nil {
		f.Param = *b.Error.Param
	}
	return provider.UpstreamError(providerName, header, f)
}
