// Package providertest owns fake model-provider upstreams: httptest servers
// that speak a provider's documented wire format, with controls for timing,
// errors and mid-stream failures, and a bounded record of what they received.
//
// OpenAI is the fake for the OpenAI API (chat completions, streamed as
// chat.completion.chunk server-sent events ending with "data: [DONE]", models
// and embeddings), shaped as the OpenAI API reference shows it. Behaviour is
// set per server with Options and per request with X-Fake-* request headers,
// so one server can serve many test cases (Set changes the defaults of a
// running server, for clients that cannot pass headers through):
//
//	X-Fake-Status: 429         answer that status with an OpenAI error body (429 adds Retry-After: 1)
//	X-Fake-Reply: text         the assistant's text
//	X-Fake-Chunks: 5           content chunks in a stream
//	X-Fake-Chunk-Delay: 20ms   pause between stream chunks
//	X-Fake-Delay: 100ms        pause before the response headers
//	X-Fake-Cut-After: 2        close the connection abruptly after that many content chunks
//	                           (a non-stream answer: halfway through its body)
//	X-Fake-Cached-Tokens: 8    usage.prompt_tokens_details.cached_tokens
//	X-Fake-Reasoning-Tokens: 4 usage.completion_tokens_details.reasoning_tokens
//	X-Fake-Echo-Key: 422       answer that status with an error quoting the key received
//	                           in message, param and code (every fake: HeaderEchoKey)
//	X-Fake-Tool-Calls: 1       chat: when function tools are offered and the last message is
//	                           not a tool result, answer with a call of the first (or the one
//	                           tool_choice names; none for "none"), finish_reason "tool_calls",
//	                           arguments setting each required property to a string, streamed as
//	                           OpenAI streams tool_calls deltas; 0 turns WithToolCalls off
//
// Usage is computed from the request, deterministically: prompt_tokens is the
// bytes of message text / 4 and completion_tokens the bytes of the reply (or
// of a tool call's arguments) / 4 (each at least 1) plus any reasoning tokens.
// The reply's "model" echoes the request's. Embedding vectors are
// deterministic too (see Embedding).
//
// The OpenAI fake serves the Responses API too (openai_responses.go):
//
//	POST   /v1/responses                   the response object ("resp_…", status completed, one
//	                                       output item, usage); with "stream":true the events
//	                                       response.created, response.in_progress,
//	                                       response.output_item.added, then for text
//	                                       response.content_part.added, response.output_text.delta…,
//	                                       response.output_text.done, response.content_part.done,
//	                                       for a call response.function_call_arguments.delta… and
//	                                       response.function_call_arguments.done, then
//	                                       response.output_item.done and response.completed, as
//	                                       "event:" and "data:" lines with sequence_number from 0
//	                                       and no [DONE]
//	GET    /v1/responses/{id}              a stored response (404 otherwise)
//	DELETE /v1/responses/{id}              {"id","object":"response","deleted":true} (404 when unknown)
//	GET    /v1/responses/{id}/input_items  its input items with ids; limit, order (desc by
//	                                       default) and after as the API reference has them
//
// The input is a string or a list of items (messages with string or parts
// content, function_call, function_call_output, reasoning, item_reference
// and the other item types). When function tools are offered (tool_choice as
// for chat) and the last input item is not a function_call_output, the
// output is one function_call of the first, "call_…", arguments as for chat;
// otherwise a message whose output_text is the reply. Responses are kept
// unless "store":false, the newest WithStoredResponses of them, for
// previous_response_id: an unknown one is a 404 previous_response_not_found.
// As at OpenAI, every function call of the conversation (the previous
// response's too) must have its output and every output its call (400
// otherwise), and input_tokens count the text (message text, call arguments
// and outputs, reasoning summaries) of the instructions, the input items and
// the whole previous conversation, the earlier instructions excepted
// (item_reference items are not resolved: their text does not count,
// and with one in the input an output of an unknown call passes).
// X-Fake-Chunks, -Chunk-Delay and -Cut-After act on the text or
// argument deltas; X-Fake-Status, -Delay, -Cached-Tokens, -Reasoning-Tokens
// and -Echo-Key as for chat. Background responses and streaming a stored
// response (GET with stream=true) are not supported: 400.
//
// Test packages and the load command (cmd/svcbench) may import providertest;
// production code must not. Besides the standard library it imports only what
// a wire format needs (the AWS event-stream encoder for Bedrock).
package providertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Request headers that control one response. A header wins over the server's
// default set by the matching Option.
const (
	HeaderStatus          = "X-Fake-Status"
	HeaderReply           = "X-Fake-Reply"
	HeaderChunks          = "X-Fake-Chunks"
	HeaderChunkDelay      = "X-Fake-Chunk-Delay"
	HeaderDelay           = "X-Fake-Delay"
	HeaderCutAfter        = "X-Fake-Cut-After"
	HeaderCachedTokens    = "X-Fake-Cached-Tokens"
	HeaderReasoningTokens = "X-Fake-Reasoning-Tokens"
	HeaderToolCalls       = "X-Fake-Tool-Calls"
)

// Defaults of a server built without Options.
const (
	DefaultReply         = "Hello! This is the providertest fake OpenAI upstream answering your request."
	DefaultChunks        = 5
	DefaultRecordLimit   = 1000
	DefaultEmbeddingDims = 1536
	// DefaultStoredResponses is how many Responses API responses a server
	// keeps for previous_response_id and GET /v1/responses/{id} unless
	// WithStoredResponses says otherwise; the oldest go first.
	DefaultStoredResponses = 1000
)

// DefaultModels are the models GET /v1/models lists unless WithModels says otherwise.
var DefaultModels = []string{"gpt-4o-mini", "gpt-4o", "o3-mini", "text-embedding-3-small"}

// config is a server's set of defaults. Once published through OpenAI.cfg it
// is never mutated; Set publishes a modified copy.
type config struct {
	apiKey          string
	status          int
	reply           string
	chunks          int
	chunkDelay      time.Duration
	delay           time.Duration
	cutAfter        int // negative: never cut
	cachedTokens    int
	reasoningTokens int
	toolCalls       bool
	models          []string
	recordLimit     int
	embeddingDims   int
	storeLimit      int

	modelsBody []byte // pre-marshalled GET /v1/models answer
}

func defaultConfig() *config {
	return &config{
		reply:         DefaultReply,
		chunks:        DefaultChunks,
		cutAfter:      -1,
		models:        DefaultModels,
		recordLimit:   DefaultRecordLimit,
		embeddingDims: DefaultEmbeddingDims,
		storeLimit:    DefaultStoredResponses,
	}
}

// Option sets a server default. Request headers override the behaviour ones.
type Option func(*config)

// WithAPIKey makes the server demand "Authorization: Bearer key" and answer
// 401 with an OpenAI error body otherwise. Without it any key is accepted.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithStatus makes every request fail with status (400 and above) and an
// OpenAI error body, as X-Fake-Status does for one request. 0 turns it off.
func WithStatus(status int) Option { return func(c *config) { c.status = status } }

// WithReply sets the assistant's text, as X-Fake-Reply does for one request.
func WithReply(text string) Option { return func(c *config) { c.reply = text } }

// WithChunks sets the number of content chunks in a stream (at least 1), as
// X-Fake-Chunks does for one request.
func WithChunks(n int) Option {
	return func(c *config) { c.chunks = max(n, 1) }
}

// WithChunkDelay sets the pause between stream chunks, as X-Fake-Chunk-Delay
// does for one request.
func WithChunkDelay(d time.Duration) Option { return func(c *config) { c.chunkDelay = d } }

// WithDelay sets the pause before the response headers, as X-Fake-Delay does
// for one request.
func WithDelay(d time.Duration) Option { return func(c *config) { c.delay = d } }

// WithCutAfter makes streams end abruptly after n content chunks (the role
// chunk always goes first) and non-stream answers halfway through their body,
// as X-Fake-Cut-After does for one request; a negative n turns it off.
func WithCutAfter(n int) Option { return func(c *config) { c.cutAfter = n } }

// WithCachedTokens sets usage.prompt_tokens_details.cached_tokens (capped at
// the prompt tokens), as X-Fake-Cached-Tokens does for one request.
func WithCachedTokens(n int) Option { return func(c *config) { c.cachedTokens = max(n, 0) } }

// WithReasoningTokens sets usage.completion_tokens_details.reasoning_tokens,
// which count towards completion_tokens as they do at OpenAI, as
// X-Fake-Reasoning-Tokens does for one request.
func WithReasoningTokens(n int) Option { return func(c *config) { c.reasoningTokens = max(n, 0) } }

// WithToolCalls makes chat completions answer with a tool call when the
// request offers function tools and its last message is not a tool result,
// as X-Fake-Tool-Calls: 1 does for one request (and X-Fake-Tool-Calls: 0
// turns it off). Off by default: chat answers text. The Responses API always
// calls a function tool when one is offered.
func WithToolCalls(on bool) Option { return func(c *config) { c.toolCalls = on } }

// WithStoredResponses sets how many Responses API responses the server keeps
// (default DefaultStoredResponses); 0 keeps none, as store:false does.
func WithStoredResponses(n int) Option { return func(c *config) { c.storeLimit = max(n, 0) } }

// WithModels sets the models GET /v1/models lists.
func WithModels(ids ...string) Option {
	return func(c *config) { c.models = append([]string(nil), ids...) }
}

// WithRecording keeps the last n requests for Requests and LastRequest
// (default DefaultRecordLimit); 0 turns recording off, as a load test wants.
func WithRecording(n int) Option { return func(c *config) { c.recordLimit = max(n, 0) } }

// WithEmbeddingDimensions sets the length of embedding vectors when the
// request does not ask for "dimensions" (default DefaultEmbeddingDims).
func WithEmbeddingDimensions(n int) Option {
	return func(c *config) { c.embeddingDims = max(n, 1) }
}

// Recorded is one request the server received.
type Recorded struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// OpenAI is a running fake OpenAI upstream. Its methods are safe for
// concurrent use.
type OpenAI struct {
	cfg     atomic.Pointer[config]
	handler http.Handler
	baseURL string
	addr    string

	done      chan struct{} // closed by Close: pending delays give up
	closeOnce sync.Once
	closeFn   func()

	count atomic.Int64 // requests received
	ids   atomic.Uint64

	stored responseStore // Responses API responses kept for previous_response_id

	recMu sync.Mutex
	ring  []Recorded // the last recordLimit requests, oldest at next when full
	next  int
	full  bool
}

// NewOpenAI starts a fake OpenAI upstream on a loopback port for the length of
// the test: it is closed by t.Cleanup.
func NewOpenAI(t testing.TB, opts ...Option) *OpenAI {
	t.Helper()
	s := newOpenAI(opts)
	ts := httptest.NewServer(s.handler)
	s.bind(ts.URL, ts.Listener.Addr().String(), ts.Close)
	t.Cleanup(s.Close)
	return s
}

// StartOpenAI starts a fake OpenAI upstream listening on addr ("127.0.0.1:0"
// for any free port) outside a test, as the benchmark does. Call Close to stop
// it.
func StartOpenAI(addr string, opts ...Option) (*OpenAI, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newOpenAI(opts)
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       5 * time.Minute,
	}
	go func() { _ = srv.Serve(ln) }()
	s.bind("http://"+ln.Addr().String(), ln.Addr().String(), func() { _ = srv.Close() })
	return s, nil
}

func newOpenAI(opts []Option) *OpenAI {
	s := &OpenAI{done: make(chan struct{})}
	s.publish(defaultConfig(), opts)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /v1/models/{model}", s.retrieveModel)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("POST /v1/images/generations", s.images)
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcriptions)
	mux.HandleFunc("POST /v1/rerank", s.rerank)
	mux.HandleFunc("POST /v1/responses", s.createResponse)
	mux.HandleFunc("GET /v1/responses/{id}", s.getResponse)
	mux.HandleFunc("DELETE /v1/responses/{id}", s.deleteResponse)
	mux.HandleFunc("GET /v1/responses/{id}/input_items", s.listInputItems)
	mux.HandleFunc("/", s.notFound)
	s.handler = mux
	return s
}

func (s *OpenAI) bind(baseURL, addr string, closeFn func()) {
	s.baseURL, s.addr, s.closeFn = baseURL, addr, closeFn
}

// publish stores a copy of base with opts applied as the server's defaults.
func (s *OpenAI) publish(base *config, opts []Option) {
	c := *base
	for _, o := range opts {
		o(&c)
	}
	c.modelsBody = appendModelList(nil, c.models)
	s.cfg.Store(&c)

	s.recMu.Lock()
	s.resizeRing(c.recordLimit)
	s.recMu.Unlock()
}

// Set changes the server's defaults for the requests that follow, for tests
// whose client cannot send X-Fake-* headers through to the upstream.
func (s *OpenAI) Set(opts ...Option) { s.publish(s.cfg.Load(), opts) }

// URL is the base URL including /v1, as OpenAI SDKs take it
// (e.g. "http://127.0.0.1:41234/v1").
func (s *OpenAI) URL() string { return s.baseURL + "/v1" }

// Addr is the host:port the server listens on.
func (s *OpenAI) Addr() string { return s.addr }

// Close stops the server; pending delays and streams are cut. It is safe to
// call more than once.
func (s *OpenAI) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.closeFn()
	})
}

// Count is the number of requests received, recorded or not.
func (s *OpenAI) Count() int { return int(s.count.Load()) }

// Requests returns the recorded requests, oldest first: at most the last
// limit set by WithRecording. The values are copies the caller may keep.
func (s *OpenAI) Requests() []Recorded {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	var out []Recorded
	if s.full {
		out = make([]Recorded, 0, len(s.ring))
		out = append(out, s.ring[s.next:]...)
		out = append(out, s.ring[:s.next]...)
	} else {
		out = append(make([]Recorded, 0, s.next), s.ring[:s.next]...)
	}
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

// LastRequest returns the most recent recorded request, or the zero Recorded
// if there is none.
func (s *OpenAI) LastRequest() Recorded {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	switch {
	case s.next > 0:
		return s.ring[s.next-1].clone()
	case s.full:
		return s.ring[len(s.ring)-1].clone()
	}
	return Recorded{}
}

// Reset forgets the recorded requests and zeroes Count.
func (s *OpenAI) Reset() {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	clear(s.ring)
	s.next, s.full = 0, false
	s.count.Store(0)
}

func (r Recorded) clone() Recorded {
	r.Header = r.Header.Clone()
	r.Body = append([]byte(nil), r.Body...)
	return r
}

// record keeps r (whose Header and Body the server no longer touches) if
// recording is on. The caller holds no lock.
func (s *OpenAI) record(r Recorded) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if len(s.ring) == 0 {
		return
	}
	s.ring[s.next] = r
	s.next++
	if s.next == len(s.ring) {
		s.next, s.full = 0, true
	}
}

// resizeRing changes the record limit to n, keeping the newest entries.
// recMu is held.
func (s *OpenAI) resizeRing(n int) {
	if n == len(s.ring) {
		return
	}
	var kept []Recorded
	if s.full {
		kept = append(append(kept, s.ring[s.next:]...), s.ring[:s.next]...)
	} else {
		kept = s.ring[:s.next]
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	ring := make([]Recorded, n)
	copy(ring, kept)
	s.ring, s.next, s.full = ring, len(kept), false
	if n > 0 && s.next == n {
		s.next, s.full = 0, true
	}
}

// wait pauses for d unless the request or the server ends first; it reports
// whether the full pause elapsed.
func (s *OpenAI) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// abort ends the handler without finishing the response: the server closes
// the connection (HTTP/1) or resets the stream (HTTP/2), and does not log it.
func abort() { panic(http.ErrAbortHandler) }

// errBodyTooLarge is returned by readBody past maxBody.
var errBodyTooLarge = errors.New("request body too large")

const maxBody = 32 << 20

// bearer returns the token of an "Authorization: Bearer …" header.
func bearer(h http.Header) (string, bool) {
	v := h.Get("Authorization")
	if len(v) < 7 || !strings.EqualFold(v[:7], "bearer ") {
		return "", false
	}
	return strings.TrimSpace(v[7:]), true
}
