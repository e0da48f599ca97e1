package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// cachePrincipal is who svc's own embedding calls are recorded for.
var cachePrincipal = &identity.Principal{Kind: identity.Anonymous, ID: "svc-semantic-cache", Name: "semantic cache"}

// Embedder returns a function that embeds texts with model (as a caller
// names it: "openai/text-embedding-3-small", an alias, a chain) through
// svc's own providers: routing, fallbacks, the audit log and the metrics
// apply; keys and limits do not (svc is the caller). The semantic cache uses
// it when SEMANTIC_CACHE_EMBEDDING_MODEL is set.
func (p *Proxy) Embedder(model string) func(ctx context.Context, texts []string) ([][]float32, error) {
	var r *routeSpec
	for _, rt := range routes {
		if rt.endpoint == pipeline.Embeddings {
			r = rt
		}
	}
	h := p.build(r, p.call(r), p.stages(r, chainOptions{internal: true}), trace.SpanKindInternal)
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		body, err := json.Marshal(map[string]any{"model": model, "input": texts})
		if err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/embeddings", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		x := newExchange(r, pipeline.Embeddings)
		x.Principal = cachePrincipal
		resp, err := h(ctx, x)
		if err != nil {
			return nil, err
		}
		if resp.Body == nil || resp.Status != http.StatusOK {
			return nil, fmt.Errorf("embeddings: status %d", resp.Status)
		}
		var out struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		vecs := make([][]float32, len(texts))
		for _, d := range out.Data {
			if d.Index < 0 || d.Index >= len(vecs) {
				return nil, fmt.Errorf("embeddings: index %d out of range", d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
		for i, v := range vecs {
			if len(v) == 0 {
				return nil, fmt.Errorf("embeddings: no vector for input %d", i)
			}
		}
		return vecs, nil
	}
}
