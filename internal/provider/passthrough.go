package provider

import (
	"context"
	"io"
	"net/http"

	"github.com/svc-gateway/svc/internal/llm"
)

// PassthroughCall is a request to an OpenAI-compatible endpoint other than
// chat (embeddings, completions, images, audio, rerank) that the provider
// speaks natively: the caller's body is forwarded with the model name patched.
type PassthroughCall struct {
	// Op is the path after the base URL: "embeddings", "completions",
	// "images/generations", "audio/speech", "audio/transcriptions", "rerank".
	Op          string
	ContentType string
	Body        []byte
	// Model is the model as the body names it; the adapter replaces it with
	// the deployment's when they differ (JSON bodies; callers rewrite multipart).
	Model string
	// WantUsage asks a streamed answer to carry usage (stream_options).
	WantUsage bool
}

// Passthrough is the optional ability to forward OpenAI-compatible endpoints.
type Passthrough interface {
	NewPassthroughRequest(ctx context.Context, t Deployment, c PassthroughCall) (*http.Request, error)
}

// NativeCall is a provider-native request forwarded untranslated (the
// /native and /ide prefixes): Op is the path after the version prefix
// ("messages", "messages/count_tokens", "models"), Header the caller's headers
// (the adapter forwards the provider's version and beta headers from it).
type NativeCall struct {
	Method string
	Op     string
	Query  string // the caller's raw query (GET /v1/models pagination)
	Header http.Header
	Body   []byte
	Model  string // as the body names it; replaced by the deployment's when they differ
}

// Native is the optional ability to forward a provider's own API and read
// usage from its answers.
type Native interface {
	NewNativeRequest(ctx context.Context, t Deployment, c NativeCall) (*http.Request, error)
	// DecodeNative reads usage and model from a non-streamed native answer.
	DecodeNative(body []byte) (llm.Usage, string, error)
	// DecodeNativeStream relays a native stream's events unchanged while
	// recording usage and model in info.
	DecodeNativeStream(body io.ReadCloser, info *StreamInfo) llm.Stream
}
