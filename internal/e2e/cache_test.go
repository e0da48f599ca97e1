package e2e

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

// chatPosts counts the chat completions the fake received.
func chatPosts(fake *providertest.OpenAI) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/chat/completions") {
			n++
		}
	}
	return n
}

func ask(q string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are helpful."), openai.UserMessage(q)},
	}
}

// TestCacheThroughTheSDK: a repeated question is answered from the cache,
// plain and streamed, with the cache headers, an audit entry saying so, the
// statistics and the metrics.
func TestCacheThroughTheSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("Paris is the capital of France."))
	g := start(t, fake, map[string]string{"SEMANTIC_CACHE_ENABLED": "true"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	ctx := context.Background()

	first, err := c.Chat.Completions.New(ctx, ask("What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	var hr *http.Response
	second, err := c.Chat.Completions.New(ctx, ask("What is the capital of France?"), option.WithResponseInto(&hr))
	if err != nil {
		t.Fatal(err)
	}
	if n := chatPosts(fake); n != 1 {
		t.Fatalf("the upstream received %d chat calls, want 1", n)
	}
	if hr.Header.Get("x-svc-cache-hit") != "true" || hr.Header.Get("x-svc-cache-key") == "" || hr.Header.Get("x-tokens-saved") == "" || hr.Header.Get("x-svc-cost-usd") != "0" {
		t.Errorf("hit headers: %v", hr.Header)
	}
	if second.Choices[0].Message.Content != first.Choices[0].Message.Content || second.Usage.TotalTokens != first.Usage.TotalTokens {
		t.Errorf("cached answer %+v differs from %+v", second, first)
	}

	// Streamed: served from the same entry as a well-formed stream.
	s := c.Chat.Completions.NewStreaming(ctx, ask("What is the capital of France?"), option.WithResponseInto(&hr))
	var text strings.Builder
	for s.Next() {
		ch := s.Current()
		if len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "Paris is the capital of France." || hr.Header.Get("x-svc-cache-hit") != "true" || chatPosts(fake) != 1 {
		t.Errorf("streamed hit: %q, headers %v, upstream calls %d", text.String(), hr.Header, chatPosts(fake))
	}

	// A paraphrase is a semantic hit, once the first answer is indexed (off
	// the response path, within milliseconds). no-store: a miss must not
	// store the paraphrase's own answer, which would make the next try an
	// exact hit.
	misses := 0
	for deadline := time.Now().Add(10 * time.Second); ; misses++ {
		_, err = c.Chat.Completions.New(ctx, ask("What's the capital of France?"), option.WithResponseInto(&hr), option.WithHeader("x-svc-cache", "no-store"))
		if err != nil {
			t.Fatal(err)
		}
		if hr.Header.Get("x-svc-cache-hit") == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the paraphrase was never a semantic hit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if hr.Header.Get("x-cache-similarity") == "" {
		t.Errorf("paraphrase: headers %v", hr.Header)
	}
	// Another city is not.
	before := chatPosts(fake)
	if _, err = c.Chat.Completions.New(ctx, ask("What is the capital of Spain?"), option.WithResponseInto(&hr)); err != nil {
		t.Fatal(err)
	}
	if hr.Header.Get("x-svc-cache-hit") == "true" || chatPosts(fake) != before+1 {
		t.Errorf("another entity was a hit: headers %v, upstream calls %d", hr.Header, chatPosts(fake)-before)
	}

	entries := g.logEntries("limit=100", 5+misses)
	hits := 0
	for _, e := range entries {
		mc, _ := e["metacache"].(map[string]any)
		if e["routing_strategy"] == "cache" {
			hits++
			if mc["hit"] != true || mc["tokens_saved"].(float64) <= 0 || !strings.HasPrefix(e["routing_reason"].(string), "cache_hit:tier=L") {
				t.Errorf("cache-hit entry: %v", e)
			}
		}
	}
	if hits != 3 {
		t.Errorf("%d cache-hit audit entries, want 3", hits)
	}

	var stats map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code := g.admin("GET", "/api/metacache/stats", nil, &stats); code != 200 {
			t.Fatalf("stats: %d", code)
		}
		if stats["hits"].(float64) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	tiers, _ := stats["hits_by_tier"].(map[string]any)
	if stats["hits"].(float64) != 3 || tiers["L3"].(float64) != 1 || stats["tokens_saved"].(float64) <= 0 {
		t.Errorf("stats: %v", stats)
	}
	resp, err := http.Get(g.proxy + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `svc_cache_hits_total{tier="L1"} 2`) || !strings.Contains(string(body), `svc_cache_hits_total{tier="L3"} 1`) {
		t.Errorf("metrics lack the cache hits:\n%s", grepLines(string(body), "svc_cache"))
	}

	// Flush: the next repeat goes upstream.
	if code := g.admin("POST", "/api/metacache/flush", map[string]any{}, nil); code != 200 {
		t.Fatalf("flush: %d", code)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := c.Chat.Completions.New(ctx, ask("What is the capital of France?"), option.WithResponseInto(&hr)); err != nil {
			t.Fatal(err)
		}
		if hr.Header.Get("x-svc-cache-hit") != "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still served from the cache after a flush")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCacheAcrossReplicas: an answer cached through one proxy is a hit
// through another, exact (L2) and paraphrased (L3), with real Redis.
func TestCacheAcrossReplicas(t *testing.T) {
	shared := sharedStores(t)
	fake := providertest.NewOpenAI(t, providertest.WithReply("Use the reset link on the sign-in page."))
	on := with(shared, "SEMANTIC_CACHE_ENABLED", "true")
	mg := start(t, fake, with(on, "SERVICE_TYPE", "api-server"))
	a := start(t, fake, with(on, "SERVICE_TYPE", "proxy"))
	b := start(t, fake, with(on, "SERVICE_TYPE", "proxy"))
	key, _ := mg.newKey(nil)
	ctx := context.Background()
	ca, cb := a.client(key), b.client(key)

	if _, err := ca.Chat.Completions.New(ctx, ask("How do I reset my password?")); err != nil {
		t.Fatal(err)
	}
	// a writes the shared tier off its answer's path: b finds the entry
	// once it is there. b never stores (no-store), so a hit is a's entry.
	var hr *http.Response
	if !eventually(5*time.Second, func() bool {
		if _, err := cb.Chat.Completions.New(ctx, ask("How do I reset my password?"), option.WithResponseInto(&hr),
			option.WithHeader("x-svc-cache", "no-store")); err != nil {
			t.Fatal(err)
		}
		return hr.Header.Get("x-svc-cache-hit") == "true"
	}) {
		t.Fatalf("replica b never served a's entry: headers %v, upstream calls %d", hr.Header, chatPosts(fake))
	}
	// The paraphrase needs b's index to have followed a's entry.
	deadline := time.Now().Add(10 * time.Second)
	for {
		// no-store: a miss must not store the paraphrase's own answer, which
		// would make the next try an exact hit.
		if _, err := cb.Chat.Completions.New(ctx, ask("how can I reset my password"), option.WithResponseInto(&hr),
			option.WithHeader("x-svc-cache", "no-store")); err != nil {
			t.Fatal(err)
		}
		if hr.Header.Get("x-svc-cache-hit") == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica b never served the paraphrase from a's entry")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hr.Header.Get("x-cache-similarity") == "" {
		t.Errorf("paraphrase hit without a similarity: %v", hr.Header)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestCacheHitsCountRequestsNotSpend: a hit counts against the key's
// request rate but spends nothing.
func TestCacheHitsCountRequestsNotSpend(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, map[string]string{"SEMANTIC_CACHE_ENABLED": "true"})
	key, id := g.newKey(map[string]any{"rpm_limit": 3, "max_budget_usd": 10, "budget_period": "daily"})
	c := g.client(key)
	ctx := context.Background()
	spend := func() float64 {
		var b struct {
			SpendUSD float64 `json:"spend_usd"`
		}
		g.admin("GET", "/api/enterprise/vkeys/"+id+"/budget", nil, &b)
		return b.SpendUSD
	}
	if _, err := c.Chat.Completions.New(ctx, ask("Name three prime numbers.")); err != nil {
		t.Fatal(err)
	}
	// Settlement runs off the response path: wait for the actual cost.
	var first float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if first = spend(); first > 0 && first < 0.001 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spend after one request: %v", first)
		}
	}
	var hr *http.Response
	for i := 0; i < 2; i++ {
		if _, err := c.Chat.Completions.New(ctx, ask("Name three prime numbers."), option.WithResponseInto(&hr)); err != nil {
			t.Fatal(err)
		}
		if hr.Header.Get("x-svc-cache-hit") != "true" || hr.Header.Get("x-ratelimit-remaining-requests") != strconv.Itoa(1-i) {
			t.Fatalf("hit %d: headers %v", i+1, hr.Header)
		}
	}
	_, err := c.Chat.Completions.New(ctx, ask("Name three prime numbers."))
	if statusOf(err) != 429 {
		t.Fatalf("4th request in a minute with rpm_limit 3: %v, want 429 even from the cache", err)
	}
	time.Sleep(100 * time.Millisecond) // let any (wrong) settlement land
	if got := spend(); got != first {
		t.Errorf("spend %v after two cache hits, want %v (the first request's cost only)", got, first)
	}
}

// TestCacheWithProviderEmbedder: with SEMANTIC_CACHE_EMBEDDING_MODEL the
// questions are embedded through svc's own providers (the call is in the
// audit log); a request that differs from a cached one but asks the same
// question is a semantic hit on the provider's vectors.
func TestCacheWithProviderEmbedder(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, map[string]string{"SEMANTIC_CACHE_ENABLED": "true", "SEMANTIC_CACHE_EMBEDDING_MODEL": "openai/text-embedding-3-small"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	ctx := context.Background()
	if _, err := c.Chat.Completions.New(ctx, ask("How many moons does Mars have?")); err != nil {
		t.Fatal(err)
	}
	var embedCalls int
	for _, r := range fake.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/embeddings") {
			embedCalls++
			if !strings.Contains(string(r.Body), `"text-embedding-3-small"`) || !strings.Contains(string(r.Body), "How many moons does Mars have?") {
				t.Errorf("embedding call: %s", r.Body)
			}
		}
	}
	if embedCalls == 0 {
		t.Fatal("the provider was never asked for an embedding")
	}
	// The same question with trailing spaces: another request (another
	// key), the same question; the fake's vectors are a function of the text.
	var hr *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := c.Chat.Completions.New(ctx, ask("How many moons does Mars have?   "), option.WithResponseInto(&hr), option.WithHeader("x-svc-cache", "no-store")); err != nil {
			t.Fatal(err)
		}
		if hr.Header.Get("x-svc-cache-hit") == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never a semantic hit on the provider's vectors")
		}
	}
	if hr.Header.Get("x-cache-similarity") == "" {
		t.Errorf("not an L3 hit: %v", hr.Header)
	}
	found := false
	for _, e := range g.logEntries("limit=100", 3) {
		if e["user_id"] == "svc-semantic-cache" && e["content_type"] == "embeddings" {
			found = true
		}
	}
	if !found {
		t.Error("the cache's embedding call is not in the audit log")
	}
}

// TestCacheScopedToTheCaller: two keys of one team do not share cached
// answers by default ("What's my account balance?" is the asker's own);
// with SEMANTIC_CACHE_SCOPE=team they do, and a key of another team still
// does not.
func TestCacheScopedToTheCaller(t *testing.T) {
	for _, tt := range []struct {
		scope    string
		teammate bool // the teammate is served the first key's answer
	}{
		{scope: "", teammate: false},
		{scope: "caller", teammate: false},
		{scope: "team", teammate: true},
	} {
		t.Run("scope="+tt.scope, func(t *testing.T) {
			fake := providertest.NewOpenAI(t, providertest.WithReply("Your balance is $1,024.17."))
			g := start(t, fake, map[string]string{"SEMANTIC_CACHE_ENABLED": "true", "SEMANTIC_CACHE_SCOPE": tt.scope})
			first, _ := g.newKey(map[string]any{"team_id": "finance"})
			teammate, _ := g.newKey(map[string]any{"team_id": "finance"})
			other, _ := g.newKey(map[string]any{"team_id": "sales"})
			ctx := context.Background()
			q := ask("What's my account balance?")
			cf := g.client(first)
			if _, err := cf.Chat.Completions.New(ctx, q); err != nil {
				t.Fatal(err)
			}
			var hr *http.Response
			if _, err := cf.Chat.Completions.New(ctx, q, option.WithResponseInto(&hr)); err != nil {
				t.Fatal(err)
			}
			if hr.Header.Get("x-svc-cache-hit") != "true" {
				t.Fatalf("the same key's repeat: x-svc-cache-hit %q, want true", hr.Header.Get("x-svc-cache-hit"))
			}
			for _, c := range []struct {
				name, key string
				want      bool
			}{{"a key of the same team", teammate, tt.teammate}, {"a key of another team", other, false}} {
				before := chatPosts(fake)
				cl := g.client(c.key)
				if _, err := cl.Chat.Completions.New(ctx, q, option.WithResponseInto(&hr)); err != nil {
					t.Fatal(err)
				}
				hit := hr.Header.Get("x-svc-cache-hit") == "true"
				if hit != c.want || (chatPosts(fake) == before) != c.want {
					t.Errorf("%s with SEMANTIC_CACHE_SCOPE=%q: served from the cache %v (upstream calls %d), want %v",
						c.name, tt.scope, hit, chatPosts(fake)-before, c.want)
				}
			}
		})
	}
}

// TestCacheNeverServesFreshAnswers: a question whose answer must be fresh
// (a random pick, a new password, the date) goes upstream every time, and
// the statistics count the skips.
func TestCacheNeverServesFreshAnswers(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("7"))
	g := start(t, fake, map[string]string{"SEMANTIC_CACHE_ENABLED": "true"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	ctx := context.Background()
	questions := []string{"Pick a random number between 1 and 10.", "Generate a strong password for my router.", "What's today's date?"}
	for _, q := range questions {
		before := chatPosts(fake)
		var hr *http.Response
		for range 2 {
			if _, err := c.Chat.Completions.New(ctx, ask(q), option.WithResponseInto(&hr)); err != nil {
				t.Fatal(err)
			}
			if hr.Header.Get("x-svc-cache-hit") == "true" {
				t.Errorf("%q was served from the cache", q)
			}
		}
		if got := chatPosts(fake) - before; got != 2 {
			t.Errorf("%q asked twice: the upstream received %d calls, want 2", q, got)
		}
	}
	var stats struct {
		SkippedBy map[string]int64 `json:"skipped_by_reason"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code := g.admin("GET", "/api/metacache/stats", nil, &stats); code != 200 {
			t.Fatalf("stats: %d", code)
		}
		if stats.SkippedBy["fresh"] >= int64(2*len(questions)) || time.Now().After(deadline) {
			break
		}
	}
	if got, want := stats.SkippedBy["fresh"], int64(2*len(questions)); got != want {
		t.Errorf("skipped_by_reason.fresh: got %d, want %d", got, want)
	}
}
