package proxy

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/route"
)

// record is the outermost stage: when the exchange ends — at once for errors
// and bodies, at the end of the stream for streams — it runs finish, which
// writes the audit entry and the metrics. Every request passes it, rejected
// ones too.
func (p *Proxy) record(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		p.d.Metrics.InFlight.Inc()
		resp, err := next(ctx, x)
		if err != nil {
			if p.aborting.Load() && apierr.KindOf(err) == apierr.ClientClosed {
				// Its connection was closed past the drain time: the one
				// place a cut exchange is recorded as what it was.
				err = errShuttingDown
			}
			x.Err = err
			x.Status = apierr.From(err).Status()
			p.finish(x)
			return nil, err
		}
		x.Status = resp.Status
		onEnd := func(err error) {
			if err != nil {
				switch {
				case p.aborting.Load():
					err = errShuttingDown // its connection was closed past the drain time
				case errors.Is(err, pipeline.ErrAbandoned):
					err = apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the stream", err)
				}
				x.Err = err
			}
			p.finish(x)
		}
		switch {
		case resp.Raw != nil:
			resp.Raw = pipeline.ObserveReader(resp.Raw, onEnd)
		case resp.Stream != nil:
			resp.Stream = pipeline.Observe(resp.Stream, nil, onEnd)
		default:
			p.finish(x)
		}
		return resp, nil
	}
}

// finish reports a finished exchange to everything that keeps account of
// requests: health, provider spend, the routing status, the audit log and
// the metrics.
func (p *Proxy) finish(x *pipeline.Exchange) {
	if x.End.IsZero() {
		x.End = time.Now()
	}
	p.d.Metrics.InFlight.Dec()
	if x.UpstreamDone != nil {
		x.UpstreamDone(x.Upstream, upstreamFailed(x))
	}
	if p.d.Spend != nil && x.Cost > 0 && p.hasDailyBudget(x.Provider) {
		p.spending.Add(1)
		go func() {
			defer p.spending.Done()
			p.d.Spend.Add(context.Background(), x.Provider, x.Cost, time.Now())
		}()
	}
	if x.Err != nil && x.Provider != "" && upstreamFailed(x) && !noted(x.Err) {
		p.noteFailure(x, x.Err)
	}
	p.d.Audit.Record(audit.FromExchange(x, x.Upstream))
	model := x.UpstreamModel
	if model == "" {
		model = x.Model
	}
	if p.d.Known != nil && !p.d.Known(x.Provider, model) {
		model = metrics.Other
	}
	status := x.Status
	if x.Err != nil && x.Status < 400 {
		// A stream that failed after its 200: count it by its error.
		status = apierr.From(x.Err).Status()
	}
	p.d.Metrics.Observe(metrics.Request{
		Provider:         x.Provider,
		Model:            model,
		Status:           status,
		Latency:          x.End.Sub(x.Start),
		PromptTokens:     x.Usage.PromptTokens,
		CompletionTokens: x.Usage.CompletionTokens,
		Cost:             x.Cost,
		UpstreamStatus:   x.UpstreamStatus,
		UpstreamFailed:   x.Provider != "" && x.UpstreamStatus == 0 && x.Err != nil && isUpstreamKind(x.Err),
	})
}

func isUpstreamKind(err error) bool {
	switch apierr.KindOf(err) {
	case apierr.UpstreamError, apierr.UpstreamTimeout:
		return true
	}
	return false
}

// decode reads the body (413 over the limit) and validates it with the
// route's decoder. Routes without a body (GET) pass.
func (p *Proxy) decode(r *routeSpec) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			if r.decode == nil {
				return next(ctx, x)
			}
			if err := p.readBody(x); err != nil {
				return nil, err
			}
			if err := r.decode(x); err != nil {
				return nil, err
			}
			if r.turns {
				if err := p.turn(ctx, x); err != nil {
					return nil, err
				}
			}
			return next(ctx, x)
		}
	}
}

// readBody reads the inbound body up to the limit.
func (p *Proxy) readBody(x *pipeline.Exchange) error {
	body, err := io.ReadAll(io.LimitReader(x.Inbound.Body, p.d.MaxBodyBytes+1))
	if err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "body_read_failed", "could not read the request body", err)
	}
	if int64(len(body)) > p.d.MaxBodyBytes {
		return apierr.Newf(apierr.TooLarge, "request_too_large", "request body exceeds %d bytes", p.d.MaxBodyBytes)
	}
	x.Body = body
	return nil
}

// nativeProvider serves native routes that name no model (GET models).
const nativeProvider = "anthropic"

// extendedContext is the suffix editors add to a model name to ask for the
// long context window; providers do not know it.
const extendedContext = "[1m]"

// plan puts the routing plan on the exchange — forced provider, alias,
// fallback chain, strategy, provider budgets; on a native route only the
// providers that speak a native API — enforces the caller's model
// restrictions, and records the first decision, so that the stages between
// it and route (limits, cache) run once per request and price with it.
func (p *Proxy) plan(r *routeSpec) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			model := x.Model
			if r.native {
				model = strings.TrimSuffix(model, extendedContext)
			}
			plan, err := p.planFor(r, model)
			if err != nil {
				return nil, err
			}
			first := plan.Decision(0)
			if model != "" && p.d.Access != nil && x.Principal != nil {
				models, err := p.d.Access.Models(ctx, x.Principal)
				if err != nil {
					return nil, err
				}
				if !auth.AllowsModel(models, model, first.Model) {
					return nil, auth.ErrModelNotAllowed(model)
				}
			}
			x.Plan = &plan
			x.Provider, x.UpstreamModel = first.Provider.Name, first.Model
			x.RoutingStrategy, x.RoutingReason = first.Strategy, first.Reason
			return next(ctx, x)
		}
	}
}

// planFor is the plan of model on route r.
func (p *Proxy) planFor(r *routeSpec, model string) (route.Plan, error) {
	if model == "" { // a native route without a model (GET models)
		prov, ok := p.d.Registry.Lookup(nativeProvider)
		if !ok {
			return route.Plan{}, apierr.Newf(apierr.Unavailable, "no_provider", "provider %s is not configured", nativeProvider)
		}
		return route.Plan{Decisions: []route.Decision{{Provider: prov, Strategy: "direct", Reason: "provider:" + prov.Name}}}, nil
	}
	plan, err := p.d.Resolver.Plan(model, time.Now())
	if err != nil || !r.native {
		return plan, err
	}
	return nativeOnly(plan, model)
}

// nativeOnly keeps the decisions of providers with a native API.
func nativeOnly(plan route.Plan, model string) (route.Plan, error) {
	kept := plan.Decisions[:0:0]
	for _, d := range plan.Decisions {
		if _, ok := d.Provider.Adapter.(provider.Native); ok {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		return route.Plan{}, noNativeAPI(model, plan.Decision(0).Provider.Name)
	}
	plan.Decisions = kept
	plan.MaxRetries = min(plan.MaxRetries, len(kept)-1)
	return plan, nil
}

// route runs the rest of the path once per attempt of the plan: a
// retryable status or a connection failure before the first byte moves on
// to the next decision after the chain's backoff; any other answer, and
// every failure after a stream started, is final.
func (p *Proxy) route(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		plan := x.Plan
		if plan == nil {
			return nil, apierr.New(apierr.Internal, "no_plan", "internal error: request not planned")
		}
		for attempt := 0; ; attempt++ {
			d := plan.Decision(attempt)
			x.Attempt = attempt
			x.Provider, x.UpstreamModel = d.Provider.Name, d.Model
			x.RoutingStrategy, x.RoutingReason = d.Strategy, d.Reason
			if attempt > 0 {
				x.RoutingStrategy, x.RoutingReason = "fallback", "fallback:"+plan.Chain+":"+d.Provider.Name
			}
			x.UpstreamStatus = 0
			resp, err := next(ctx, x)
			if err == nil || !retryable(plan, x, err) {
				return resp, err
			}
			// A failure that moves the plan on is noted, and told to health,
			// from the attempt's own error, before anything wraps it.
			p.noteFailure(x, err)
			if x.UpstreamDone != nil {
				x.UpstreamDone(x.Upstream, true)
				x.UpstreamDone = nil
			}
			if attempt >= plan.MaxRetries {
				return nil, plan.Exhausted(attempt+1, x.UpstreamStatus, err)
			}
			if wait := plan.Backoff(attempt + 1); wait > 0 {
				select {
				case <-ctx.Done():
					return nil, apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the request", ctx.Err())
				case <-time.After(wait):
				}
			}
		}
	}
}

// retryable: the provider's status is one the plan retries on, or the call
// failed without an answer (connection refused, timeout).
func retryable(plan *route.Plan, x *pipeline.Exchange, err error) bool {
	if x.UpstreamStatus != 0 {
		return plan.Retryable(x.UpstreamStatus)
	}
	return isUpstreamKind(err)
}

// noteFailure reports a failed attempt for GET /api/routing/status.
func (p *Proxy) noteFailure(x *pipeline.Exchange, err error) {
	if p.d.Failures == nil {
		return
	}
	f := route.Failure{Provider: x.Provider, Model: x.UpstreamModel, Status: x.UpstreamStatus,
		Message: apierr.From(err).Message, At: time.Now().UTC()}
	if x.Plan != nil {
		f.Chain = x.Plan.Chain
	}
	p.d.Failures.Note(f)
}

// noted reports whether err is an exhausted chain, whose attempts the route
// stage has already noted.
func noted(err error) bool { return apierr.From(err).Code == route.CodeExhausted }

// upstreamFailed reports whether the provider failed the call (for health):
// 5xx, 429, no answer, or a stream it broke — not the caller's mistakes.
func upstreamFailed(x *pipeline.Exchange) bool {
	switch {
	case x.UpstreamStatus >= 500 || x.UpstreamStatus == 429:
		return true
	case x.Err != nil && isUpstreamKind(x.Err):
		return true
	}
	return false
}

// hasDailyBudget reports whether provider has a daily budget configured: only
// then is its spend tracked (a KV write per request otherwise wasted).
func (p *Proxy) hasDailyBudget(provider string) bool {
	if p.d.Routing == nil {
		return true
	}
	_, ok := p.d.Routing().Budget(provider)
	return ok
}
