// Package pipeline defines the proxy's request path: the Exchange (the state
// of one proxied request), the Handler and Middleware types, named Stages and
// the chain builder, and stream wrappers through which stages observe a
// streamed answer (Observe) or change it as it flows (Rewrite) without
// buffering it.
//
// The proxy, its stages (auth, limit, cache, compliance, route, audit) and the
// wire package import pipeline. It imports llm, llm/sse, identity, route
// (the routing plan an exchange carries) and responses (a Responses
// request and the conversation it continues).
package pipeline

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/route"
)

// Endpoint names the kind of proxied operation.
type Endpoint string

// Endpoints of the proxy.
const (
	Chat           Endpoint = "chat"
	Embeddings     Endpoint = "embeddings"
	Completions    Endpoint = "completions"
	Transcriptions Endpoint = "audio_transcription"
	Speech         Endpoint = "audio_speech"
	Images         Endpoint = "images"
	Rerank         Endpoint = "rerank"
	NativeMessages Endpoint = "native_messages"
	Responses      Endpoint = "responses"
)

// Exchange is the state of one proxied request as it moves through the
// stages. The inbound request and body are never mutated; stages record what
// they decide and observe in the other fields. An Exchange is used by one
// goroutine at a time: the stages in order, then whoever drains the stream.
type Exchange struct {
	ID       string // request id (UUID); x-svc-request-id
	Start    time.Time
	Endpoint Endpoint
	Inbound  *http.Request
	Body     []byte

	// Chat is the decoded request body for Chat exchanges.
	Chat *llm.ChatRequest
	// Rerank is the decoded request body for Rerank exchanges.
	Rerank *llm.RerankRequest
	// Embeddings is the decoded request body for Embeddings exchanges.
	Embeddings *llm.EmbeddingsRequest
	// Responses is the decoded request of Responses exchanges with the
	// conversation it continues. Its Chat is the translated request, for
	// the stages that estimate and meter.
	Responses *responses.Turn
	// Model is the model the caller asked for, as sent.
	Model  string
	Stream bool

	ConversationID string
	Principal      *identity.Principal

	// Plan is the routing plan, set by the plan stage: the decisions to try
	// in order and when to move on. Attempt is the attempt under way (0
	// first), set by the route stage.
	Plan    *route.Plan
	Attempt int
	// EstimatedCost is the cost of the request estimated before the call
	// (USD; 0 when the model has no price): x-svc-cost-usd of a stream's
	// headers.
	EstimatedCost float64

	// Route: filled by the route stage.
	Provider        string // provider that serves the request
	UpstreamModel   string // model sent upstream (prefix stripped)
	RoutingStrategy string // direct, cache, fallback, …
	RoutingReason   string // provider:<name>, cache_hit:tier=L1, …

	// Outcome: filled as the answer comes back.
	Status int       // HTTP status answered to the caller
	Usage  llm.Usage // tokens, from the provider's usage
	// UsageEstimated: the provider reported no usage (a stream the client
	// cut, a server that sends none) and Usage is svc's estimate.
	UsageEstimated bool
	Cost           float64   // USD, from the price table
	ResponseModel  string    // model named by the provider's answer
	FirstByte      time.Time // when the first byte of the answer was ready
	End            time.Time // when the answer was complete
	// Upstream is the time spent waiting on the provider.
	Upstream time.Duration
	// UpstreamStatus is the provider's HTTP status (0 when it never answered).
	UpstreamStatus int
	// UpstreamDone, when set, is told the upstream call's outcome when the
	// exchange ends (health figures).
	UpstreamDone func(latency time.Duration, failed bool)
	Err          error // the error answered, if any

	// Header holds response headers stages add for the caller (x-svc-*, limits).
	Header http.Header

	// Cache is what the cache stage found; nil when it did not look (or missed).
	Cache *CacheHit
	// DoNotStore, when a stage below the cache sets it, keeps the answer
	// out of the cache: the reason, such as "pii" (compliance flagged
	// personal data) or "blocked" (a policy or the guard stopped it).
	DoNotStore string

	// Compliance is what the caller's policies made of the exchange; nil
	// when none applied (no preset: no scan).
	Compliance *Compliance
}

// Compliance is the outcome of the policy checks of one exchange, for its
// audit entry and headers.
type Compliance struct {
	// Status is "compliant", "flagged", "redacted", "blocked", or
	// "unchecked_fail_open" (the check failed and a fail-open setting let
	// the request through).
	Status string
	// Score is the compliance score 0–1 (1 clean); Classification the
	// data classification ("public", "confidential", "restricted").
	Score          float64
	Classification string
	// Violations name what was found, without values: "<policy>: <type>".
	Violations []string
	Frameworks []string
	// Redacted lists the types replaced by placeholders before the call.
	Redacted []string
	// Policy is the policy that blocked, when one did.
	Policy string
}

// CacheHit describes an answer served from the semantic cache.
type CacheHit struct {
	Tier        string  // L1, L2 or L3
	Key         string  // the entry's key (x-svc-cache-key)
	Similarity  float64 // cosine similarity of the prompts (L3; 1 for exact tiers)
	Query       string  // the cached prompt that matched
	TokensSaved int64   // the tokens the cached answer cost when it was made
	CostSaved   float64 // and its cost, USD
}

// Response is a stage's answer: a complete Body, an SSE Stream, or a Raw
// byte stream (audio) relayed as it arrives.
type Response struct {
	Status int
	// Header holds headers to forward from the provider (content type, …).
	Header http.Header
	Body   []byte
	Stream llm.Stream
	Raw    io.ReadCloser
}

// Handler runs the rest of the request path for x.
type Handler func(ctx context.Context, x *Exchange) (*Response, error)

// Middleware is one stage of the request path.
type Middleware func(next Handler) Handler

// Stage is a named middleware: the name shows in traces and in the tests
// that hold each route's stage order.
type Stage struct {
	Name string
	Wrap Middleware
}

// Build returns h wrapped by the stages, the first outermost. trace, when
// not nil, is called with each stage's name as an exchange enters it.
func Build(h Handler, trace func(stage string), stages ...Stage) Handler {
	for i := len(stages) - 1; i >= 0; i-- {
		st := stages[i]
		h = st.Wrap(h)
		if trace != nil {
			inner := h
			h = func(ctx context.Context, x *Exchange) (*Response, error) {
				trace(st.Name)
				return inner(ctx, x)
			}
		}
	}
	return h
}

// Chain returns h wrapped by mws, the first outermost.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}
