// Package proxy is the HTTP surface of the proxy component: the OpenAI-
// compatible routes (/v1/chat/completions, embeddings, completions, images,
// audio, rerank, /v1/models), the provider-native routes (/native/v1/*,
// /ide/v1/*), /health, /ready and /metrics. Every route is described once
// (routes.go) and its chain built by one function from the stages of the
// other packages — record (audit, metrics) → auth → decode → plan → limit →
// cache → route — around the one call stage (call.go), which builds the
// upstream request with the route's caller, signs and sends it, reads and
// prices the answer. It writes answers: JSON bodies, SSE streams relayed
// event by event, and errors in the route's dialect.
//
// Only wire imports proxy.
package proxy

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/upstream"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// KeySource resolves provider API keys (keyvault.Vault).
type KeySource interface {
	Key(ctx context.Context, provider string) (string, error)
}

// Recorder takes the audit entry of every finished exchange (audit.Logger).
type Recorder interface {
	Record(e *audit.Entry)
}

// Access resolves what a principal may use: its key's model allow-list
// (nil: every model).
type Access interface {
	Models(ctx context.Context, p *identity.Principal) ([]string, error)
}

// Deps are what the proxy needs.
type Deps struct {
	// Auth authenticates callers (virtual keys; sign-in tokens to come).
	Auth auth.Authenticator
	// Access gives each principal's model restrictions (may be nil: none).
	Access Access
	// LimitSource gives each principal's limits, for Limits.
	LimitSource limit.Source
	// Known reports whether svc knows a provider's model; the metrics label
	// others "other", so a caller inventing names cannot grow the series
	// (nil: every name is labelled as it is).
	Known func(provider, model string) bool
	// Trace, when set, is told the name of every stage an exchange enters
	// (the tests that hold each route's stage order).
	Trace    func(stage string)
	Vault    KeySource
	Registry *provider.Registry
	Resolver *route.Resolver
	Client   *upstream.Client
	Prices   *pricing.Table
	Audit    Recorder
	// Health records each upstream call's outcome (may be nil).
	Health *health.Tracker
	// Spend tracks each provider's daily spend for provider budgets (may be nil).
	Spend *route.Spend
	// Routing is the live routing configuration (may be nil): its aliases and
	// chains are listed by GET /v1/models.
	Routing func() *route.Config
	// Limits enforces the keys' rate limits and spend caps (may be nil).
	Limits *limit.Limiter
	// Cache is the semantic cache of chat completions (may be nil: off).
	Cache   *cache.Cache
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// MaxBodyBytes bounds request bodies (413 above).
	MaxBodyBytes int64
	// Probes are the readiness checks of /ready.
	Probes map[string]app.Probe
	// Failures is told every failed upstream attempt (the routing status
	// shows the last); may be nil.
	Failures interface{ Note(route.Failure) }
	// Responses keeps the Responses API's responses for
	// previous_response_id and GET /v1/responses/{id} (nil: none kept),
	// each for ResponsesRetention.
	Responses          responses.Store
	ResponsesRetention time.Duration
	// Tracer starts the spans of every request, stage and upstream call
	// (tracing.Tracer; nil: no tracing, nothing added to a request).
	// TraceContent adds the prompt and completion text to the request's
	// span, bounded (SVC_TRACE_CONTENT).
	Tracer       trace.Tracer
	TraceContent bool
	// Enforcer applies the caller's policies to chat prompts (nil: no
	// policy checks); Compliance are its time-out and fail-open settings.
	Enforcer   Enforcer
	Compliance ComplianceOptions
}

// Proxy serves the proxy component's routes.
type Proxy struct {
	d      Deps
	models *modelCache
	// running are the upstream bodies of streams in flight, which Abort
	// closes; aborting is set from then on.
	running  inflight
	aborting atomic.Bool
	// spending counts the provider spend additions off the response path.
	spending sync.WaitGroup
}

// Settled waits until the provider spend of every finished exchange has
// been added (the process calls it before its stores close).
func (p *Proxy) Settled() { p.spending.Wait() }

// New assembles the proxy.
func New(d Deps) *Proxy {
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = 50 << 20
	}
	if d.ResponsesRetention <= 0 {
		d.ResponsesRetention = responses.DefaultRetention
	}
	p := &Proxy{d: d}
	p.models = newModelCache(d.Registry, d.Resolver, d.Vault, d.Client, d.Prices, d.Log)
	p.models.routing = d.Routing
	return p
}

// Handler returns the proxy's routes.
func (p *Proxy) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes {
		h := p.handler(r)
		for _, pattern := range r.patterns {
			mux.HandleFunc(pattern, h)
		}
	}
	// Editors set to the host without /v1 call the same paths without it.
	mux.HandleFunc("GET /v1/models", p.serveModels)
	mux.HandleFunc("GET /models", p.serveModels)
	mux.Handle("GET /metrics", p.d.Metrics.Handler())
	app.Health(mux, p.d.Probes)
	mux.HandleFunc("/", notFound)
	return mux
}

// Run refreshes provider model lists in the background until ctx ends.
func (p *Proxy) Run(ctx context.Context) error {
	p.models.run(ctx, 10*time.Minute)
	return nil
}

func init() { uuid.EnableRandPool() }

func newExchange(r *http.Request, ep pipeline.Endpoint) *pipeline.Exchange {
	conv := r.Header.Get("x-conversation-id")
	if conv == "" {
		conv = r.Header.Get("x-session-id")
	}
	return &pipeline.Exchange{
		ID:             newRequestID(),
		Start:          time.Now(),
		Endpoint:       ep,
		Inbound:        r,
		ConversationID: conv,
		Header:         make(http.Header, 8),
	}
}

// signerFor returns p's signer, bearer by default.
func signerFor(p *provider.Provider) cred.Signer {
	if p.Signer != nil {
		return p.Signer
	}
	return cred.Bearer{}
}

// newRequestID is a UUIDv7: unique like any UUID, and ordered by time, so the
// audit table's primary-key index grows at its end instead of splitting pages
// at random places (a third of svc's CPU under load went there with v4).
func newRequestID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
