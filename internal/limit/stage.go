package limit

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/tokens"
)

// Response headers, as OpenAI names them.
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
	HeaderLimitTokens       = "X-Ratelimit-Limit-Tokens"
	HeaderRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	HeaderResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// rateHeaders are the headers the stage sets.
var rateHeaders = [...]string{
	HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests,
	HeaderLimitTokens, HeaderRemainingTokens, HeaderResetTokens,
}

// Stage returns the limits middleware: the thin wrapper of Admit and
// Settle for the proxy. It runs after auth, decode and planning:
// x.Principal, x.Provider, x.UpstreamModel and x.Chat or x.Body are set. It
// resolves the principal's limits from src, estimates the exchange, admits
// it, and settles when the exchange ends: at once, at the end of a stream
// or raw body, or when a stage below panics (the panic goes on unchanged).
// A principal without limits passes without any store call.
func (l *Limiter) Stage(src Source) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			p := x.Principal
			if p == nil {
				return next(ctx, x)
			}
			var lim Limits
			if src != nil {
				var err error
				if lim, err = src.Limits(ctx, p); err != nil {
					return nil, err
				}
			}
			if !lim.Any() && !l.hourlyApplies(p) {
				return l.meterCall(ctx, x, p, lim, next)
			}
			if x.Header == nil {
				x.Header = make(http.Header)
			}
			est := l.estimate(x)
			x.EstimatedCost = l.price(x, est)
			a, err := l.Admit(ctx, p, lim, Estimate{Tokens: est.tokens(), CostUSD: l.cost(x, est)})
			if err != nil {
				if e := apierr.From(err); e.Header != nil {
					for k, v := range e.Header {
						x.Header[k] = v
					}
				}
				return nil, err
			}
			a.Header(x.Header)
			return l.call(ctx, x, next, a)
		}
	}
}

// call runs next and settles a when the call ends: at once, at the end of a
// stream or raw body, or when next panics (a deferred settlement, so that
// the proxy's recovery into a 500 leaves no reservation or estimate
// behind; the panic goes on unchanged).
func (l *Limiter) call(ctx context.Context, x *pipeline.Exchange, next pipeline.Handler, a *Admission) (*pipeline.Response, error) {
	if a == nil {
		return next(ctx, x)
	}
	settle := func() { a.Settle(ctx, Used{Tokens: x.Usage.Total(), CostUSD: x.Cost}) }
	returned := false
	defer func() {
		if !returned {
			settle() // next panicked: settle with what was used (usually nothing)
		}
	}()
	resp, err := next(ctx, x)
	returned = true
	switch {
	case err != nil || resp == nil:
		settle()
	case resp.Stream != nil:
		resp.Stream = pipeline.Observe(resp.Stream, nil, func(error) { settle() })
	case resp.Raw != nil:
		resp.Raw = pipeline.ObserveReader(resp.Raw, func(error) { settle() })
	default:
		settle()
	}
	return resp, err
}

// DefaultCompletionReserve is the completion a spend reservation assumes when
// the request sets no maximum: the reservation must bound the actual cost for
// concurrent requests not to overshoot a cap by more than one request's cost
// (the settlement corrects it to the actual cost). The tpm window, which never
// refunds, keeps the plain estimate.
const DefaultCompletionReserve = 4096

// cost is what a spend cap reserves for x: the price of its estimated
// usage, with DefaultCompletionReserve completion tokens when the request
// sets no maximum; 0 when the model has no price.
func (l *Limiter) cost(x *pipeline.Exchange, est estimated) float64 {
	if est.completion == 0 {
		est.completion = DefaultCompletionReserve
	}
	return l.price(x, est)
}

// price is the price of est for x's model; 0 when it has no price.
func (l *Limiter) price(x *pipeline.Exchange, est estimated) float64 {
	model := x.UpstreamModel
	if model == "" {
		model = x.Model
	}
	price, ok := l.prices.Lookup(x.Provider, model)
	if !ok {
		return 0
	}
	return price.Cost(pricing.Usage{PromptTokens: est.prompt, CompletionTokens: est.completion})
}

// estimated is a request's token estimate before the call.
type estimated struct {
	prompt, completion int64
}

// maxEstimate bounds each part of an estimate, so that their sum and its
// price never overflow; it is far above any model's context.
const maxEstimate = 1 << 40

func (e estimated) tokens() int64 { return e.prompt + e.completion }

// PromptCounter counts a request's prompt tokens before it is sent.
type PromptCounter interface {
	// ChatPrompt counts a chat request's messages, tools and overhead.
	ChatPrompt(model string, req *llm.ChatRequest) int64
	// Body counts the text of another endpoint's JSON body (0 when it is
	// not JSON, such as a multipart audio upload).
	Body(model string, body []byte) int64
}

// tokenizer is the default PromptCounter: OpenAI's own tokenizers for
// OpenAI models, a measured upper bound for every other model (package
// tokens).
type tokenizer struct{}

func (tokenizer) ChatPrompt(model string, req *llm.ChatRequest) int64 {
	return tokens.ChatPrompt(model, req)
}
func (tokenizer) Body(model string, body []byte) int64 { return tokens.Body(model, body) }

// estimate estimates x's tokens: its prompt counted by the limiter's
// PromptCounter for the model it goes to, plus the requested maximum
// completion tokens (max_completion_tokens, else max_tokens). Each part is
// clamped to [0, maxEstimate].
func (l *Limiter) estimate(x *pipeline.Exchange) estimated {
	model := x.UpstreamModel
	if model == "" {
		model = x.Model
	}
	var e estimated
	if c := x.Chat; c != nil {
		e.prompt, e.completion = l.counter.ChatPrompt(model, c), c.MaxOutput()
		return e.clamped()
	}
	b := bytes.TrimLeft(x.Body, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return e // not JSON (a multipart audio upload): no text to count
	}
	e.prompt = l.counter.Body(model, b)
	e.completion = maxTokens(b)
	return e.clamped()
}

func (e estimated) clamped() estimated {
	e.prompt = min(max(e.prompt, 0), maxEstimate)
	e.completion = min(max(e.completion, 0), maxEstimate)
	return e
}

// maxTokens reads max_completion_tokens, else max_tokens, from a JSON object
// (completions, native messages); 0 when absent or invalid. A number too
// large for an int64 reads as the largest one (the estimate clamps it).
func maxTokens(b []byte) int64 {
	var v struct {
		MaxTokens           *json.Number `json:"max_tokens"`
		MaxCompletionTokens *json.Number `json:"max_completion_tokens"`
	}
	if json.Unmarshal(b, &v) != nil {
		return 0
	}
	n := v.MaxCompletionTokens
	if n == nil {
		n = v.MaxTokens
	}
	if n == nil {
		return 0
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil && f > 0 {
		return maxEstimate
	}
	return 0
}
