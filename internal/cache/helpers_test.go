package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// fakeUpstream is the rest of the request path below the cache: it answers
// "answer to: <question>" and counts its calls.
type fakeUpstream struct {
	calls atomic.Int64
	// fail, when set, makes the next calls answer this error.
	fail error
	// cut, when set, breaks streams after their first chunk.
	cut bool
}

func (u *fakeUpstream) handler(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
	u.calls.Add(1)
	if u.fail != nil {
		return nil, u.fail
	}
	q := x.Chat.Messages[len(x.Chat.Messages)-1].Content.String()
	x.Usage = llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	x.Cost, x.ResponseModel = 0.0015, x.Chat.Model
	body := completion("chatcmpl-1", x.Chat.Model, "answer to: "+q)
	if !x.Stream {
		return &pipeline.Response{Status: http.StatusOK, Body: body}, nil
	}
	s, err := replayStream(body, true)
	if err != nil {
		return nil, err
	}
	if u.cut {
		s = &cutStream{s: s}
	}
	return &pipeline.Response{Status: http.StatusOK, Stream: s}, nil
}

// cutStream fails after one event, as a provider connection that broke.
type cutStream struct {
	s llm.Stream
	n int
}

func (c *cutStream) Next() (sse.Event, error) {
	if c.n > 0 {
		return sse.Event{}, errors.New("connection reset")
	}
	c.n++
	return c.s.Next()
}
func (c *cutStream) Close() error { return c.s.Close() }

func completion(id, model, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	return b
}

// key principals: two tenants.
var (
	alice = &identity.Principal{Kind: identity.VirtualKey, ID: "key-alice"}
	bob   = &identity.Principal{Kind: identity.VirtualKey, ID: "key-bob"}
)

// chatBody is a request asking question q of gpt-4o-mini.
func chatBody(q string, extra string) string {
	qb, _ := json.Marshal(q)
	return `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":` + string(qb) + `}]` + extra + `}`
}

// exchange builds the exchange the stages before the cache would have made.
func exchange(t testing.TB, body string, p *identity.Principal, headers ...string) *pipeline.Exchange {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	req, err := llm.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return &pipeline.Exchange{
		ID: "req", Start: time.Now(), Endpoint: pipeline.Chat, Inbound: r, Body: []byte(body),
		Chat: req, Model: req.Model, Stream: req.Stream, Principal: p, Header: http.Header{},
		Provider: "openai", UpstreamModel: req.Model,
	}
}

// served is one request's outcome.
type served struct {
	x    *pipeline.Exchange
	body string // the JSON body, or the stream's events joined by newlines
	err  error
}

// do runs one request through c's stage over u, drains a stream, and waits
// for the cache's writes.
func do(t testing.TB, c *Cache, u *fakeUpstream, body string, p *identity.Principal, headers ...string) served {
	t.Helper()
	x := exchange(t, body, p, headers...)
	h := c.Stage()(u.handler)
	resp, err := h(context.Background(), x)
	out := served{x: x, err: err}
	if err == nil {
		if resp.Stream != nil {
			var evs []string
			for {
				ev, err := resp.Stream.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					out.err = err
					break
				}
				evs = append(evs, string(ev.Data))
			}
			resp.Stream.Close()
			out.body = strings.Join(evs, "\n")
		} else {
			out.body = string(resp.Body)
		}
	}
	c.Wait()
	return out
}

// newCache builds a cache over kv with a fast follow interval.
func newCache(t testing.TB, kv store.KV, o Options) *Cache {
	t.Helper()
	if o.FollowInterval == 0 {
		o.FollowInterval = 10 * time.Millisecond
	}
	if o.StoreTimeout == 0 {
		// The default 100 ms is for the request path; a Redis call of a
		// test under -race on a busy machine may take longer, and a lookup
		// that timed out would be a miss the test did not mean.
		o.StoreTimeout = 5 * time.Second
	}
	c, err := New(kv, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run starts c.Run until the test ends.
func run(t testing.TB, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	storetest.Until(t, 10*time.Second, "generations loaded", c.gensLoaded)
}

// hit reports the tier a request was served from ("" for a miss).
func (s served) tier() string {
	if s.x.Cache == nil {
		return ""
	}
	return s.x.Cache.Tier
}

func (s served) String() string {
	return fmt.Sprintf("tier=%q err=%v headers=%v", s.tier(), s.err, s.x.Header)
}

// brokenKV is a KV whose every call fails, as a Redis that went away.
type brokenKV struct{ store.KV }

var errDown = errors.New("connection refused")

func (brokenKV) Get(context.Context, string) ([]byte, error)              { return nil, errDown }
func (brokenKV) Set(context.Context, string, []byte, time.Duration) error { return errDown }
func (brokenKV) IncrBy(context.Context, string, int64, time.Duration) (int64, error) {
	return 0, errDown
}
func (brokenKV) AppendLog(context.Context, string, store.LogLimit, ...[]byte) error { return errDown }
func (brokenKV) ReadLog(context.Context, string, time.Time, int) ([][]byte, error) {
	return nil, errDown
}
func (brokenKV) Publish(context.Context, string, []byte) error { return errDown }
func (brokenKV) Subscribe(context.Context, string) (store.Subscription, error) {
	return nil, errDown
}
