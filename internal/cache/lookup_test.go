package cache

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// chatRequest decodes body.
func chatRequest(t testing.TB, body string) *llm.ChatRequest {
	t.Helper()
	req, err := llm.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return req
}

// TestCoreWithoutPipeline drives the cache as another gateway would, with
// plain values and no pipeline.Exchange: a miss, a store, an exact hit, a
// semantic hit, and a streamed answer collected and replayed.
func TestCoreWithoutPipeline(t *testing.T) {
	c := newCache(t, memkv.New(), Options{Threshold: 0.5})
	run(t, c)
	ctx := context.Background()
	req := Request{Chat: chatRequest(t, chatBody("How do I reset my password?", "")), Scope: "tool:caller-1"}

	l, err := c.Lookup(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Reads() || !l.Writes() || l.Skipped() != "" {
		t.Fatalf("lookup: reads %v writes %v skipped %q, want true true \"\"", l.Reads(), l.Writes(), l.Skipped())
	}
	if h, ok := l.Hit(ctx); ok {
		t.Fatalf("empty cache: got hit %+v, want a miss", h)
	}
	body := completion("chatcmpl-1", "gpt-4o-mini", "Use the reset link.")
	l.Store(ctx, Answer{Body: body, Provider: "openai", Model: "gpt-4o-mini", Tokens: 15, Cost: 0.0015})
	c.Wait()

	l, _ = c.Lookup(ctx, req)
	h, ok := l.Hit(ctx)
	if !ok {
		t.Fatal("repeat: got a miss, want an L1 hit")
	}
	want := &Hit{Tier: "L1", Key: h.Key, Similarity: 1, Query: "How do I reset my password?", Body: body,
		Provider: "openai", Model: "gpt-4o-mini", Tokens: 15, Cost: 0.0015}
	if diff := cmp.Diff(want, h, cmp.AllowUnexported(Hit{})); diff != "" {
		t.Errorf("hit (-want +got):\n%s", diff)
	}
	hdr := http.Header{}
	h.SetHeaders(hdr)
	if got := hdr.Get(HeaderCacheHit) + " " + hdr.Get(HeaderTokensSaved) + " " + hdr.Get(HeaderSimilarity); got != "true 15 " {
		t.Errorf("exact hit headers: got %q, want %q", got, "true 15 ")
	}

	para := Request{Chat: chatRequest(t, chatBody("how can i reset my password", "")), Scope: "tool:caller-1"}
	l, _ = c.Lookup(ctx, para)
	if h, ok := l.Hit(ctx); !ok || h.Tier != "L3" || h.Query != "How do I reset my password?" {
		t.Fatalf("paraphrase: got %+v %v, want an L3 hit on the first question", h, ok)
	}
	other := para
	other.Scope = "tool:caller-2"
	l, _ = c.Lookup(ctx, other)
	if h, ok := l.Hit(ctx); ok {
		t.Fatalf("another scope: got hit %+v, want a miss", h)
	}

	// A streamed answer: collected as it passes, stored, replayed.
	sreq := Request{Chat: chatRequest(t, chatBody("Tell me about Go channels.", `,"stream":true,"stream_options":{"include_usage":true}`)), Scope: "tool:caller-1"}
	l, _ = c.Lookup(ctx, sreq)
	s, err := replayStream(completion("chatcmpl-2", "gpt-4o-mini", "Channels carry values."), true)
	if err != nil {
		t.Fatal(err)
	}
	col := l.Collect()
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		col.Add(ev)
	}
	sb := col.Body(llm.Usage{})
	if sb == nil {
		t.Fatal("collector: got no body for a complete stream")
	}
	l.Store(ctx, Answer{Body: sb, Provider: "openai", Model: "gpt-4o-mini", Tokens: 15})
	c.Wait()
	l, _ = c.Lookup(ctx, sreq)
	h, ok = l.Hit(ctx)
	if !ok {
		t.Fatal("streamed repeat: got a miss")
	}
	rs, err := h.Stream()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		ev, err := rs.Next()
		if err == io.EOF {
			break
		}
		text.Write(ev.Data)
	}
	if !strings.Contains(text.String(), "Channels carry values.") || !strings.Contains(text.String(), `"usage"`) {
		t.Errorf("replayed stream: got %s, want the answer and its usage", text.String())
	}
}

func TestLookupSkipsAndErrors(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	ctx := context.Background()
	plain := chatRequest(t, chatBody("What is a mutex?", ""))
	hot := chatRequest(t, chatBody("Write a poem.", `,"temperature":1.5`))
	tests := []struct {
		name        string
		req         Request
		reads, wrts bool
		skipped     string
	}{
		{"plain", Request{Chat: plain}, true, true, ""},
		{"bypass", Request{Chat: plain, Header: http.Header{HeaderCache: {"bypass"}}}, false, false, SkipHeader},
		{"no-cache and no-store", Request{Chat: plain, Header: http.Header{"Cache-Control": {"no-cache, no-store"}}}, false, false, SkipHeader},
		{"no-cache", Request{Chat: plain, Header: http.Header{HeaderCache: {"no-cache"}}}, false, true, ""},
		{"no-store", Request{Chat: plain, Header: http.Header{HeaderCache: {"no-store"}}}, true, false, ""},
		{"temperature", Request{Chat: hot}, false, false, SkipTemperature},
		{"fresh", Request{Chat: chatRequest(t, chatBody("What time is it?", ""))}, false, false, SkipFresh},
		{"fresh, with no-store", Request{Chat: chatRequest(t, chatBody("Flip a coin.", "")), Header: http.Header{HeaderCache: {"no-store"}}}, false, false, SkipFresh},
		{"about randomness", Request{Chat: chatRequest(t, chatBody("Explain how random forests work.", ""))}, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := c.Lookup(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if l.Reads() != tt.reads || l.Writes() != tt.wrts || l.Skipped() != tt.skipped {
				t.Errorf("got reads %v writes %v skipped %q, want %v %v %q", l.Reads(), l.Writes(), l.Skipped(), tt.reads, tt.wrts, tt.skipped)
			}
		})
	}
	if _, err := c.Lookup(ctx, Request{Chat: plain, Header: http.Header{HeaderCacheTTL: {"soon"}}}); apierr.KindOf(err) != apierr.InvalidRequest {
		t.Errorf("malformed ttl: got error %v, want an invalid request", err)
	}
	if _, err := c.Lookup(ctx, Request{}); err == nil {
		t.Error("no chat request: got no error, want one")
	}
}
