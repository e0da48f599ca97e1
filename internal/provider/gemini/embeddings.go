package gemini

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

// Embeddings are translated to the Gemini API's
// POST {base}/v1beta/models/{model}:batchEmbedContents, one EmbedContentRequest
// per input, and to Vertex AI's
// POST …/publishers/google/models/{model}:predict, one instance per input.

// taskTypes maps svc's input_type to Google's task type (taskType on the
// Gemini API, task_type on Vertex AI).
var taskTypes = map[string]string{
	llm.InputSearchDocument: "RETRIEVAL_DOCUMENT",
	llm.InputSearchQuery:    "RETRIEVAL_QUERY",
	llm.InputClassification: "CLASSIFICATION",
	llm.InputClustering:     "CLUSTERING",
}

// The Gemini API's BatchEmbedContentsRequest and its answer.
type (
	batchEmbedRequest struct {
		Requests []embedContentRequest `json:"requests"`
	}
	embedContentRequest struct {
		Model                string  `json:"model"`
		Content              content `json:"content"`
		TaskType             string  `json:"taskType,omitempty"`
		OutputDimensionality *int    `json:"outputDimensionality,omitempty"`
	}
	batchEmbedResponse struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
)

// Vertex AI's text-embedding predict request and its answer.
type (
	predictRequest struct {
		Instances  []predictInstance  `json:"instances"`
		Parameters *predictParameters `json:"parameters,omitempty"`
	}
	predictInstance struct {
		Content  string `json:"content"`
		TaskType string `json:"task_type,omitempty"`
	}
	predictParameters struct {
		OutputDimensionality *int `json:"outputDimensionality,omitempty"`
	}
	predictResponse struct {
		Predictions []struct {
			Embeddings struct {
				Values     []float32 `json:"values"`
				Statistics struct {
					// TokenCount is a protobuf Value: a JSON number that
					// may be written as 7.0.
					TokenCount float64 `json:"token_count"`
				} `json:"statistics"`
			} `json:"embeddings"`
		} `json:"predictions"`
	}
)

// NewEmbeddingsRequest builds batchEmbedContents (Gemini API) or predict
// (Vertex AI). Input given as token IDs is a 400: Google embeds text only.
func (a *Adapter) NewEmbeddingsRequest(ctx context.Context, t provider.Deployment, r *llm.EmbeddingsRequest) (*http.Request, error) {
	texts, err := r.Input.TextsFor(a.name())
	if err != nil {
		return nil, err
	}
	task := taskTypes[r.InputType]
	var body any
	method := "batchEmbedContents"
	if a.vertex {
		method = "predict"
		p := predictRequest{Instances: make([]predictInstance, len(texts))}
		for i, text := range texts {
			p.Instances[i] = predictInstance{Content: text, TaskType: task}
		}
		if r.Dimensions != nil {
			p.Parameters = &predictParameters{OutputDimensionality: r.Dimensions}
		}
		body = &p
	} else {
		model := "models/" + strings.TrimPrefix(t.Model, "models/")
		b := batchEmbedRequest{Requests: make([]embedContentRequest, len(texts))}
		for i, text := range texts {
			b.Requests[i] = embedContentRequest{Model: model, Content: content{Parts: []part{{Text: text}}},
				TaskType: task, OutputDimensionality: r.Dimensions}
		}
		body = &b
	}
	u, err := a.modelURL(t, method)
	if err != nil {
		return nil, err
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_request", "the request cannot be translated for "+a.name(), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(buf))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeEmbeddings turns Google's answer into OpenAI's. Vertex AI counts each
// input's tokens (statistics.token_count). The Gemini API reports no usage
// for embeddings, so svc estimates it — ceil(bytes/4) per input, summed, the
// usual four bytes a token of English text — and that estimate is what the
// caller is shown and billed.
func (a *Adapter) DecodeEmbeddings(r *llm.EmbeddingsRequest, body []byte) ([]byte, llm.Usage, error) {
	var (
		vectors [][]float32
		tokens  int64
	)
	if a.vertex {
		var p predictResponse
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, llm.Usage{}, badEmbeddings(a.name(), err)
		}
		vectors = make([][]float32, len(p.Predictions))
		for i, pr := range p.Predictions {
			vectors[i] = pr.Embeddings.Values
			tokens += int64(pr.Embeddings.Statistics.TokenCount)
		}
	} else {
		var b batchEmbedResponse
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, llm.Usage{}, badEmbeddings(a.name(), err)
		}
		vectors = make([][]float32, len(b.Embeddings))
		for i, e := range b.Embeddings {
			vectors[i] = e.Values
		}
		for _, text := range r.Input.Texts {
			tokens += int64(len(text)+3) / 4
		}
	}
	if want := r.Input.Len(); len(vectors) != want {
		return nil, llm.Usage{}, apierr.Newf(apierr.UpstreamError, "upstream_bad_response",
			"%s answered %d embeddings for %d inputs", a.name(), len(vectors), want)
	}
	out := llm.EncodeEmbeddings(r.Model, vectors, tokens, r.Base64())
	return out, llm.Usage{PromptTokens: tokens, TotalTokens: tokens}, nil
}

func badEmbeddings(name string, err error) error {
	return apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid "+name+" embeddings response", err)
}

// name is the provider's name in messages to the caller.
func (a *Adapter) name() string {
	if a.vertex {
		return "Vertex AI"
	}
	return "Gemini"
}

var _ provider.EmbeddingsAdapter = (*Adapter)(nil)
