package provider

import (
	"context"
	"net/http"

	"github.com/svc-gateway/svc/internal/llm"
)

// EmbeddingsAdapter is the optional ability to translate embeddings (POST
// /v1/embeddings) for a provider that does not speak OpenAI's embeddings API,
// checked by type assertion on a provider's adapter. Like ChatAdapter it
// never does I/O; errors go through ChatAdapter.DecodeError.
type EmbeddingsAdapter interface {
	// NewEmbeddingsRequest builds the upstream request (without
	// credentials). An input the provider cannot take (token IDs) is an
	// InvalidRequest naming "input".
	NewEmbeddingsRequest(ctx context.Context, t Deployment, r *llm.EmbeddingsRequest) (*http.Request, error)
	// DecodeEmbeddings turns a successful upstream body into OpenAI's
	// embeddings answer (llm.EncodeEmbeddings), with its usage. r is the
	// request the body answers: it names the model and the encoding.
	DecodeEmbeddings(r *llm.EmbeddingsRequest, body []byte) (out []byte, usage llm.Usage, err error)
}
