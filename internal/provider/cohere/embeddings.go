package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// embedRequest is Cohere's v2 embed request for texts. svc always asks for
// float embeddings and encodes base64 itself: Cohere's "base64" type is not
// OpenAI's little-endian float32 encoding.
type embedRequest struct {
	Model           string   `json:"model"`
	Texts           []string `json:"texts"`
	InputType       string   `json:"input_type"`
	EmbeddingTypes  []string `json:"embedding_types"`
	OutputDimension *int     `json:"output_dimension,omitempty"`
}

// embedResponse is Cohere's v2 embed answer, as much of it as svc reads.
type embedResponse struct {
	Embeddings struct {
		Float [][]float32 `json:"float"`
	} `json:"embeddings"`
	Meta struct {
		BilledUnits struct {
			// Cohere's schema types billed units as numbers, not integers.
			InputTokens float64 `json:"input_tokens"`
		} `json:"billed_units"`
	} `json:"meta"`
}

// NewEmbeddingsRequest builds POST {base}/v2/embed. input_type, which
// Cohere requires of its v3 and later models, defaults to search_document:
// what an OpenAI client embedding a corpus means. Input given as token IDs
// is a 400: Cohere embeds text only.
func (a *Adapter) NewEmbeddingsRequest(ctx context.Context, t provider.Deployment, r *llm.EmbeddingsRequest) (*http.Request, error) {
	texts, err := r.Input.TextsFor("Cohere")
	if err != nil {
		return nil, err
	}
	out := embedRequest{Model: t.Model, Texts: texts, InputType: r.InputType,
		EmbeddingTypes: []string{"float"}, OutputDimension: r.Dimensions}
	if out.InputType == "" {
		out.InputType = llm.InputSearchDocument
	}
	body, err := json.Marshal(&out)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_request", "the request cannot be translated for Cohere", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/v2/embed", bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeEmbeddings turns Cohere's answer into OpenAI's, with the input tokens
// Cohere bills (meta.billed_units.input_tokens) as the usage.
func (a *Adapter) DecodeEmbeddings(r *llm.EmbeddingsRequest, body []byte) ([]byte, llm.Usage, error) {
	var cr embedResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, llm.Usage{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid Cohere embed response", err)
	}
	if got, want := len(cr.Embeddings.Float), r.Input.Len(); got != want {
		return nil, llm.Usage{}, apierr.Newf(apierr.UpstreamError, "upstream_bad_response", "Cohere answered %d float embeddings for %d inputs", got, want)
	}
	tokens := int64(cr.Meta.BilledUnits.InputTokens)
	out := llm.EncodeEmbeddings(r.Model, cr.Embeddings.Float, tokens, r.Base64())
	return out, llm.Usage{PromptTokens: tokens, TotalTokens: tokens}, nil
}

var _ provider.EmbeddingsAdapter = (*Adapter)(nil)
