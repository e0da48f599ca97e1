package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func chatParams(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage(text)},
	}
}

func TestChatWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey), providertest.WithReply("the answer is 42"))
	g := start(t, fake, nil)
	key, keyID := g.newKey(map[string]any{"alias": "sdk"})
	c := g.client(key)

	var httpResp *http.Response
	res, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "what is the answer?"),
		option.WithResponseInto(&httpResp), option.WithHeader("x-conversation-id", "conv-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; got != "the answer is 42" {
		t.Errorf("content = %q", got)
	}
	if res.Usage.TotalTokens == 0 || res.Usage.PromptTokens == 0 {
		t.Errorf("usage = %+v, want tokens", res.Usage)
	}
	h := httpResp.Header
	if h.Get("x-svc-provider") != "openai" || h.Get("x-svc-model") != "gpt-4o-mini" {
		t.Errorf("x-svc-provider %q x-svc-model %q", h.Get("x-svc-provider"), h.Get("x-svc-model"))
	}
	if _, err := uuid.Parse(h.Get("x-svc-request-id")); err != nil || h.Get("x-svc-call-id") != h.Get("x-svc-request-id") {
		t.Errorf("request id %q call id %q", h.Get("x-svc-request-id"), h.Get("x-svc-call-id"))
	}
	cost, err := strconv.ParseFloat(h.Get("x-svc-cost-usd"), 64)
	if err != nil || cost <= 0 {
		t.Errorf("x-svc-cost-usd = %q, want a positive price for gpt-4o-mini", h.Get("x-svc-cost-usd"))
	}
	if _, err := strconv.Atoi(h.Get("x-svc-latency-ms")); err != nil {
		t.Errorf("x-svc-latency-ms = %q", h.Get("x-svc-latency-ms"))
	}

	// The provider saw svc's key, never the virtual key.
	up := lastChat(t, fake)
	if got := up.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream Authorization = %q, want the server-side key", got)
	}
	if strings.Contains(string(up.Body), key) {
		t.Error("the virtual key reached the provider")
	}

	// The audit entry.
	entries := g.logEntries("", 1)
	if len(entries) != 1 {
		t.Fatalf("got %d entries, want 1", len(entries))
	}
	e := entries[0]
	if e["request_id"] != h.Get("x-svc-request-id") || e["provider"] != "openai" || e["model"] != "gpt-4o-mini" ||
		e["conversation_id"] != "conv-1" || e["routing_strategy"] != "direct" || e["routing_reason"] != "provider:openai" ||
		e["key_id"] != keyID {
		t.Errorf("entry = %v", e)
	}
	if e["cost"].(float64) != cost {
		t.Errorf("entry cost %v, header %v", e["cost"], cost)
	}
	m := e["metrics"].(map[string]any)
	if m["success"] != true || m["total_tokens"].(float64) != float64(res.Usage.TotalTokens) {
		t.Errorf("entry metrics = %v", m)
	}
	api := m["custom_metrics"].(map[string]any)["api_key"].(string)
	if !strings.HasPrefix(api, "sk-svc-") || len(api) > 16 || strings.Contains(key, strings.TrimSuffix(api, "…")+"x") {
		t.Errorf("custom_metrics.api_key = %q, want a masked prefix", api)
	}
	for _, f := range []string{"timestamp", "model_provider", "tokens_used", "latency_ms", "processing_time_ms", "content_type",
		"user_id", "conversation_stage", "compliance_status", "compliance_violations", "metacache", "compliance"} {
		if _, ok := e[f]; !ok {
			t.Errorf("entry lacks %s", f)
		}
	}
}

func TestChatStreamWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("one two three four five six"), providertest.WithChunks(6))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)

	for _, includeUsage := range []bool{true, false} {
		t.Run("include_usage="+strconv.FormatBool(includeUsage), func(t *testing.T) {
			p := chatParams("openai/gpt-4o", "count")
			if includeUsage {
				p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			var httpResp *http.Response
			s := c.Chat.Completions.NewStreaming(context.Background(), p, option.WithResponseInto(&httpResp))
			acc := openai.ChatCompletionAccumulator{}
			chunks, usageChunks := 0, 0
			for s.Next() {
				ch := s.Current()
				acc.AddChunk(ch)
				chunks++
				if len(ch.Choices) == 0 {
					usageChunks++
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if got := acc.Choices[0].Message.Content; got != "one two three four five six" {
				t.Errorf("content = %q", got)
			}
			if chunks < 6 {
				t.Errorf("got %d chunks, want the provider's chunks relayed one by one", chunks)
			}
			if includeUsage && (usageChunks != 1 || acc.Usage.TotalTokens == 0) {
				t.Errorf("usage chunks %d, usage %+v; want the usage chunk", usageChunks, acc.Usage)
			}
			if !includeUsage && usageChunks != 0 {
				t.Errorf("got %d usage-only chunks the client did not ask for", usageChunks)
			}
			if httpResp.Header.Get("x-svc-provider") != "openai" || httpResp.Header.Get("content-type") != "text/event-stream" {
				t.Errorf("headers %v", httpResp.Header)
			}
			// svc asked the provider for usage either way, and the model without prefix.
			var up map[string]any
			if err := json.Unmarshal(lastChat(t, fake).Body, &up); err != nil {
				t.Fatal(err)
			}
			if up["model"] != "gpt-4o" || up["stream_options"].(map[string]any)["include_usage"] != true {
				t.Errorf("upstream body = %v", up)
			}
		})
	}
	entries := g.logEntries("", 2)
	for _, e := range entries {
		if e["stream"] != true || e["tokens_used"].(float64) == 0 || e["cost"].(float64) <= 0 {
			t.Errorf("stream entry = %v, want tokens and cost from the stream's usage", e)
		}
	}

	// Headers: the estimated cost and the time to the first byte; trailers
	// (read once the body has been read to its end, which g.post does; the
	// SDK stops at [DONE]): the actual cost and the total latency.
	resp, _ := g.post("/v1/chat/completions", key, []byte(`{"model":"openai/gpt-4o","stream":true,"messages":[{"role":"user","content":"count"}]}`), nil)
	estimate, _ := strconv.ParseFloat(resp.Header.Get("x-svc-cost-usd"), 64)
	actual, _ := strconv.ParseFloat(resp.Trailer.Get("x-svc-cost-usd"), 64)
	first, _ := strconv.Atoi(resp.Header.Get("x-svc-latency-ms"))
	total, err := strconv.Atoi(resp.Trailer.Get("x-svc-latency-ms"))
	if estimate <= 0 || actual <= 0 || err != nil || total < first {
		t.Errorf("cost header %q trailer %q, latency header %q trailer %q: want an estimate, the actual cost, and a total latency at least the first byte's",
			resp.Header.Get("x-svc-cost-usd"), resp.Trailer.Get("x-svc-cost-usd"), resp.Header.Get("x-svc-latency-ms"), resp.Trailer.Get("x-svc-latency-ms"))
	}
}

func TestChatContentPartsAndUnknownFieldsPassThrough(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	body := `{"model":"gpt-4o","logprobs":true,"metadata":{"team":"x"},"messages":[{"role":"user","content":[` +
		`{"type":"text","text":"describe"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
		`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`
	resp, b := g.post("/v1/chat/completions", key, []byte(body), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if got := string(lastChat(t, fake).Body); got != body {
		t.Errorf("upstream body changed:\n got %s\nwant %s", got, body)
	}
}

func TestModels(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithModels("gpt-4o-mini", "ft:gpt-4o:acme"))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	// The background refresh fetches the provider's list; the first answer
	// never waits for it, so poll briefly.
	var ids map[string]bool
	for i := 0; i < 50; i++ {
		page, err := c.Models.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids = map[string]bool{}
		for _, m := range page.Data {
			ids[m.ID] = true
		}
		if ids["ft:gpt-4o:acme"] {
			break
		}
		fake.Reset()
	}
	if !ids["gpt-4o-mini"] || !ids["ft:gpt-4o:acme"] {
		t.Errorf("models = %v, want the price table's and the provider's", ids)
	}
	for id := range ids {
		if strings.HasPrefix(id, "groq/") || strings.HasPrefix(id, "anthropic/") {
			t.Errorf("model %s of a provider with no key is listed", id)
		}
	}
	bad := g.client("sk-svc-nope")
	if _, err := bad.Models.List(context.Background()); statusOf(err) != 401 {
		t.Errorf("models with a bad key: %v, want 401", err)
	}
}

func statusOf(err error) int {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// lastChat is the last chat request the fake received (the background model
// refresh also calls it).
func lastChat(t *testing.T, fake *providertest.OpenAI) providertest.Recorded {
	t.Helper()
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == "/v1/chat/completions" {
			return reqs[i]
		}
	}
	t.Fatal("the provider received no chat request")
	return providertest.Recorded{}
}
