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

// rerankRequest is Cohere's v2 rerank request. Documents are strings: an
// object document is sent as its "text".
type rerankRequest struct {
	Model           string   `json:"model"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            *int     `json:"top_n,omitempty"`
	MaxTokensPerDoc *int     `json:"max_tokens_per_doc,omitempty"`
}

// rerankResponse is Cohere's v2 rerank answer.
type rerankResponse struct {
	ID      string `json:"id"`
	Results []struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	} `json:"results"`
	Meta json.RawMessage `json:"meta"`
}

// NewRerankRequest builds POST {base}/v2/rerank.
func (a *Adapter) NewRerankRequest(ctx context.Context, t provider.Deployment, r *llm.RerankRequest) (*http.Request, error) {
	out := rerankRequest{Model: t.Model, Query: r.Query, Documents: make([]string, len(r.Documents)),
		TopN: r.TopN, MaxTokensPerDoc: r.MaxTokensPerDoc}
	for i, d := range r.Documents {
		out.Documents[i] = d.Text
	}
	body, err := json.Marshal(&out)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_request", "the request cannot be translated for Cohere", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/v2/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeRerank turns Cohere's answer into svc's llm.RerankResponse, echoing
// the request's documents when it set return_documents, and Cohere's meta
// (billed search units) as it came. Cohere bills rerank in search units, not
// tokens: the usage returned is zero and the answer has none.
func (a *Adapter) DecodeRerank(r *llm.RerankRequest, body []byte) ([]byte, llm.Usage, error) {
	var cr rerankResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, llm.Usage{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid Cohere rerank response", err)
	}
	out := llm.RerankResponse{ID: cr.ID, Model: r.Model, Results: make([]llm.RerankResult, 0, len(cr.Results)), Meta: cr.Meta}
	echo := r.ReturnDocuments != nil && *r.ReturnDocuments
	for _, res := range cr.Results {
		if res.Index < 0 || res.Index >= len(r.Documents) {
			return nil, llm.Usage{}, apierr.Newf(apierr.UpstreamError, "upstream_bad_response", "the provider ranked document %d of %d", res.Index, len(r.Documents))
		}
		rr := llm.RerankResult{Index: res.Index, RelevanceScore: res.RelevanceScore}
		if echo {
			d := r.Documents[res.Index]
			rr.Document = &d
		}
		out.Results = append(out.Results, rr)
	}
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, llm.Usage{}, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the rerank answer", err)
	}
	return b, llm.Usage{}, nil
}
