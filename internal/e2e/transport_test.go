package e2e

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// With SVC_UPSTREAM_TRANSPORT=fasthttp the gateway behaves as with the std
// transport: plain and streamed chat through the SDK, the provider's status
// mapped, a stream cut by the provider ending in an error event. (The
// transport's own guarantees are tested in internal/upstream.)
func TestFastHTTPUpstreamTransport(t *testing.T) {
	fast := config.Map{"SVC_UPSTREAM_TRANSPORT": "fasthttp"}

	t.Run("chat", func(t *testing.T) {
		fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey), providertest.WithReply("one two three four"), providertest.WithChunks(4))
		g := start(t, fake, fast)
		key, _ := g.newKey(nil)
		c := g.client(key)

		res, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "count"))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Choices[0].Message.Content; got != "one two three four" || res.Usage.TotalTokens == 0 {
			t.Errorf("content %q, usage %+v", got, res.Usage)
		}
		up := lastChat(t, fake).Header
		if got := up.Get("Authorization"); got != "Bearer "+upstreamKey {
			t.Errorf("the provider saw Authorization %q, want svc's key", got)
		}
		// net/http's Transport would have asked for gzip on its own.
		if got := up.Get("Accept-Encoding"); got != "" {
			t.Errorf("the provider saw Accept-Encoding %q: not the fasthttp transport", got)
		}

		p := chatParams("gpt-4o-mini", "count")
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := c.Chat.Completions.NewStreaming(context.Background(), p)
		acc, chunks := openai.ChatCompletionAccumulator{}, 0
		for s.Next() {
			acc.AddChunk(s.Current())
			chunks++
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "one two three four" || chunks < 4 || acc.Usage.TotalTokens == 0 {
			t.Errorf("stream: content %q in %d chunks, usage %+v", got, chunks, acc.Usage)
		}
	})

	t.Run("provider status", func(t *testing.T) {
		fake := providertest.NewOpenAI(t, providertest.WithStatus(429))
		g := start(t, fake, fast)
		key, _ := g.newKey(nil)
		c := g.client(key)
		_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"))
		if statusOf(err) != 429 {
			t.Errorf("got %v, want the provider's 429", err)
		}
	})

	t.Run("stream cut", func(t *testing.T) {
		fake := providertest.NewOpenAI(t, providertest.WithChunks(6), providertest.WithCutAfter(2))
		g := start(t, fake, fast)
		key, _ := g.newKey(nil)
		resp, b := g.post("/v1/chat/completions", key, []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		endsWithErrorEvent(t, b)
	})
}
