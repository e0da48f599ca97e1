package proxy

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// TestStageOrder holds every route's chain: a test per route that fails
// when a stage moves, appears or disappears.
func TestStageOrder(t *testing.T) {
	up := newScripted(t, http.StatusOK)
	e := newEnv(t, &route.Config{}, limit.Limits{RPM: 1000},
		providerAt("openai", "openai", up.base()), providerAt("anthropic", "anthropic", up.srv.URL))
	withCache := []string{"record", "auth", "decode", "plan", "limit", "cache", "route"}
	without := []string{"record", "auth", "decode", "plan", "limit", "route"}
	// Routes that answer from svc's own records call no provider.
	local := []string{"record", "auth"}
	for _, tc := range []struct {
		route string
		want  []string
	}{
		// No cache in this proxy (Deps.Cache nil); with it, below.
		{"chat", without},
		{"embeddings", without},
		{"completions", without},
		{"images", without},
		{"speech", without},
		{"transcriptions", without},
		{"rerank", without},
		{"responses", without},
		{"responses-get", local},
		{"responses-delete", local},
		{"responses-input-items", local},
		{"native-messages", without},
		{"native-count-tokens", without},
		{"native-models", without},
	} {
		t.Run(tc.route, func(t *testing.T) {
			var r *routeSpec
			for _, rt := range routes {
				if rt.name == tc.route {
					r = rt
				}
			}
			if r == nil {
				t.Fatalf("no route %q", tc.route)
			}
			got := stageNames(e.p.stages(r, chainOptions{}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s chain (-want +got):\n%s", tc.route, diff)
			}
		})
	}
	// And the order a request actually passes, traced.
	e.stages()
	if resp, body := e.post(t, "/v1/chat/completions", chatBody("gpt-4o-mini")); resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	if diff := cmp.Diff(without, e.stages()); diff != "" {
		t.Errorf("stages a chat request entered (-want +got):\n%s", diff)
	}

	// With the semantic cache on, chat (and only chat) passes it.
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	sc, err := cache.New(kv, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e = newEnvWith(t, &route.Config{}, limit.Limits{RPM: 1000}, func(d *Deps) { d.Cache = sc },
		providerAt("openai", "openai", up.base()))
	for _, r := range routes {
		want := without
		switch {
		case r.name == "chat":
			want = withCache
		case r.local != nil:
			want = local
		}
		if diff := cmp.Diff(want, stageNames(e.p.stages(r, chainOptions{}))); diff != "" {
			t.Errorf("%s chain with the cache on (-want +got):\n%s", r.name, diff)
		}
	}
	e.post(t, "/v1/chat/completions", chatBody("gpt-4o-mini"))
	if diff := cmp.Diff(withCache, e.stages()); diff != "" {
		t.Errorf("stages a chat request entered with the cache on (-want +got):\n%s", diff)
	}
	// svc's own embedding calls skip auth and limits.
	var emb *routeSpec
	for _, r := range routes {
		if r.endpoint == pipeline.Embeddings {
			emb = r
		}
	}
	if diff := cmp.Diff([]string{"record", "decode", "plan", "route"}, stageNames(e.p.stages(emb, chainOptions{internal: true}))); diff != "" {
		t.Errorf("internal embeddings chain (-want +got):\n%s", diff)
	}
}

func stageNames(st []pipeline.Stage) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = s.Name
	}
	return out
}

// TestRouteStage runs the route stage's fallback against scripted
// upstreams, as Caddy's retries_test.go does.
func TestRouteStage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		first      []int // the first target's script
		second     []int // the second's
		wantStatus int
		wantCalls  [2]int
		wantReason string
	}{
		{"first answers", []int{200}, []int{200}, 200, [2]int{1, 0}, "provider:a"},
		{"503 moves on", []int{503}, []int{200}, 200, [2]int{1, 1}, "fallback:main:b"},
		{"429 moves on", []int{429}, []int{200}, 200, [2]int{1, 1}, "fallback:main:b"},
		{"529 moves on", []int{529}, []int{200}, 200, [2]int{1, 1}, "fallback:main:b"},
		{"501 moves on", []int{501}, []int{200}, 200, [2]int{1, 1}, "fallback:main:b"},
		{"exhausted: 503", []int{503}, []int{502}, 503, [2]int{1, 1}, "fallback:main:b"},
		{"400 is final", []int{400}, []int{200}, 400, [2]int{1, 0}, "provider:a"},
		{"404 is final", []int{404}, []int{200}, 404, [2]int{1, 0}, "provider:a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newScripted(t, tc.first...), newScripted(t, tc.second...)
			rc := &route.Config{Chains: []route.Chain{{Name: "main", Targets: []route.Target{
				{Provider: "a", Model: "m1"}, {Provider: "b", Model: "m2"}}, RetryOn: route.DefaultRetryOn, MaxRetries: 1}}}
			e := newEnv(t, rc, limit.Limits{}, providerAt("a", "openai", a.base()), providerAt("b", "openai", b.base()))
			resp, body := e.post(t, "/v1/chat/completions", chatBody("main"))
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if tc.wantStatus == 503 && (!strings.Contains(body, "fallback_exhausted") || !strings.Contains(body, "HTTP 502")) {
				t.Errorf("exhausted chain's body %s: want fallback_exhausted naming the last provider's failure", body)
			}
			if got := [2]int{a.count(), b.count()}; got != tc.wantCalls {
				t.Errorf("calls = %v, want %v", got, tc.wantCalls)
			}
			entries := e.rec.all()
			if len(entries) != 1 || entries[0].RoutingReason != tc.wantReason {
				t.Fatalf("audit entries %+v, want one with routing_reason %q", entries, tc.wantReason)
			}
		})
	}
	t.Run("unreachable moves on", func(t *testing.T) {
		b := newScripted(t, 200)
		rc := &route.Config{Chains: []route.Chain{{Name: "main", Targets: []route.Target{
			{Provider: "a", Model: "m1"}, {Provider: "b", Model: "m2"}}, RetryOn: route.DefaultRetryOn, MaxRetries: 1}}}
		e := newEnv(t, rc, limit.Limits{}, providerAt("a", "openai", "http://127.0.0.1:1/v1"), providerAt("b", "openai", b.base()))
		if resp, body := e.post(t, "/v1/chat/completions", chatBody("main")); resp.StatusCode != 200 || b.count() != 1 {
			t.Errorf("status %d (%s), second target calls %d; want 200 from the second", resp.StatusCode, body, b.count())
		}
	})
}

// TestRecordStage: every request ends in exactly one audit entry with the
// truth of how it ended: refused before the provider, answered, streamed to
// the end, or abandoned by the client.
func TestRecordStage(t *testing.T) {
	up := newScripted(t, 200)
	e := newEnv(t, &route.Config{}, limit.Limits{}, providerAt("openai", "openai", up.base()))

	// Refused by auth: recorded with its status.
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(chatBody("gpt-4o-mini")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Invalid body: 400.
	e.post(t, "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[]}`)
	// Answered.
	e.post(t, "/v1/chat/completions", chatBody("gpt-4o-mini"))
	got := e.rec.all()
	want := []struct {
		status  int
		errType string
		tokens  int64
	}{{401, "authentication_error", 0}, {400, "invalid_request_error", 0}, {200, "", 4}}
	if len(got) != len(want) {
		t.Fatalf("%d audit entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Status != w.status || got[i].ErrorType != w.errType || got[i].TokensUsed != w.tokens {
			t.Errorf("entry %d: status %d, error %q, tokens %d; want %d, %q, %d",
				i, got[i].Status, got[i].ErrorType, got[i].TokensUsed, w.status, w.errType, w.tokens)
		}
	}
}

// TestRecordStageStreams: a stream's entry is written when it ends, with
// its outcome: complete, or cut by the client.
func TestRecordStageStreams(t *testing.T) {
	slow := streamingUpstream(t, 50, 20*time.Millisecond)
	e := newEnv(t, &route.Config{}, limit.Limits{}, providerAt("openai", "openai", slow+"/v1"))
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`

	// Read to the end.
	e.post(t, "/v1/chat/completions", body)
	// Cut after the first event.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for events := 0; events < 6; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(e.rec.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := e.rec.all()
	if len(got) != 2 {
		t.Fatalf("%d audit entries, want 2", len(got))
	}
	if got[0].Error != "" || !got[0].Metrics.Success {
		t.Errorf("complete stream: error %q success %v, want success", got[0].Error, got[0].Metrics.Success)
	}
	if got[1].ErrorType != "client_closed_request" || got[1].Metrics.Success {
		t.Errorf("cut stream: error type %q success %v, want client_closed_request", got[1].ErrorType, got[1].Metrics.Success)
	}
	// Cut before the provider's usage came: charged the prompt and what was
	// streamed, estimated (it was 0 tokens and $0).
	if got[1].Metrics.PromptTokens <= 0 || got[1].Metrics.CompletionTokens <= 0 || got[1].Cost <= 0 || !got[1].UsageEstimated {
		t.Errorf("cut stream: prompt %d, completion %d tokens, cost %v, estimated %v; want the prompt and the streamed text charged",
			got[1].Metrics.PromptTokens, got[1].Metrics.CompletionTokens, got[1].Cost, got[1].UsageEstimated)
	}
	if got[0].UsageEstimated || got[0].TokensUsed <= 0 {
		t.Errorf("complete stream: tokens %d, estimated %v; want the provider's usage", got[0].TokensUsed, got[0].UsageEstimated)
	}
}

// TestNativeRoutesUseThePlan: /native and /ide resolve through the routing
// plan (aliases, chains), keeping only providers with a native API.
func TestNativeRoutesUseThePlan(t *testing.T) {
	up := newAnthropicUpstream(t)
	other := newScripted(t, 200)
	rc := &route.Config{
		ModelMap: map[string]string{"house-model": "anthropic/claude-haiku-4-5"},
		Chains: []route.Chain{{Name: "mixed", Targets: []route.Target{
			{Provider: "openai", Model: "gpt-4o-mini"}, {Provider: "anthropic", Model: "claude-sonnet-4-5"}}, RetryOn: route.DefaultRetryOn, MaxRetries: 1}},
	}
	e := newEnv(t, rc, limit.Limits{}, providerAt("openai", "openai", other.base()), providerAt("anthropic", "anthropic", up))
	for _, tc := range []struct {
		model, wantModel string
		wantStatus       int
	}{
		{"house-model", "claude-haiku-4-5", 200}, // an alias
		{"mixed", "claude-sonnet-4-5", 200},      // a chain: only its native target
		{"gpt-4o", "", http.StatusBadRequest},    // openai's family, no chain: no native API
	} {
		resp, body := e.post(t, "/native/v1/messages", `{"model":"`+tc.model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != tc.wantStatus {
			t.Errorf("%s: status %d (%s), want %d", tc.model, resp.StatusCode, body, tc.wantStatus)
			continue
		}
		if tc.wantModel != "" && resp.Header.Get(hModel) != tc.wantModel {
			t.Errorf("%s: served by %s, want %s", tc.model, resp.Header.Get(hModel), tc.wantModel)
		}
	}
	if other.count() != 0 {
		t.Errorf("the OpenAI-format provider was called %d times from a native route", other.count())
	}
}
