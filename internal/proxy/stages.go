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

// routeStage resolves the provider and enforces the key's model restrictions.
func (p *Proxy) routeStage(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		d, err := p.d.Resolver.Resolve(x.Model)
		if err != nil {
			return nil, err
		}
		x.Provider, x.UpstreamModel = d.Provider.Name, d.Model
		x.RoutingStrategy, x.RoutingReason = d.Strategy, d.Reason
		if !auth.AllowsModel(x.Principal, x.Model, d.Model) {
			return nil, auth.ErrModelNotAllowed(x.Model)
		}
		return next(ctx, x)
	}
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
