package proxy

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// nativeProvider serves native routes that name no model (GET models).
const nativeProvider = "anthropic"

// extendedContext is the suffix editors add to a model name to ask for the
// long context window; providers do not know it.
const extendedContext = "[1m]"

// nativeRoute is one provider-native route, served identically under the
// /native and /ide prefixes.
type nativeRoute struct {
	method string
	op     string // path after /v1/
}

var nativeRoutes = []nativeRoute{
	{http.MethodPost, "messages"},
	{http.MethodPost, "messages/count_tokens"},
	{http.MethodGet, "models"},
}

// nativeHandler forwards the provider's own API untranslated, with the
// server-side key injected; the caller's virtual key may come in
// Authorization or x-api-key.
func (p *Proxy) nativeHandler(rt nativeRoute) http.HandlerFunc {
	h := pipeline.Chain(p.callNative(rt),
		p.record,
		p.d.Keys.Stage(true),
		p.decodeNative(rt),
		p.routeNative,
		p.limitStage,
	)
	return func(w http.ResponseWriter, r *http.Request) {
		x := newExchange(r, pipeline.NativeMessages)
		resp, err := h(r.Context(), x)
		p.write(w, x, resp, err, anthropicDialect)
	}
}

func (p *Proxy) decodeNative(rt nativeRoute) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			if rt.method == http.MethodGet {
				return next(ctx, x)
			}
			if err := p.readBody(x); err != nil {
				return nil, err
			}
			var b struct {
				Model  string `json:"model"`
				Stream bool   `json:"stream"`
			}
			if err := jsonbody.Decode(x.Body, &b, false); err != nil {
				return nil, err
			}
			if err := requireModel(b.Model); err != nil {
				return nil, err
			}
			x.Model, x.Stream = b.Model, b.Stream && rt.op == "messages"
			return next(ctx, x)
		}
	}
}

// routeNative picks the provider: by the model (its [1m] suffix stripped),
// or the native provider for routes without one. It must speak a native API.
func (p *Proxy) routeNative(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		var prov *provider.Provider
		if x.Model == "" {
			prov, _ = p.d.Registry.Lookup(nativeProvider)
			if prov == nil {
				return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %s is not configured", nativeProvider)
			}
			x.RoutingStrategy, x.RoutingReason = "direct", "provider:"+prov.Name
		} else {
			model := strings.TrimSuffix(x.Model, extendedContext)
			d, err := p.d.Resolver.Resolve(model)
			if err != nil {
				return nil, err
			}
			prov = d.Provider
			x.UpstreamModel, x.RoutingStrategy, x.RoutingReason = d.Model, d.Strategy, d.Reason
			if !auth.AllowsModel(x.Principal, model, d.Model) {
				return nil, auth.ErrModelNotAllowed(model)
			}
		}
		if _, ok := prov.Adapter.(provider.Native); !ok {
			return nil, apierr.Newf(apierr.InvalidRequest, "no_native_api",
				"model %q is served by provider %s, which has no native messages API; use /v1/chat/completions", x.Model, prov.Name)
		}
		x.Provider = prov.Name
		return next(ctx, x)
	}
}

// nativeHeaders are the provider answer's headers relayed to the caller.
func nativeHeaders(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if lk == "content-type" || lk == "request-id" || strings.HasPrefix(lk, "anthropic-") {
			out[k] = v
		}
	}
	return out
}

func (p *Proxy) callNative(rt nativeRoute) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		prov, _ := p.d.Registry.Lookup(x.Provider)
		nat := prov.Adapter.(provider.Native)
		req, err := nat.NewNativeRequest(ctx, prov.Deployment(x.UpstreamModel), provider.NativeCall{
			Method: rt.method, Op: rt.op, Query: x.Inbound.URL.RawQuery, Header: x.Inbound.Header, Body: x.Body, Model: x.Model,
		})
		if err != nil {
			return nil, err
		}
		resp, start, err := p.send(ctx, x, prov, req)
		if err != nil {
			return nil, err
		}
		x.FirstByte = time.Now()
		header := nativeHeaders(resp.Header)
		if x.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			info := &provider.StreamInfo{}
			s := pipeline.Observe(nat.DecodeNativeStream(resp.Body, info), nil, func(error) {
				x.Upstream = time.Since(start)
				x.Usage, x.ResponseModel = info.Usage, info.Model
				x.Cost = p.cost(prov.Name, x.UpstreamModel, info.Model, &info.Usage)
			})
			return &pipeline.Response{Status: resp.StatusCode, Stream: s, Header: header}, nil
		}
		out, err := p.receive(x, resp, start)
		if err != nil {
			return nil, err
		}
		if rt.op == "messages" {
			if u, model, err := nat.DecodeNative(out); err == nil {
				x.Usage, x.ResponseModel = u, model
				x.Cost = p.cost(prov.Name, x.UpstreamModel, model, &u)
			}
		}
		return &pipeline.Response{Status: resp.StatusCode, Body: out, Header: header}, nil
	}
}
