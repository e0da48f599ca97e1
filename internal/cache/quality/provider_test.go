package quality

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/cache/embed"
)

// Settings of TestQualityProviderEmbedder: any OpenAI-compatible
// /v1/embeddings, for instance svc itself with a virtual key and
// SVC_QUALITY_EMBEDDINGS_MODEL=openai/text-embedding-3-small.
const (
	envEmbeddingsURL   = "SVC_QUALITY_EMBEDDINGS_URL" // base URL, e.g. http://127.0.0.1:7775/v1
	envEmbeddingsModel = "SVC_QUALITY_EMBEDDINGS_MODEL"
	envEmbeddingsKey   = "SVC_QUALITY_EMBEDDINGS_KEY"
)

// TestQualityProviderEmbedder runs the benchmark with a provider's embedding
// model when one is configured (no provider is reachable from CI), and logs
// the report and the threshold sweep: the figures for choosing
// SEMANTIC_CACHE_THRESHOLD with SEMANTIC_CACHE_EMBEDDING_MODEL.
func TestQualityProviderEmbedder(t *testing.T) {
	base, model := os.Getenv(envEmbeddingsURL), os.Getenv(envEmbeddingsModel)
	if base == "" || model == "" {
		t.Skipf("set %s and %s (and %s if it needs a key) to measure a provider's embedding model", envEmbeddingsURL, envEmbeddingsModel, envEmbeddingsKey)
	}
	e := embed.Batch(embed.Func("provider:"+model, 0, openAIEmbeddings(base, model, os.Getenv(envEmbeddingsKey))), 64, 5*time.Millisecond)
	pairs := loadPairs(t)
	sims, err := Similarities(context.Background(), e, pairs)
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(pairs, sims, defaultThreshold, true)
	r.Embedder = e.Name()
	t.Logf("with verification:\n%s", r)
	t.Logf("threshold sweep (%s):\n%s", e.Name(), SweepTable(pairs, sims, sweepThresholds()))
	if r.FalseHitRate > maxFalseHitRate {
		t.Errorf("at threshold %.2f with verification: false-hit rate %.1f%%, want ≤ %.0f%%", defaultThreshold, 100*r.FalseHitRate, 100*maxFalseHitRate)
	}
}

// openAIEmbeddings calls an OpenAI-compatible embeddings endpoint.
func openAIEmbeddings(base, model, key string) func(ctx context.Context, texts []string) ([][]float32, error) {
	client := &http.Client{Timeout: time.Minute}
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		body, _ := json.Marshal(map[string]any{"model": model, "input": texts})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/embeddings", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("embeddings: status %d: %.200s", resp.StatusCode, b)
		}
		var out struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		vecs := make([][]float32, len(texts))
		for _, d := range out.Data {
			if d.Index >= 0 && d.Index < len(vecs) {
				vecs[d.Index] = d.Embedding
			}
		}
		return vecs, nil
	}
}
