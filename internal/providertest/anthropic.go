package providertest

// Anthropic is the fake for Anthropic's Messages API, shaped as Anthropic's
// API reference shows it:
//
//	POST /v1/messages               a message, or with "stream":true the event sequence
//	                                message_start, content_block_start, ping,
//	                                content_block_delta…, content_block_stop,
//	                                message_delta, message_stop
//	POST /v1/messages/count_tokens  {"input_tokens": n}
//	GET  /v1/models                 the models of AnthModels
//
// Every request must carry anthropic-version (400 otherwise) and, when the
// server was built with AnthAPIKey, that key in x-api-key (401 otherwise).
// Errors have Anthropic's shape {"type":"error","error":{"type","message"}}.
// When the request offers tools and its last message is the user's own
// (not tool results), the answer is a tool_use of the first tool, whose
// input streams as several input_json_delta pieces. Per request, the
// X-Fake-Status, X-Fake-Reply, X-Fake-Chunks, X-Fake-Chunk-Delay and
// X-Fake-Cached-Tokens headers work as for the OpenAI fake (cached tokens are
// cache_read_input_tokens), and X-Fake-Cache-Creation-Tokens sets
// cache_creation_input_tokens. Usage is deterministic: input_tokens is the
// bytes of message and system text / 4 (at least 1), output_tokens the bytes
// of the reply / 4.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// AnthHeaderCacheCreationTokens sets usage.cache_creation_input_tokens of one
// answer of the fake Anthropic upstream.
const AnthHeaderCacheCreationTokens = "X-Fake-Cache-Creation-Tokens"

// AnthDefaultReply is the fake Anthropic upstream's text unless told otherwise.
const AnthDefaultReply = "Hello! This is the providertest fake Anthropic upstream answering your request."

// AnthDefaultModels are the models the fake Anthropic upstream lists.
var AnthDefaultModels = []string{"claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-1-20250805"}

// anthConfig is a fake Anthropic server's defaults; published copies are
// never mutated.
type anthConfig struct {
	apiKey      string
	status      int
	reply       string
	chunks      int
	chunkDelay  time.Duration
	cacheRead   int
	cacheWrite  int
	models      []string
	recordLimit int
}

// AnthOption sets a default of the fake Anthropic upstream.
type AnthOption func(*anthConfig)

// AnthAPIKey makes the server demand x-api-key: key (401 otherwise).
func AnthAPIKey(key string) AnthOption { return func(c *anthConfig) { c.apiKey = key } }

// AnthStatus makes every request fail with status (400 and above) and an
// Anthropic error body, as X-Fake-Status does for one request. 0 turns it off.
func AnthStatus(status int) AnthOption { return func(c *anthConfig) { c.status = status } }

// AnthReply sets the assistant's text, as X-Fake-Reply does for one request.
func AnthReply(text string) AnthOption { return func(c *anthConfig) { c.reply = text } }

// AnthChunks sets the number of text deltas in a stream (at least 1).
func AnthChunks(n int) AnthOption { return func(c *anthConfig) { c.chunks = max(n, 1) } }

// AnthChunkDelay sets the pause between stream deltas.
func AnthChunkDelay(d time.Duration) AnthOption { return func(c *anthConfig) { c.chunkDelay = d } }

// AnthCacheTokens sets usage.cache_read_input_tokens and
// usage.cache_creation_input_tokens of every answer.
func AnthCacheTokens(read, creation int) AnthOption {
	return func(c *anthConfig) { c.cacheRead, c.cacheWrite = max(read, 0), max(creation, 0) }
}

// AnthModels sets the models GET /v1/models lists.
func AnthModels(ids ...string) AnthOption {
	return func(c *anthConfig) { c.models = append([]string(nil), ids...) }
}

// AnthRecording keeps the last n requests (default DefaultRecordLimit); 0
// turns recording off.
func AnthRecording(n int) AnthOption { return func(c *anthConfig) { c.recordLimit = max(n, 0) } }

// Anthropic is a running fake Anthropic upstream. Its methods are safe for
// concurrent use.
type Anthropic struct {
	cfg   atomic.Pointer[anthConfig]
	srv   *httptest.Server
	done  chan struct{}
	once  sync.Once
	count atomic.Int64
	ids   atomic.Uint64

	recMu sync.Mutex
	rec   []Recorded // the last recordLimit requests, oldest first
}

// NewAnthropic starts a fake Anthropic upstream on a loopback port for the
// length of the test: it is closed by t.Cleanup.
func NewAnthropic(t testing.TB, opts ...AnthOption) *Anthropic {
	t.Helper()
	s := &Anthropic{done: make(chan struct{})}
	c := &anthConfig{reply: AnthDefaultReply, chunks: DefaultChunks, models: AnthDefaultModels, recordLimit: DefaultRecordLimit}
	s.anthPublish(c, opts)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.anthCountTokens)
	mux.HandleFunc("GET /v1/models", s.anthListModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := s.anthBegin(w, r); ok {
			anthWriteError(w, http.StatusNotFound, "not_found_error", "Not found: "+r.Method+" "+r.URL.Path)
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *Anthropic) anthPublish(base *anthConfig, opts []AnthOption) {
	c := *base
	for _, o := range opts {
		o(&c)
	}
	s.cfg.Store(&c)
	s.recMu.Lock()
	if len(s.rec) > c.recordLimit {
		s.rec = append([]Recorded(nil), s.rec[len(s.rec)-c.recordLimit:]...)
	}
	s.recMu.Unlock()
}

// Set changes the server's defaults for the requests that follow.
func (s *Anthropic) Set(opts ...AnthOption) { s.anthPublish(s.cfg.Load(), opts) }

// URL is the host root (e.g. "http://127.0.0.1:41234"), as Anthropic SDKs
// and svc's ANTHROPIC_API_BASE take it.
func (s *Anthropic) URL() string { return s.srv.URL }

// Close stops the server; pending delays and streams are cut. It is safe to
// call more than once.
func (s *Anthropic) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Count is the number of requests received, recorded or not.
func (s *Anthropic) Count() int { return int(s.count.Load()) }

// Requests returns copies of the recorded requests, oldest first.
func (s *Anthropic) Requests() []Recorded {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	out := make([]Recorded, len(s.rec))
	for i, r := range s.rec {
		out[i] = r.clone()
	}
	return out
}

// LastRequest returns a copy of the most recent recorded request, or the zero
// Recorded.
func (s *Anthropic) LastRequest() Recorded {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if len(s.rec) == 0 {
		return Recorded{}
	}
	return s.rec[len(s.rec)-1].clone()
}

// Reset forgets the recorded requests and zeroes Count.
func (s *Anthropic) Reset() {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	s.rec = nil
	s.count.Store(0)
}

// anthControls is the behaviour of one answer.
type anthControls struct {
	status     int
	reply      string
	chunks     int
	chunkDelay time.Duration
	cacheRead  int
	cacheWrite int
}

// anthBegin counts, reads and records the request, checks its headers and
// resolves its controls. When it reports false it has answered already.
func (s *Anthropic) anthBegin(w http.ResponseWriter, r *http.Request) ([]byte, anthControls, bool) {
	s.count.Add(1)
	cfg := s.cfg.Load()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body")
		return nil, anthControls{}, false
	}
	if cfg.recordLimit > 0 {
		s.recMu.Lock()
		s.rec = append(s.rec, Recorded{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		if len(s.rec) > cfg.recordLimit {
			s.rec = append(s.rec[:0:0], s.rec[len(s.rec)-cfg.recordLimit:]...)
		}
		s.recMu.Unlock()
	}
	if len(body) > maxBody {
		anthWriteError(w, http.StatusRequestEntityTooLarge, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
		return nil, anthControls{}, false
	}
	w.Header().Set("Request-Id", "req_providertest_"+strconv.FormatUint(s.ids.Add(1), 10))
	if cfg.apiKey != "" && r.Header.Get("X-Api-Key") != cfg.apiKey {
		anthWriteError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return nil, anthControls{}, false
	}
	if r.Header.Get("Anthropic-Version") == "" {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return nil, anthControls{}, false
	}
	if st, ok := echoStatus(r.Header); !ok {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", badEchoHeader(r.Header))
		return nil, anthControls{}, false
	} else if st != 0 {
		typ := "invalid_request_error"
		if st >= 500 {
			typ = "api_error"
		}
		anthWriteError(w, st, typ, echoMessage(receivedKey(r)))
		return nil, anthControls{}, false
	}
	c := anthControls{status: cfg.status, reply: cfg.reply, chunks: cfg.chunks, chunkDelay: cfg.chunkDelay,
		cacheRead: cfg.cacheRead, cacheWrite: cfg.cacheWrite}
	h := r.Header
	if v, err := strconv.Atoi(h.Get(HeaderStatus)); err == nil {
		c.status = v
	}
	if v := h.Get(HeaderReply); v != "" {
		c.reply = v
	}
	if v, err := strconv.Atoi(h.Get(HeaderChunks)); err == nil {
		c.chunks = max(v, 1)
	}
	if v, err := time.ParseDuration(h.Get(HeaderChunkDelay)); err == nil {
		c.chunkDelay = v
	}
	if v, err := strconv.Atoi(h.Get(HeaderCachedTokens)); err == nil {
		c.cacheRead = max(v, 0)
	}
	if v, err := strconv.Atoi(h.Get(AnthHeaderCacheCreationTokens)); err == nil {
		c.cacheWrite = max(v, 0)
	}
	return body, c, true
}

// anthRequest is the part of a Messages request the fake reads.
type anthRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Required []string `json:"required"`
		} `json:"input_schema"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// anthBlock is a request content block, as far as the fake reads it.
type anthBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// anthText is the text bytes of a content or system field: a string or an
// array of blocks; and whether it holds tool results.
func anthText(raw json.RawMessage) (n int, toolResults bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return len(s), false
	}
	var blocks []anthBlock
	_ = json.Unmarshal(raw, &blocks)
	for _, b := range blocks {
		n += len(b.Text)
		toolResults = toolResults || b.Type == "tool_result"
	}
	return n, toolResults
}

func (r *anthRequest) validate() string {
	switch {
	case r.Model == "":
		return "model: Field required"
	case r.MaxTokens == nil:
		return "max_tokens: Field required"
	case *r.MaxTokens < 1:
		return "max_tokens: Input should be greater than or equal to 1"
	case len(r.Messages) == 0:
		return "messages: at least one message is required"
	}
	for i, m := range r.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return "messages." + strconv.Itoa(i) + ".role: Input should be 'user' or 'assistant'"
		}
	}
	return ""
}

// anthUsage is the usage of one answer.
type anthUsage struct {
	InputTokens              int    `json:"input_tokens"`
	CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
	OutputTokens             int    `json:"output_tokens"`
	ServiceTier              string `json:"service_tier,omitempty"`
}

func (r *anthRequest) inputTokens() int {
	n, _ := anthText(r.System)
	for _, m := range r.Messages {
		k, _ := anthText(m.Content)
		n += k
	}
	return tokens(n)
}

// toolUse reports whether the answer is a tool_use: tools were offered and
// the last message is the user's own words.
func (r *anthRequest) toolUse() bool {
	if len(r.Tools) == 0 {
		return false
	}
	last := r.Messages[len(r.Messages)-1]
	_, results := anthText(last.Content)
	return last.Role == "user" && !results
}

// anthToolInput is the tool_use input: every required property set.
func (r *anthRequest) anthToolInput() []byte {
	return toolArguments(r.Tools[0].InputSchema.Required)
}

// anthMessages serves POST /v1/messages.
func (s *Anthropic) anthMessages(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.anthBegin(w, r)
	if !ok {
		return
	}
	var req anthRequest
	if err := json.Unmarshal(body, &req); err != nil {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", "There was an issue with your request body: "+err.Error())
		return
	}
	if c.status >= 400 {
		anthForcedError(w, c.status, req.Model)
		return
	}
	if msg := req.validate(); msg != "" {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	id := "msg_providertest_" + strconv.FormatUint(s.ids.Add(1), 10)
	u := anthUsage{InputTokens: req.inputTokens(), CacheReadInputTokens: c.cacheRead, CacheCreationInputTokens: c.cacheWrite,
		OutputTokens: tokens(len(c.reply)), ServiceTier: "standard"}
	tool := req.toolUse()
	var input []byte
	if tool {
		input = req.anthToolInput()
		u.OutputTokens = tokens(len(input))
	}
	toolID := "toolu_providertest_" + strconv.FormatUint(s.ids.Add(1), 10)
	if req.Stream {
		s.anthStream(w, r, &req, c, id, toolID, input, u)
		return
	}
	type block struct {
		Type  string          `json:"type"`
		Text  *string         `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	}
	content := []block{{Type: "text", Text: &c.reply}}
	stop := "end_turn"
	if tool {
		content = []block{{Type: "tool_use", ID: toolID, Name: req.Tools[0].Name, Input: input}}
		stop = "tool_use"
	}
	anthWriteJSON(w, http.StatusOK, map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": u,
	})
}

// anthStream writes the Messages event stream.
func (s *Anthropic) anthStream(w http.ResponseWriter, r *http.Request, req *anthRequest, c anthControls, id, toolID string, input []byte, u anthUsage) {
	h := w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(name string, v any) {
		data, _ := json.Marshal(v)
		var b bytes.Buffer
		b.WriteString("event: " + name + "\ndata: ")
		b.Write(data)
		b.WriteString("\n\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			abort()
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	pause := func() {
		if !s.anthWait(r.Context(), c.chunkDelay) {
			abort()
		}
	}
	start := u
	start.OutputTokens = 1
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start}})
	stop := "end_turn"
	if input != nil {
		stop = "tool_use"
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": req.Tools[0].Name, "input": map[string]any{}}})
		send("ping", map[string]any{"type": "ping"})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
		const pieces = 4
		in := string(input)
		for i := range pieces {
			pause()
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece(in, i, pieces)}})
		}
	} else {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		send("ping", map[string]any{"type": "ping"})
		for i := range c.chunks {
			pause()
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": piece(c.reply, i, c.chunks)}})
		}
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": u})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func (s *Anthropic) anthWait(ctx context.Context, d time.Duration) bool {
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

// anthCountTokens serves POST /v1/messages/count_tokens.
func (s *Anthropic) anthCountTokens(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.anthBegin(w, r)
	if !ok {
		return
	}
	var req anthRequest
	if err := json.Unmarshal(body, &req); err != nil {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", "There was an issue with your request body: "+err.Error())
		return
	}
	if c.status >= 400 {
		anthForcedError(w, c.status, req.Model)
		return
	}
	if req.Model == "" || len(req.Messages) == 0 {
		anthWriteError(w, http.StatusBadRequest, "invalid_request_error", "model and messages are required")
		return
	}
	anthWriteJSON(w, http.StatusOK, map[string]int{"input_tokens": req.inputTokens()})
}

// anthListModels serves GET /v1/models.
func (s *Anthropic) anthListModels(w http.ResponseWriter, r *http.Request) {
	_, c, ok := s.anthBegin(w, r)
	if !ok {
		return
	}
	if c.status >= 400 {
		anthForcedError(w, c.status, "")
		return
	}
	models := s.cfg.Load().models
	data := make([]map[string]string, 0, len(models))
	for _, id := range models {
		data = append(data, map[string]string{"type": "model", "id": id, "display_name": id, "created_at": "2025-09-29T00:00:00Z"})
	}
	var first, last any
	if len(models) > 0 {
		first, last = models[0], models[len(models)-1]
	}
	anthWriteJSON(w, http.StatusOK, map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
}

// anthForcedError answers an X-Fake-Status, worded as Anthropic words it.
func anthForcedError(w http.ResponseWriter, status int, model string) {
	typ, msg := "api_error", "providertest: X-Fake-Status "+strconv.Itoa(status)
	switch status {
	case http.StatusBadRequest:
		typ, msg = "invalid_request_error", "Invalid request (providertest: X-Fake-Status 400)."
	case http.StatusUnauthorized:
		typ, msg = "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		typ, msg = "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		typ, msg = "not_found_error", "model: "+model
	case http.StatusRequestEntityTooLarge:
		typ, msg = "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case http.StatusTooManyRequests:
		typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."
		w.Header().Set("Retry-After", "1")
	case http.StatusInternalServerError:
		typ, msg = "api_error", "Internal server error"
	case 529:
		typ, msg = "overloaded_error", "Overloaded"
	default:
		if status < 500 {
			typ = "invalid_request_error"
		}
	}
	anthWriteError(w, status, typ, msg)
}

func anthWriteError(w http.ResponseWriter, status int, typ, msg string) {
	anthWriteJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg},
		"request_id": w.Header().Get("Request-Id")})
}

func anthWriteJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	b = append(b, '\n')
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
