package proxy

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/route"
)

// record is the outermost stage: when the exchange ends — at once for errors
// and bodies, at the end of the stream for streams — it writes the audit entry
// and the metrics. Every request passes it, rejected ones too.
func (p *Proxy) record(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		p.d.Metrics.InFlight.Inc()
		resp, err := next(ctx, x)
		if err != nil {
			x.Err = err
			x.Status = apierr.From(err).Status()
			p.finish(x)
			return nil, err
		}
		x.Status = resp.Status
		onEnd := func(err error) {
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, pipeline.ErrAbandoned) {
					err = apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the stream", err)
				}
				x.Err = err
			}
			p.finish(x)
		}
		if resp.Raw != nil {
			resp.Raw = pipeline.ObserveReader(resp.Raw, onEnd)
			return resp, nil
		}
		if resp.Stream == nil {
			p.finish(x)
			return resp, nil
		}
		resp.Stream = pipeline.Observe(resp.Stream, nil, onEnd)
		return resp, nil
	}
}

func (p *Proxy) finish(x *pipeline.Exchange) {
	if x.End.IsZero() {
		x.End = time.Now()
	}
	p.d.Metrics.InFlight.Dec()
	if x.UpstreamDone != nil {
		x.UpstreamDone(x.Upstream, upstreamFailed(x))
	}
	if p.d.Spend != nil && x.Cost > 0 && p.hasDailyBudget(x.Provider) {
		go p.d.Spend.Add(context.Background(), x.Provider, x.Cost, time.Now())
	}
	if x.Err != nil && x.Provider != "" && upstreamFailed(x) {
		p.noteFailure(x, x.Err)
	}
	p.d.Audit.Record(audit.FromExchange(x, x.Upstream))
	model := x.UpstreamModel
	if model == "" {
		model = x.Model
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

// decodeChat reads and validates the chat body.
func (p *Proxy) decodeChat(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		if err := p.readBody(x); err != nil {
			return nil, err
		}
		req, err := llm.DecodeChatRequest(x.Body)
		if err != nil {
			return nil, err
		}
		x.Chat, x.Model, x.Stream = req, req.Model, req.Stream
		return next(ctx, x)
	}
}

// planKey carries the request's routing plan from planStage to routeStage.
type planKey struct{}

// planStage plans the request (forced provider, alias, fallback chain,
// strategy, provider budgets), enforces the key's model restrictions and
// records the first target, so that the stages between it and routeStage
// (limits) run once per request and price with the first target.
func (p *Proxy) planStage(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		plan, err := p.d.Resolver.Plan(x.Model, time.Now())
		if err != nil {
			return nil, err
		}
		first := plan.Decision(0)
		if !auth.AllowsModel(x.Principal, x.Model, first.Model) {
			return nil, auth.ErrModelNotAllowed(x.Model)
		}
		x.Provider, x.UpstreamModel = first.Provider.Name, first.Model
		x.RoutingStrategy, x.RoutingReason = first.Strategy, first.Reason
		return next(context.WithValue(ctx, planKey{}, &plan), x)
	}
}

// routeStage runs the rest of the path once per attempt of the plan: a
// retryable status or a connection failure before the first byte moves on
// to the next target after the chain's backoff; any other answer, and every
// failure after a stream started, is final.
func (p *Proxy) routeStage(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		plan, _ := ctx.Value(planKey{}).(*route.Plan)
		if plan == nil {
			return nil, apierr.New(apierr.Internal, "no_plan", "internal error: request not planned")
		}
		for attempt := 0; ; attempt++ {
			d := plan.Decision(attempt)
			x.Provider, x.UpstreamModel = d.Provider.Name, d.Model
			x.RoutingStrategy, x.RoutingReason = d.Strategy, d.Reason
			if attempt > 0 {
				x.RoutingStrategy, x.RoutingReason = "fallback", "fallback:"+plan.Chain+":"+d.Provider.Name
			}
			x.UpstreamStatus = 0
			resp, err := next(ctx, x)
			if err == nil || attempt >= plan.MaxRetries || !retryable(plan, x, err) {
				return resp, err
			}
			p.noteFailure(x, err)
			if x.UpstreamDone != nil {
				x.UpstreamDone(x.Upstream, true)
				x.UpstreamDone = nil
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
	p.d.Failures.Note(route.Failure{Provider: x.Provider, Model: x.UpstreamModel, Status: x.UpstreamStatus,
		Message: apierr.From(err).Message, At: time.Now().UTC()})
}

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
