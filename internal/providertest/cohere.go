package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"
)

// Cohere is a fake Cohere v2 upstream, shaped as Cohere's API reference shows
// it:
//
//	POST /v2/chat     a chat answer or, with "stream": true, the typed event
//	                  stream (message-start, content-start, content-delta…,
//	                  content-end, message-end; with tools and a last message
//	                  from the user: tool-plan-delta, tool-call-start,
//	                  tool-call-delta…, tool-call-end, message-end TOOL_CALL)
//	POST /v2/rerank   deterministic scores: the share of the query's words
//	                  found in the document
//	GET  /v1/models   {"models":[{"name":…}]}
//
// Errors have Cohere's shape, {"id","message"}. X-Fake-Status, X-Fake-Reply,
// X-Fake-Chunks and X-Fake-Cut-After work per request as for OpenAI. Usage is
// bytes/4 (at least 1) of the message text and of the reply. Its methods are
// safe for concurrent use.
type Cohere struct {
	cfg   cohConfig
	srv   *httptest.Server
	count atomic.Int64
	ids   atomic.Uint64

	mu  sync.Mutex
	rec []Recorded // the last cfg.recordLimit requests, oldest first
}

type cohConfig struct {
	apiKey      string
	status      int
	reply       string
	chunks      int
	cutAfter    int
	models      []string
	recordLimit int
}

// CohOption sets a default of a fake Cohere server.
type CohOption func(*cohConfig)

// CohDefaultModels are the models GET /v1/models lists by default.
var CohDefaultModels = []string{"command-a-03-2025", "command-r-plus-08-2024", "rerank-v3.5", "embed-v4.0"}

// CohDefaultReply is the assistant's text unless told otherwise.
const CohDefaultReply = "Hello! This is the providertest fake Cohere upstream answering your request."

// CohWithAPIKey makes the server demand "Authorization: Bearer key" and answer
// 401 otherwise.
func CohWithAPIKey(key string) CohOption { return func(c *cohConfig) { c.apiKey = key } }

// CohWithStatus makes every request fail with status and a Cohere error body.
func CohWithStatus(status int) CohOption { return func(c *cohConfig) { c.status = status } }

// CohWithReply sets the assistant's text.
func CohWithReply(text string) CohOption { return func(c *cohConfig) { c.reply = text } }

// CohWithChunks sets the number of content-delta events of a stream.
func CohWithChunks(n int) CohOption { return func(c *cohConfig) { c.chunks = max(n, 1) } }

// CohWithCutAfter makes streams end abruptly after n content-delta events (a
// negative n turns it off).
func CohWithCutAfter(n int) CohOption { return func(c *cohConfig) { c.cutAfter = n } }

// CohWithModels sets the models GET /v1/models lists.
func CohWithModels(names ...string) CohOption {
	return func(c *cohConfig) { c.models = append([]string(nil), names...) }
}

// CohWithRecording keeps the last n requests (default DefaultRecordLimit); 0
// turns recording off.
func CohWithRecording(n int) CohOption { return func(c *cohConfig) { c.recordLimit = max(n, 0) } }

// NewCohere starts a fake Cohere upstream for the length of the test.
func NewCohere(t testing.TB, opts ...CohOption) *Cohere {
	t.Helper()
	s := &Cohere{cfg: cohConfig{reply: CohDefaultReply, chunks: DefaultChunks, cutAfter: -1,
		models: CohDefaultModels, recordLimit: DefaultRecordLimit}}
	for _, o := range opts {
		o(&s.cfg)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/chat", s.cohChat)
	mux.HandleFunc("POST /v2/rerank", s.cohRerank)
	mux.HandleFunc("POST /v2/embed", s.cohEmbed)
	mux.HandleFunc("GET /v1/models", s.cohModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.cohBegin(w, r); ok {
			cohError(w, http.StatusNotFound, "404 page not found: "+r.Method+" "+r.URL.Path)
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL is the host root, as Cohere's base URL is (https://api.cohere.com).
func (s *Cohere) URL() string { return s.srv.URL }

// Close stops the server; it is safe to call more than once.
func (s *Cohere) Close() { s.srv.Close() }

// Count is the number of requests received.
func (s *Cohere) Count() int { return int(s.count.Load()) }

// Requests returns copies of the recorded requests, oldest first.
func (s *Cohere) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.rec))
	for i, r := range s.rec {
		out[i] = r.clone()
	}
	return out
}

// LastRequest returns the most recent recorded request, or the zero Recorded.
func (s *Cohere) LastRequest() Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rec) == 0 {
		return Recorded{}
	}
	return s.rec[len(s.rec)-1].clone()
}

// cohControls is one request's behaviour.
type cohControls struct {
	status, chunks, cutAfter int
	reply                    string
	body                     []byte
}

// cohBegin counts, reads and records the request, applies the X-Fake-*
// headers (X-Fake-Echo-Key included) and checks the key. When it reports false it has answered.
func (s *Cohere) cohBegin(w http.ResponseWriter, r *http.Request) (cohControls, bool) {
	s.count.Add(1)
	ctl := cohControls{status: s.cfg.status, chunks: s.cfg.chunks, cutAfter: s.cfg.cutAfter, reply: s.cfg.reply}
	body, err := cohReadAll(r, maxBody)
	ctl.body = body
	if s.cfg.recordLimit > 0 {
		s.mu.Lock()
		s.rec = append(s.rec, Recorded{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		if len(s.rec) > s.cfg.recordLimit {
			s.rec = append(s.rec[:0:0], s.rec[len(s.rec)-s.cfg.recordLimit:]...)
		}
		s.mu.Unlock()
	}
	if err != nil {
		cohError(w, http.StatusRequestEntityTooLarge, "request body too large")
		return ctl, false
	}
	for name, dst := range map[string]*int{HeaderStatus: &ctl.status, HeaderChunks: &ctl.chunks, HeaderCutAfter: &ctl.cutAfter} {
		if v := r.Header.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				cohError(w, http.StatusBadRequest, "providertest: bad "+name+" header "+strconv.Quote(v))
				return ctl, false
			}
			*dst = n
		}
	}
	ctl.chunks = max(ctl.chunks, 1)
	if v, ok := r.Header[HeaderReply]; ok && len(v) > 0 {
		ctl.reply = v[0]
	}
	if s.cfg.apiKey != "" {
		if key, ok := bearer(r.Header); !ok || key != s.cfg.apiKey {
			cohError(w, http.StatusUnauthorized, "invalid api token")
			return ctl, false
		}
	}
	if st, ok := echoStatus(r.Header); !ok {
		cohError(w, http.StatusBadRequest, badEchoHeader(r.Header))
		return ctl, false
	} else if st != 0 {
		cohError(w, st, echoMessage(receivedKey(r)))
		return ctl, false
	}
	if ctl.status >= 400 && ctl.status <= 599 {
		cohError(w, ctl.status, cohStatusMessage(ctl.status))
		return ctl, false
	}
	return ctl, true
}

func cohReadAll(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	return b, err
}

func cohStatusMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid request: providertest X-Fake-Status 400"
	case http.StatusUnauthorized:
		return "invalid api token"
	case http.StatusNotFound:
		return "model not found, make sure the correct model ID was used and that you have access to the model."
	case http.StatusTooManyRequests:
		return "You are using a Trial key, which is limited to 10 API calls / minute."
	case http.StatusInternalServerError:
		return "internal server error, this has been reported to our developers"
	}
	return "providertest: X-Fake-Status " + strconv.Itoa(status) + " (" + http.StatusText(status) + ")"
}

// cohError answers Cohere's error shape; 429 adds Retry-After: 1.
func cohError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"id": "providertest-error", "message": msg})
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func cohWriteJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (s *Cohere) cohModels(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.cohBegin(w, r); !ok {
		return
	}
	type model struct {
		Name      string   `json:"name"`
		Endpoints []string `json:"endpoints"`
	}
	out := struct {
		Models []model `json:"models"`
	}{Models: []model{}}
	for _, m := range s.cfg.models {
		ep := []string{"chat"}
		switch {
		case strings.HasPrefix(m, "rerank"):
			ep = []string{"rerank"}
		case strings.HasPrefix(m, "embed"):
			ep = []string{"embed"}
		}
		out.Models = append(out.Models, model{Name: m, Endpoints: ep})
	}
	cohWriteJSON(w, out)
}

// cohWords are the lower-cased words of s.
func cohWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// cohDocument is a rerank document: a string or an object with "text".
type cohDocument string

func (d *cohDocument) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Text string `json:"text"`
		}
		err := json.Unmarshal(b, &o)
		*d = cohDocument(o.Text)
		return err
	}
	var s string
	err := json.Unmarshal(b, &s)
	*d = cohDocument(s)
	return err
}

func (s *Cohere) cohRerank(w http.ResponseWriter, r *http.Request) {
	ctl, ok := s.cohBegin(w, r)
	if !ok {
		return
	}
	var req struct {
		Model     string        `json:"model"`
		Query     string        `json:"query"`
		Documents []cohDocument `json:"documents"`
		TopN      *int          `json:"top_n"`
	}
	if err := json.Unmarshal(ctl.body, &req); err != nil {
		cohError(w, http.StatusBadRequest, "invalid request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		cohError(w, http.StatusBadRequest, "invalid request: model is required")
		return
	case req.Query == "":
		cohError(w, http.StatusBadRequest, "invalid request: query must not be empty")
		return
	case len(req.Documents) == 0:
		cohError(w, http.StatusBadRequest, "invalid request: documents must not be empty")
		return
	}
	type result struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	}
	q := cohWords(req.Query)
	results := make([]result, len(req.Documents))
	for i, d := range req.Documents {
		have := map[string]bool{}
		for _, w := range cohWords(string(d)) {
			have[w] = true
		}
		hits := 0
		for _, w := range q {
			if have[w] {
				hits++
			}
		}
		score := 0.0
		if len(q) > 0 {
			score = float64(hits) / float64(len(q))
		}
		results[i] = result{Index: i, RelevanceScore: score}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].RelevanceScore > results[j].RelevanceScore })
	if req.TopN != nil && *req.TopN >= 0 && *req.TopN < len(results) {
		results = results[:*req.TopN]
	}
	cohWriteJSON(w, map[string]any{
		"id":      "providertest-rerank-" + strconv.FormatUint(s.ids.Add(1), 10),
		"results": results,
		"meta":    map[string]any{"api_version": map[string]any{"version": "2"}, "billed_units": map[string]any{"search_units": 1}},
	})
}

// cohChatRequest is the part of a v2 chat request the fake reads.
type cohChatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// cohText is the text of a message's content: a string or text parts.
func cohText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// cohToolCall is the call the fake makes: the first tool, with its first
// required (else first, by name) parameter set to the user's last text.
type cohToolCall struct {
	ID, Name, Arguments, Plan string
}

func (req *cohChatRequest) toolCall(id uint64) *cohToolCall {
	if len(req.Tools) == 0 || len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != "user" {
		return nil
	}
	f := req.Tools[0].Function
	args := map[string]string{}
	param := ""
	if len(f.Parameters.Required) > 0 {
		param = f.Parameters.Required[0]
	} else {
		for name := range f.Parameters.Properties {
			if param == "" || name < param {
				param = name
			}
		}
	}
	if param != "" {
		args[param] = cohText(req.Messages[len(req.Messages)-1].Content)
	}
	b, _ := json.Marshal(args)
	return &cohToolCall{ID: f.Name + "_providertest" + strconv.FormatUint(id, 10), Name: f.Name, Arguments: string(b),
		Plan: "I will call " + f.Name + "."}
}

func cohTokens(n int) int { return max(n/4, 1) }

func cohUsage(prompt, completion int) map[string]any {
	counts := map[string]int{"input_tokens": prompt, "output_tokens": completion}
	return map[string]any{"billed_units": counts, "tokens": counts}
}

func (s *Cohere) cohChat(w http.ResponseWriter, r *http.Request) {
	ctl, ok := s.cohBegin(w, r)
	if !ok {
		return
	}
	var req cohChatRequest
	if err := json.Unmarshal(ctl.body, &req); err != nil {
		cohError(w, http.StatusBadRequest, "invalid request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		cohError(w, http.StatusBadRequest, "invalid request: model is required")
		return
	case len(req.Messages) == 0:
		cohError(w, http.StatusBadRequest, "invalid request: messages must not be empty")
		return
	}
	id := s.ids.Add(1)
	text := 0
	for _, m := range req.Messages {
		text += len(cohText(m.Content))
	}
	prompt := cohTokens(text)
	call := req.toolCall(id)
	completion := cohTokens(len(ctl.reply))
	if call != nil {
		completion = cohTokens(len(call.Arguments) + len(call.Name))
	}
	msgID := "providertest-chat-" + strconv.FormatUint(id, 10)
	if req.Stream {
		s.cohStream(w, r, &ctl, msgID, call, cohUsage(prompt, completion))
		return
	}
	msg := map[string]any{"role": "assistant"}
	finish := "COMPLETE"
	if call != nil {
		finish = "TOOL_CALL"
		msg["tool_plan"] = call.Plan
		msg["tool_calls"] = []any{map[string]any{"id": call.ID, "type": "function",
			"function": map[string]string{"name": call.Name, "arguments": call.Arguments}}}
	} else {
		msg["content"] = []any{map[string]string{"type": "text", "text": ctl.reply}}
	}
	cohWriteJSON(w, map[string]any{"id": msgID, "finish_reason": finish, "message": msg, "usage": cohUsage(prompt, completion)})
}

// cohStream writes the documented event sequence, each event with its
// "event:" line and its JSON (which repeats the type) on a "data:" line.
func (s *Cohere) cohStream(w http.ResponseWriter, r *http.Request, ctl *cohControls, msgID string, call *cohToolCall, usage map[string]any) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		out := make([]byte, 0, len(b)+40)
		out = append(out, "event: "...)
		out = append(out, v["type"].(string)...)
		out = append(out, "\ndata: "...)
		out = append(out, b...)
		out = append(out, "\n\n"...)
		if _, err := w.Write(out); err != nil {
			panic(http.ErrAbortHandler)
		}
		if flusher != nil {
			flusher.Flush()
		}
		if r.Context().Err() != nil {
			panic(http.ErrAbortHandler)
		}
	}
	delta := func(m map[string]any) map[string]any { return map[string]any{"message": m} }
	send(map[string]any{"id": msgID, "type": "message-start", "delta": delta(map[string]any{
		"role": "assistant", "content": []any{}, "tool_plan": "", "tool_calls": []any{}, "citations": []any{}})})
	if call != nil {
		send(map[string]any{"type": "tool-plan-delta", "delta": delta(map[string]any{"tool_plan": call.Plan})})
		send(map[string]any{"type": "tool-call-start", "index": 0, "delta": delta(map[string]any{"tool_calls": map[string]any{
			"id": call.ID, "type": "function", "function": map[string]string{"name": call.Name, "arguments": ""}}})})
		for i := range 3 {
			send(map[string]any{"type": "tool-call-delta", "index": 0, "delta": delta(map[string]any{"tool_calls": map[string]any{
				"function": map[string]string{"arguments": piece(call.Arguments, i, 3)}}})})
		}
		send(map[string]any{"type": "tool-call-end", "index": 0})
		send(map[string]any{"type": "message-end", "delta": map[string]any{"finish_reason": "TOOL_CALL", "usage": usage}})
		return
	}
	send(map[string]any{"type": "content-start", "index": 0, "delta": delta(map[string]any{"content": map[string]string{"type": "text", "text": ""}})})
	for i := range ctl.chunks {
		if i == ctl.cutAfter {
			panic(http.ErrAbortHandler)
		}
		send(map[string]any{"type": "content-delta", "index": 0, "delta": delta(map[string]any{"content": map[string]string{"text": piece(ctl.reply, i, ctl.chunks)}})})
	}
	if ctl.cutAfter >= ctl.chunks {
		panic(http.ErrAbortHandler)
	}
	send(map[string]any{"type": "content-end", "index": 0})
	send(map[string]any{"type": "message-end", "delta": map[string]any{"finish_reason": "COMPLETE", "usage": usage}})
}
