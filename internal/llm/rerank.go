package llm

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// MaxRerankDocuments is the most documents one rerank request may carry.
const MaxRerankDocuments = 10000

// RerankRequest is a POST /v1/rerank body, in the shape Cohere, Jina and
// most rerank clients send.
type RerankRequest struct {
	Model           string           `json:"model"`
	Query           string           `json:"query"`
	Documents       []RerankDocument `json:"documents"`
	TopN            *int             `json:"top_n,omitempty"`
	ReturnDocuments *bool            `json:"return_documents,omitempty"`
	MaxTokensPerDoc *int             `json:"max_tokens_per_doc,omitempty"`
}

// RerankDocument is one document: a string, or an object with a "text"
// field (and possibly others). It marshals as an object: the caller's own
// object when it sent one, else {"text": …} — the shape rerank clients read
// in results (Cohere, Jina).
type RerankDocument struct {
	Text string
	// Raw is the object as the caller sent it; nil for a string document.
	Raw json.RawMessage
}

// UnmarshalJSON accepts a string or an object with a string "text".
func (d *RerankDocument) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*d = RerankDocument{}
	switch {
	case len(b) > 0 && b[0] == '"':
		return jsonbody.Unmarshal(b, &d.Text)
	case len(b) > 0 && b[0] == '{':
		var o struct {
			Text *string `json:"text"`
		}
		if err := jsonbody.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Text == nil {
			return errRerankDocument
		}
		d.Text, d.Raw = *o.Text, bytes.Clone(b)
		return nil
	}
	return errRerankDocument
}

var errRerankDocument error = jsonbody.Invalid(`a document must be a string or an object with a "text" string`)

// MarshalJSON writes the document as an object.
func (d RerankDocument) MarshalJSON() ([]byte, error) {
	if d.Raw != nil {
		return d.Raw, nil
	}
	return json.Marshal(struct {
		Text string `json:"text"`
	}{d.Text})
}

// RerankResponse is svc's rerank answer: Cohere's and Jina's shape, results
// ordered by relevance, most relevant first.
type RerankResponse struct {
	ID      string         `json:"id"`
	Object  string         `json:"object,omitempty"`
	Model   string         `json:"model"`
	Results []RerankResult `json:"results"`
	Usage   *Usage         `json:"usage,omitempty"`
	// Meta is the provider's own accounting (Cohere's billed_units with
	// search_units), relayed as it came.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// RerankResult is one ranked document.
type RerankResult struct {
	Index          int             `json:"index"`
	RelevanceScore float64         `json:"relevance_score"`
	Document       *RerankDocument `json:"document,omitempty"`
}

// DecodeRerankRequest parses and validates a rerank body. Every failure is an
// apierr InvalidRequest naming the offending field.
func DecodeRerankRequest(body []byte) (*RerankRequest, error) {
	var r RerankRequest
	if err := jsonbody.Decode(body, &r, false); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks the fields svc relies on.
func (r *RerankRequest) Validate() error {
	switch {
	case strings.TrimSpace(r.Model) == "":
		return apierr.BadParam("model", "you must provide a model parameter")
	case strings.TrimSpace(r.Query) == "":
		return apierr.BadParam("query", "query must be a non-empty string")
	case len(r.Documents) == 0:
		return apierr.BadParam("documents", "documents must be a non-empty array")
	case len(r.Documents) > MaxRerankDocuments:
		return apierr.BadParam("documents", "documents may hold at most %d documents, got %d", MaxRerankDocuments, len(r.Documents))
	case r.TopN != nil && *r.TopN < 1:
		return apierr.BadParam("top_n", "top_n must be at least 1")
	case r.MaxTokensPerDoc != nil && *r.MaxTokensPerDoc < 1:
		return apierr.BadParam("max_tokens_per_doc", "max_tokens_per_doc must be at least 1")
	}
	return nil
}
