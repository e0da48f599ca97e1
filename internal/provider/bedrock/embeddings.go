package bedrock

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

// Bedrock serves embeddings through InvokeModel with each model family's own
// body: Amazon Titan (amazon.titan-embed-*) takes one text per call; Cohere
// on Bedrock (cohere.embed-*) takes a list.

type titanEmbedRequest struct {
	InputText  string `json:"inputText"`
	Dimensions *int   `json:"dimensions,omitempty"`
	Normalize  bool   `json:"normalize"`
}

type titanEmbedResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int64     `json:"inputTextTokenCount"`
}

type cohereEmbedRequest struct {
	Texts          []string `json:"texts"`
	InputType      string   `json:"input_type"`
	EmbeddingTypes []string `json:"embedding_types"`
}

type cohereEmbedResponse struct {
	Embeddings struct {
		Float [][]float32 `json:"float"`
	} `json:"embeddings"`
}

func embedFamily(model string) string {
	m := model
	if i := strings.LastIndex(m, "/"); i >= 0 { // an inference-profile ARN
		m = m[i+1:]
	}
	m = strings.TrimPrefix(strings.TrimPrefix(m, "us."), "eu.")
	switch {
	case strings.HasPrefix(m, "amazon.titan-embed"):
		return "titan"
	case strings.HasPrefix(m, "cohere.embed"):
		return "cohere"
	}
	return ""
}

// NewEmbeddingsRequest builds POST {base}/model/{id}/invoke for a Titan or
// Cohere embedding model (without credentials).
func (a *Adapter) NewEmbeddingsRequest(ctx context.Context, t provider.Deployment, r *llm.EmbeddingsRequest) (*http.Request, error) {
	texts, err := r.Input.TextsFor("bedrock")
	if err != nil {
		return nil, err
	}
	var body []byte
	switch embedFamily(t.Model) {
	case "titan":
		if len(texts) != 1 {
			return nil, apierr.BadParam("input", "Amazon Titan embeds one text per request; send a string, or one request per text")
		}
		body, err = json.Marshal(titanEmbedRequest{InputText: texts[0], Dimensions: r.Dimensions, Normalize: true})
	case "cohere":
		it := r.InputType
		if it == "" {
			it = llm.InputSearchDocument
		}
		body, err = json.Marshal(cohereEmbedRequest{Texts: texts, InputType: it, EmbeddingTypes: []string{"float"}})
	default:
		return nil, apierr.Newf(apierr.InvalidRequest, "unsupported_model",
			"bedrock embeddings support Amazon Titan (amazon.titan-embed-*) and Cohere (cohere.embed-*) models, not %q", t.Model)
	}
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the embeddings request", err)
	}
	base, err := BaseURL(t)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/model/"+escapeModelID(t.Model)+"/invoke", bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeEmbeddings turns InvokeModel's answer into OpenAI's embeddings list.
func (a *Adapter) DecodeEmbeddings(r *llm.EmbeddingsRequest, body []byte) ([]byte, llm.Usage, error) {
	bad := func(err error) error {
		return apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid embeddings response", err)
	}
	var vectors [][]float32
	var tokens int64
	switch embedFamily(r.Model) {
	case "titan":
		var out titanEmbedResponse
		if err := json.Unmarshal(body, &out); err != nil || len(out.Embedding) == 0 {
			return nil, llm.Usage{}, bad(err)
		}
		vectors, tokens = [][]float32{out.Embedding}, out.InputTextTokenCount
	default:
		var out cohereEmbedResponse
		if err := json.Unmarshal(body, &out); err != nil || len(out.Embeddings.Float) == 0 {
			return nil, llm.Usage{}, bad(err)
		}
		vectors = out.Embeddings.Float
		texts, _ := r.Input.TextsFor("bedrock")
		for _, t := range texts { // Cohere on Bedrock reports no usage: estimate
			tokens += int64(len(t)+3) / 4
		}
	}
	u := llm.Usage{PromptTokens: tokens, TotalTokens: tokens}
	return llm.EncodeEmbeddings(r.Model, vectors, tokens, r.Base64()), u, nil
}

var _ provider.EmbeddingsAdapter = (*Adapter)(nil)
