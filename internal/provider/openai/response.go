package openai

import (
	"context"
	"encoding/json"
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// lenient reads providers' answers: a duplicate name or invalid UTF-8 in an
// answer must not turn a successful call into an error (callers' requests, in
// contrast, are decoded strictly).
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// summary is the part of a completion or chunk svc reads.
type summary struct {
	Model   string     `json:"model"`
	Usage   *llm.Usage `json:"usage"`
	Choices []struct{} `json:"choices"`
}

// DecodeChat returns the provider's body unchanged with its usage and model.
func (a *Adapter) DecodeChat(body []byte) ([]byte, llm.Usage, string, error) {
	var s summary
	if err := jsonv2.Unmarshal(body, &s, lenient); err != nil {
		return nil, llm.Usage{}, "", apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid chat completion", err)
	}
	var u llm.Usage
	if s.Usage != nil {
		u = *s.Usage
	}
	return body, u, s.Model, nil
}

// NewModelsRequest builds GET {base}/models.
func (a *Adapter) NewModelsRequest(ctx context.Context, t provider.Deployment) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.urlFor(t, "models"), nil)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeModels reads the ids of a model list.
func (a *Adapter) DecodeModels(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's model list is not valid", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
