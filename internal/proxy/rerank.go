package proxy

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// rerankEndpoint is POST /v1/rerank: translated for providers that rerank
// (Cohere), forwarded to OpenAI-compatible servers that serve /rerank (vLLM,
// Jina, …).
var rerankEndpoint = endpoint{kind: pipeline.Rerank, op: "rerank"}

func (p *Proxy) rerankHandler() http.HandlerFunc {
	decode := func(x *pipeline.Exchange) error {
		r, err := llm.DecodeRerankRequest(x.Body)
		if err != nil {
			return err
		}
		x.Model, x.Rerank = r.Model, r
		return nil
	}
	passthrough := p.callPassthrough(rerankEndpoint)
	h := pipeline.Chain(func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		prov, ok := p.d.Registry.Lookup(x.Provider)
		if !ok {
			return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %q is not configured", x.Provider)
		}
		ra, ok := prov.Adapter.(provider.RerankAdapter)
		if !ok {
			return passthrough(ctx, x)
		}
		r := *x.Rerank
		r.Model = x.UpstreamModel
		return p.callRerank(ctx, x, prov, ra, &r)
	}, p.record, p.d.Keys.Stage(false), p.decodeWith(decode), p.routeStage)
	return func(w http.ResponseWriter, r *http.Request) {
		x := newExchange(r, pipeline.Rerank)
		resp, err := h(r.Context(), x)
		p.write(w, x, resp, err, openAIDialect)
	}
}

func (p *Proxy) callRerank(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider, ra provider.RerankAdapter, r *llm.RerankRequest) (*pipeline.Response, error) {
	key, err := p.providerKey(ctx, prov)
	if err != nil {
		return nil, err
	}
	req, err := ra.NewRerankRequest(ctx, prov.Target(x.UpstreamModel), r)
	if err != nil {
		return nil, err
	}
	if err := signerFor(prov).Sign(req, key); err != nil {
		return nil, signError(prov.Name, err)
	}
	start := time.Now()
	resp, err := p.d.Client.Do(req)
	if err != nil {
		x.Upstream = time.Since(start)
		return nil, err
	}
	x.UpstreamStatus = resp.StatusCode
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		x.Upstream = time.Since(start)
		return nil, prov.Adapter.DecodeError(prov.Name, resp.StatusCode, resp.Header, b)
	}
	body, err := p.d.Client.ReadBody(resp)
	x.Upstream = time.Since(start)
	if err != nil {
		return nil, err
	}
	out, usage, err := ra.DecodeRerank(r, body)
	if err != nil {
		return nil, err
	}
	x.FirstByte = time.Now()
	x.Usage = usage
	x.Cost = p.cost(prov.Name, x.UpstreamModel, "", &usage)
	return &pipeline.Response{Status: http.StatusOK, Body: out, Header: http.Header{"Content-Type": {"application/json"}}}, nil
}
