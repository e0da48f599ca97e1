package provider

import (
	"context"
	"net/http"

	"github.com/svc-gateway/svc/internal/llm"
)

// RerankAdapter is the optional ability to rerank documents against a query
// (POST /v1/rerank), checked by type assertion on a provider's adapter. Like
// ChatAdapter it never does I/O; errors go through ChatAdapter.DecodeError.
type RerankAdapter interface {
	// NewRerankRequest builds the upstream request (without credentials).
	NewRerankRequest(ctx context.Context, t Deployment, r *llm.RerankRequest) (*http.Request, error)
	// DecodeRerank turns a successful upstream body into svc's
	// llm.RerankResponse JSON, with its usage. r is the request the body
	// answers: its documents are echoed when it asks for them.
	DecodeRerank(r *llm.RerankRequest, body []byte) (out []byte, usage llm.Usage, err error)
}
