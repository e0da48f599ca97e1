package cache

import (
	"context"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Routing values recorded for a cache hit.
const (
	RoutingStrategy = "cache"
	reasonPrefix    = "cache_hit:tier="
)

// Stage returns the cache middleware for chat completions. It runs after
// auth, decode, planning and limits (a hit counts against the request rate
// but spends nothing) and before the route stage. It is the proxy's wrapper
// of Lookup, Hit and Store: it reads the request from the exchange, answers
// a hit, and stores a completed answer.
func (c *Cache) Stage() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			if x.Chat == nil {
				return next(ctx, x)
			}
			r := Request{Chat: x.Chat, Scope: c.ScopeOf(x.Principal)}
			if x.Inbound != nil {
				r.Header = x.Inbound.Header
			}
			l, err := c.Lookup(ctx, r)
			if err != nil {
				return nil, err
			}
			if l.Reads() {
				if h, ok := l.Hit(ctx); ok {
					return serveHit(x, h)
				}
				x.Header.Set(HeaderCacheHit, "false")
			}
			resp, err := next(ctx, x)
			if err != nil || !l.Writes() || resp == nil || resp.Status != http.StatusOK {
				return resp, err
			}
			switch {
			case resp.Stream != nil:
				col := l.Collect()
				resp.Stream = pipeline.Observe(resp.Stream, col.Add, func(err error) {
					if err != nil {
						return // cut short: never stored
					}
					if body := col.Body(x.Usage); body != nil {
						l.Store(ctx, answerOf(x, body))
					}
				})
			case resp.Body != nil && resp.Raw == nil:
				l.Store(ctx, answerOf(x, resp.Body))
			}
			return resp, nil
		}
	}
}

// serveHit answers x from h.
func serveHit(x *pipeline.Exchange, h *Hit) (*pipeline.Response, error) {
	x.Provider, x.UpstreamModel, x.ResponseModel = h.Provider, h.Model, h.Model
	x.RoutingStrategy, x.RoutingReason = RoutingStrategy, reasonPrefix+h.Tier
	x.Usage, x.Cost = llm.Usage{}, 0
	x.FirstByte = time.Now()
	x.Cache = &pipeline.CacheHit{Tier: h.Tier, Key: h.Key, Similarity: h.Similarity, Query: h.Query, TokensSaved: h.Tokens, CostSaved: h.Cost}
	h.SetHeaders(x.Header)
	if x.Stream {
		s, err := h.Stream()
		if err != nil {
			return nil, err
		}
		return &pipeline.Response{Status: http.StatusOK, Stream: s, Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil
	}
	return &pipeline.Response{Status: http.StatusOK, Body: h.Body, Header: http.Header{"Content-Type": {"application/json"}}}, nil
}

// answerOf is the answer x got, with body.
func answerOf(x *pipeline.Exchange, body []byte) Answer {
	a := Answer{Body: body, Provider: x.Provider, Model: x.ResponseModel, Tokens: x.Usage.Total(), Cost: x.Cost, DoNotStore: x.DoNotStore}
	if a.Model == "" {
		a.Model = x.UpstreamModel
	}
	return a
}
