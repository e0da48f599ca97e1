package proxy

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// routeSpec describes one proxied operation: how its body is read, what
// its clients expect, and how it calls a provider. Every route's chain is
// built from its spec by one function (stages), so a stage is added in
// one place for every route.
type routeSpec struct {
	name     string   // for traces and errors: "chat", "embeddings", …
	patterns []string // ServeMux patterns
	endpoint pipeline.Endpoint
	dialect  dialect
	// apiKey: the virtual key may come in x-api-key (the native routes).
	apiKey bool
	// native: the route is a provider's own API: the plan keeps only
	// providers that speak it.
	native bool
	// cache: the semantic cache applies.
	cache bool
	// decode validates x.Body and sets x.Model, x.Stream and the decoded
	// request; nil for routes without a body (GET).
	decode func(x *pipeline.Exchange) error
	// turns: a Responses request, whose conversation is loaded after
	// decoding (previous_response_id) and whose response is kept.
	turns bool
	// call builds the upstream request and reads the answer.
	call caller
	// local, instead of a provider call, answers from svc's own records
	// (GET /v1/responses/{id}): its chain is record → auth → local.
	local func(p *Proxy, ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error)
}

// routes are the proxy's operations.
var routes = []*routeSpec{
	{name: "chat", patterns: []string{"POST /v1/chat/completions", "POST /chat/completions"}, endpoint: pipeline.Chat,
		dialect: openAIDialect, cache: true, decode: decodeChat, call: chatCall{}},
	{name: "embeddings", patterns: []string{"POST /v1/embeddings", "POST /embeddings"}, endpoint: pipeline.Embeddings,
		dialect: openAIDialect, decode: decodeEmbeddings, call: embeddingsCall{}},
	{name: "completions", patterns: []string{"POST /v1/completions", "POST /completions"}, endpoint: pipeline.Completions,
		dialect: openAIDialect, decode: decodeCompletions, call: passthroughCall{op: "completions"}},
	{name: "images", patterns: []string{"POST /v1/images/generations", "POST /images/generations"}, endpoint: pipeline.Images,
		dialect: openAIDialect, decode: decodeImages, call: passthroughCall{op: "images/generations"}},
	{name: "speech", patterns: []string{"POST /v1/audio/speech", "POST /audio/speech"}, endpoint: pipeline.Speech,
		dialect: openAIDialect, decode: decodeSpeech, call: passthroughCall{op: "audio/speech", raw: true}},
	{name: "transcriptions", patterns: []string{"POST /v1/audio/transcriptions", "POST /audio/transcriptions"}, endpoint: pipeline.Transcriptions,
		dialect: openAIDialect, decode: decodeTranscription, call: passthroughCall{op: "audio/transcriptions", multipart: true}},
	{name: "rerank", patterns: []string{"POST /v1/rerank", "POST /rerank"}, endpoint: pipeline.Rerank,
		dialect: openAIDialect, decode: decodeRerank, call: rerankCall{}},
	{name: "responses", patterns: []string{"POST /v1/responses", "POST /responses"}, endpoint: pipeline.Responses,
		dialect: responsesDialect, turns: true, decode: decodeResponses, call: responsesCall{}},
	{name: "responses-get", patterns: []string{"GET /v1/responses/{id}", "GET /responses/{id}"}, endpoint: pipeline.Responses,
		dialect: openAIDialect, local: (*Proxy).getResponse},
	{name: "responses-delete", patterns: []string{"DELETE /v1/responses/{id}", "DELETE /responses/{id}"}, endpoint: pipeline.Responses,
		dialect: openAIDialect, local: (*Proxy).deleteResponse},
	{name: "responses-input-items", patterns: []string{"GET /v1/responses/{id}/input_items", "GET /responses/{id}/input_items"}, endpoint: pipeline.Responses,
		dialect: openAIDialect, local: (*Proxy).listInputItems},
	{name: "native-messages", patterns: []string{"POST /native/v1/messages", "POST /ide/v1/messages"}, endpoint: pipeline.NativeMessages,
		dialect: anthropicDialect, apiKey: true, native: true, decode: decodeNative(true), call: nativeCall{method: http.MethodPost, op: "messages"}},
	{name: "native-count-tokens", patterns: []string{"POST /native/v1/messages/count_tokens", "POST /ide/v1/messages/count_tokens"}, endpoint: pipeline.NativeMessages,
		dialect: anthropicDialect, apiKey: true, native: true, decode: decodeNative(false), call: nativeCall{method: http.MethodPost, op: "messages/count_tokens"}},
	{name: "native-models", patterns: []string{"GET /native/v1/models", "GET /ide/v1/models"}, endpoint: pipeline.NativeMessages,
		dialect: anthropicDialect, apiKey: true, native: true, call: nativeCall{method: http.MethodGet, op: "models"}},
}

// chainOptions change what stages builds for svc's own calls.
type chainOptions struct {
	// internal: svc itself is the caller (the cache's embedder): no
	// authentication, no limits.
	internal bool
}

// stages is the chain of r, outermost first: record → auth → decode → plan
// → limit → cache (chat) → route, then the call; record → auth for the
// routes that answer from svc's records (local). A new stage
// (compliance, the guard) is added here, once, for every route.
func (p *Proxy) stages(r *routeSpec, o chainOptions) []pipeline.Stage {
	st := []pipeline.Stage{{Name: "record", Wrap: p.record}}
	if !o.internal {
		st = append(st, pipeline.Stage{Name: "auth", Wrap: auth.Stage(p.d.Auth, r.apiKey)})
	}
	if r.local != nil {
		return st
	}
	st = append(st,
		pipeline.Stage{Name: "decode", Wrap: p.decode(r)},
		pipeline.Stage{Name: "plan", Wrap: p.plan(r)},
	)
	if !o.internal && p.d.Limits != nil {
		st = append(st, pipeline.Stage{Name: "limit", Wrap: p.d.Limits.Stage(p.d.LimitSource)})
	}
	if r.cache && p.d.Cache != nil {
		if r.endpoint == pipeline.Chat && p.d.Enforcer != nil && !o.internal {
			st = append(st, pipeline.Stage{Name: "comply-hit", Wrap: p.complyHit})
		}
		st = append(st, pipeline.Stage{Name: "cache", Wrap: p.d.Cache.Stage()})
	}
	if (r.endpoint == pipeline.Chat || r.name == "native-messages") && p.d.Enforcer != nil && !o.internal {
		st = append(st, pipeline.Stage{Name: "comply", Wrap: p.comply})
	}
	return append(st, pipeline.Stage{Name: "route", Wrap: p.route})
}

// handler serves r: its chain, then the answer in its dialect.
func (p *Proxy) handler(r *routeSpec) http.HandlerFunc {
	inner := p.call(r)
	if r.local != nil {
		inner = func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) { return r.local(p, ctx, x) }
	}
	h := p.build(r, inner, p.stages(r, chainOptions{}), trace.SpanKindServer)
	return func(w http.ResponseWriter, req *http.Request) {
		x := newExchange(req, r.endpoint)
		resp, err := h(req.Context(), x)
		p.write(w, x, resp, err, r.dialect)
	}
}
