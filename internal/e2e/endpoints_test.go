package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func TestEmbeddingsWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	var resp *http.Response
	res, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model:      "openai/text-embedding-3-small",
		Input:      openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first text", "second"}},
		Dimensions: openai.Int(8),
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || len(res.Data[0].Embedding) != 8 || res.Usage.PromptTokens == 0 {
		t.Fatalf("embeddings = %d vectors of %d, usage %+v", len(res.Data), len(res.Data[0].Embedding), res.Usage)
	}
	want := providertest.Embedding("first text", 8)
	for i, v := range res.Data[0].Embedding {
		if float32(v) != want[i] {
			t.Fatalf("vector[%d] = %v, want %v (the provider's answer, unchanged)", i, v, want[i])
		}
	}
	if resp.Header.Get("x-svc-provider") != "openai" || resp.Header.Get("x-svc-request-id") == "" {
		t.Errorf("headers %v", resp.Header)
	}
	if cost, _ := strconv.ParseFloat(resp.Header.Get("x-svc-cost-usd"), 64); cost <= 0 {
		t.Errorf("x-svc-cost-usd = %q, want the embedding priced", resp.Header.Get("x-svc-cost-usd"))
	}
	var up map[string]any
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == "/v1/embeddings" {
			json.Unmarshal(reqs[i].Body, &up)
			if reqs[i].Header.Get("Authorization") != "Bearer "+upstreamKey {
				t.Error("the provider did not get svc's key")
			}
			break
		}
	}
	if up["model"] != "text-embedding-3-small" || up["dimensions"] != 8.0 {
		t.Errorf("upstream body %v, want the prefix stripped and dimensions passed", up)
	}
	entries := g.logEntries("", 1)
	if len(entries) != 1 || entries[0]["endpoint"] != "embeddings" || entries[0]["tokens_used"].(float64) == 0 {
		t.Errorf("entry = %v", entries)
	}
	for _, bad := range []string{`{"model":"text-embedding-3-small"}`, `{"input":"x"}`, `{"model":"m","input":""}`, `{"model":"m","input":5}`, `{"model":"m","input":"x","encoding_format":"hex"}`} {
		if r, b := g.post("/v1/embeddings", key, []byte(bad), nil); r.StatusCode != 400 {
			t.Errorf("%s: %d %s, want 400", bad, r.StatusCode, b)
		}
	}
	if r, _ := g.post("/v1/embeddings", "", []byte(`{"model":"m","input":"x"}`), nil); r.StatusCode != 401 {
		t.Errorf("no key: %d, want 401", r.StatusCode)
	}
}
