package providertest

// Gemini is the fake for Google's generateContent API, as the Gemini API and
// Vertex AI reference pages show it:
//
//	POST /v1beta/models/{model}:generateContent                     (Gemini API)
//	POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//	POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent   (Vertex AI)
//	POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:streamGenerateContent?alt=sse
//	GET  /v1beta/models
//
// It answers the configured text, or a functionCall of the first declared
// function when the request has functionDeclarations, the last turn is the
// user's and carries no functionResponse, and toolConfig does not say NONE.
// usageMetadata is computed as the OpenAI fake does (bytes / 4, at least 1).
// X-Fake-Status (or GemStatus) answers that status with a Google error body
// ({"error":{"code","message","status"}}; 429 carries RetryInfo and
// Retry-After: 1).

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// GemDefaultReply is the text a Gemini fake answers unless told otherwise.
const GemDefaultReply = "Hello! This is the providertest fake Gemini upstream answering your request."

// GemDefaultModels are the models GET /v1beta/models lists unless GemModels says otherwise.
var GemDefaultModels = []string{"gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "text-embedding-004"}

// gemMaxBody bounds a request body the fake reads.
const gemMaxBody = 32 << 20

// GemOption configures a fake Gemini upstream.
type GemOption func(*gemConfig)

type gemConfig struct {
	apiKey      string
	bearer      string
	status      int
	reply       string
	chunks      int
	models      []string
	recordLimit int
}

// GemAPIKey makes the server require x-goog-api-key (or ?key=) to be key, as
// the Gemini API does: a missing key is 403 PERMISSION_DENIED, a wrong one
// 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
func GemAPIKey(key string) GemOption { return func(c *gemConfig) { c.apiKey = key } }

// GemBearer makes the server require `Authorization: Bearer <token>`, as
// Vertex AI does; otherwise 401 UNAUTHENTICATED.
func GemBearer(token string) GemOption { return func(c *gemConfig) { c.bearer = token } }

// GemStatus makes every generate request answer status with a Google error.
func GemStatus(status int) GemOption { return func(c *gemConfig) { c.status = status } }

// GemReply sets the model's text.
func GemReply(text string) GemOption { return func(c *gemConfig) { c.reply = text } }

// GemChunks sets the number of text events of a stream (default 5).
func GemChunks(n int) GemOption { return func(c *gemConfig) { c.chunks = max(n, 1) } }

// GemModels sets the models GET /v1beta/models lists.
func GemModels(ids ...string) GemOption {
	return func(c *gemConfig) { c.models = append([]string(nil), ids...) }
}

// GemRecording keeps the last n requests (default DefaultRecordLimit; 0 keeps none).
func GemRecording(n int) GemOption { return func(c *gemConfig) { c.recordLimit = max(n, 0) } }

// Gemini is a running fake Gemini / Vertex AI upstream. Its methods are safe
// for concurrent use.
type Gemini struct {
	cfg   gemConfig
	srv   *httptest.Server
	count atomic.Int64

	mu   sync.Mutex
	recs []Recorded // the last cfg.recordLimit requests, oldest first
}

// NewGemini starts a fake Gemini upstream for the length of the test.
func NewGemini(t testing.TB, opts ...GemOption) *Gemini {
	t.Helper()
	c := gemConfig{reply: GemDefaultReply, chunks: 5, models: GemDefaultModels, recordLimit: DefaultRecordLimit}
	for _, o := range opts {
		o(&c)
	}
	s := &Gemini{cfg: c}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", s.gemCall)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/google/models/{call}", s.gemCall)
	mux.HandleFunc("GET /v1beta/models", s.gemListModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.gemBegin(w, r, nil)
		gemWriteError(w, http.StatusNotFound, "NOT_FOUND", "The requested URL "+r.URL.Path+" was not found on this server.", "")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the host root ("http://127.0.0.1:41234"), as Target.BaseURL takes
// it for both adapters.
func (s *Gemini) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Gemini) Close() { s.srv.Close() }

// Count is the number of requests received.
func (s *Gemini) Count() int { return int(s.count.Load()) }

// Requests returns the recorded requests, oldest first.
func (s *Gemini) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.recs))
	copy(out, s.recs)
	return out
}

// LastRequest is the most recent recorded request (zero when none).
func (s *Gemini) LastRequest() Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == 0 {
		return Recorded{}
	}
	return s.recs[len(s.recs)-1]
}

// gemBegin counts and records a request.
func (s *Gemini) gemBegin(w http.ResponseWriter, r *http.Request, body []byte) {
	s.count.Add(1)
	if s.cfg.recordLimit == 0 {
		return
	}
	rec := Recorded{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	if len(s.recs) >= s.cfg.recordLimit {
		s.recs = append(s.recs[:0], s.recs[len(s.recs)-s.cfg.recordLimit+1:]...)
	}
	s.recs = append(s.recs, rec)
	s.mu.Unlock()
}

// gemAuthorized checks the configured credential, answering the error Google
// answers when it is wrong, and answers X-Fake-Echo-Key.
func (s *Gemini) gemAuthorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.apiKey != "" {
		key := r.Header.Get("X-Goog-Api-Key")
		if key == "" {
			key = r.URL.Query().Get("key")
		}
		switch {
		case key == "":
			gemWriteError(w, http.StatusForbidden, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "")
			return false
		case key != s.cfg.apiKey:
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
			return false
		}
	}
	if s.cfg.bearer != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.bearer {
		gemWriteError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "")
		return false
	}
	if st, ok := echoStatus(r.Header); !ok {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", badEchoHeader(r.Header), "")
		return false
	} else if st != 0 {
		code := "INVALID_ARGUMENT"
		if st >= 500 {
			code = "INTERNAL"
		}
		gemWriteError(w, st, code, echoMessage(receivedKey(r)), "")
		return false
	}
	return true
}

// gemRequest is the part of a GenerateContentRequest the fake reads.
type gemRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             *string         `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
}

// gemFunctionToCall is the function the fake calls, or "".
func (q *gemRequest) gemFunctionToCall() string {
	last := q.Contents[len(q.Contents)-1]
	if last.Role != "user" {
		return ""
	}
	for _, p := range last.Parts {
		if len(p.FunctionResponse) > 0 {
			return ""
		}
	}
	if q.ToolConfig != nil {
		fc := q.ToolConfig.FunctionCallingConfig
		if fc.Mode == "NONE" {
			return ""
		}
		if len(fc.AllowedFunctionNames) > 0 {
			return fc.AllowedFunctionNames[0]
		}
	}
	for _, t := range q.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name != "" {
				return d.Name
			}
		}
	}
	return ""
}

func (q *gemRequest) gemPromptBytes() int {
	n := 0
	for _, c := range q.Contents {
		for _, p := range c.Parts {
			if p.Text != nil {
				n += len(*p.Text)
			}
		}
	}
	if q.SystemInstruction != nil {
		for _, p := range q.SystemInstruction.Parts {
			n += len(p.Text)
		}
	}
	return n
}

// gemEvent is a GenerateContentResponse as the fake writes it.
type gemEvent struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata gemUsage       `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

type gemCandidate struct {
	Content struct {
		Parts []map[string]any `json:"parts"`
		Role  string           `json:"role"`
	} `json:"content"`
	FinishReason string `json:"finishReason,omitempty"`
	Index        int    `json:"index"`
}

type gemUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

func (s *Gemini) gemGenerate(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, gemMaxBody))
	s.gemBegin(w, r, body)
	if err != nil {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Could not read the request body.", "")
		return
	}
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	if !ok || (method != "generateContent" && method != "streamGenerateContent") {
		gemWriteError(w, http.StatusNotFound, "NOT_FOUND", "The requested URL "+r.URL.Path+" was not found on this server.", "")
		return
	}
	if !s.gemAuthorized(w, r) {
		return
	}
	status := s.cfg.status
	if v := r.Header.Get(HeaderStatus); v != "" {
		status, _ = strconv.Atoi(v)
	}
	if status >= 400 {
		gemForcedError(w, status, model)
		return
	}
	var q gemRequest
	if err := json.Unmarshal(body, &q); err != nil {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error(), "")
		return
	}
	if len(q.Contents) == 0 {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified\n", "")
		return
	}
	for i, c := range q.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Please use a valid role: user, model. (contents["+strconv.Itoa(i)+"])", "")
			return
		}
	}
	reply := s.cfg.reply
	if v := r.Header.Get(HeaderReply); v != "" {
		reply = v
	}
	chunks := s.cfg.chunks
	if v, err := strconv.Atoi(r.Header.Get(HeaderChunks)); err == nil && v > 0 {
		chunks = v
	}
	prompt := tokens(q.gemPromptBytes())
	fn := q.gemFunctionToCall()
	var events []gemEvent
	if fn != "" {
		e := gemNewEvent(model, prompt)
		e.Candidates[0].Content.Parts = []map[string]any{{"functionCall": map[string]any{"name": fn, "args": map[string]any{}}}}
		e.Candidates[0].FinishReason = "STOP"
		e.UsageMetadata.CandidatesTokenCount = 5
		events = append(events, e)
	} else {
		for i := range chunks {
			e := gemNewEvent(model, prompt)
			e.Candidates[0].Content.Parts = []map[string]any{{"text": piece(reply, i, chunks)}}
			events = append(events, e)
		}
		last := &events[len(events)-1]
		last.Candidates[0].FinishReason = "STOP"
		last.UsageMetadata.CandidatesTokenCount = tokens(len(reply))
	}
	last := &events[len(events)-1]
	last.UsageMetadata.TotalTokenCount = last.UsageMetadata.PromptTokenCount + last.UsageMetadata.CandidatesTokenCount

	if method == "generateContent" {
		whole := events[len(events)-1]
		if fn == "" {
			whole.Candidates[0].Content.Parts = []map[string]any{{"text": reply}}
		}
		gemWriteJSON(w, http.StatusOK, whole)
		return
	}
	if r.URL.Query().Get("alt") != "sse" { // without alt=sse Google streams a JSON array
		gemWriteJSON(w, http.StatusOK, events)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, e := range events {
		b, _ := json.Marshal(e)
		if _, err := w.Write(append(append([]byte("data: "), b...), "\r\n\r\n"...)); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

func gemNewEvent(model string, prompt int) gemEvent {
	e := gemEvent{Candidates: make([]gemCandidate, 1), ModelVersion: model, ResponseID: "fakeGeminiResponse1"}
	e.Candidates[0].Content.Role = "model"
	e.UsageMetadata = gemUsage{PromptTokenCount: prompt, TotalTokenCount: prompt}
	return e
}

func (s *Gemini) gemListModels(w http.ResponseWriter, r *http.Request) {
	s.gemBegin(w, r, nil)
	if !s.gemAuthorized(w, r) {
		return
	}
	type model struct {
		Name                       string   `json:"name"`
		DisplayName                string   `json:"displayName"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	}
	var list struct {
		Models []model `json:"models"`
	}
	for _, id := range s.cfg.models {
		list.Models = append(list.Models, model{Name: "models/" + id, DisplayName: id, SupportedGenerationMethods: []string{"generateContent", "countTokens"}})
	}
	gemWriteJSON(w, http.StatusOK, list)
}

// gemForcedError answers status as Google words it.
func gemForcedError(w http.ResponseWriter, status int, model string) {
	switch status {
	case http.StatusBadRequest:
		gemWriteError(w, status, "INVALID_ARGUMENT", "Request contains an invalid argument.", "")
	case http.StatusUnauthorized:
		gemWriteError(w, status, "UNAUTHENTICATED", "Request had invalid authentication credentials.", "")
	case http.StatusForbidden:
		gemWriteError(w, status, "PERMISSION_DENIED", "The caller does not have permission", "")
	case http.StatusNotFound:
		gemWriteError(w, status, "NOT_FOUND", "models/"+model+" is not found for API version v1beta, or is not supported for generateContent.", "")
	case http.StatusTooManyRequests:
		gemWriteError(w, status, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details.", "")
	case http.StatusServiceUnavailable:
		gemWriteError(w, status, "UNAVAILABLE", "The model is overloaded. Please try again later.", "")
	case http.StatusGatewayTimeout:
		gemWriteError(w, status, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", "")
	default:
		gemWriteError(w, status, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "")
	}
}

// gemWriteError answers a Google error body; reason adds an ErrorInfo detail.
func gemWriteError(w http.ResponseWriter, status int, code, msg, reason string) {
	type detail struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason,omitempty"`
		Domain     string `json:"domain,omitempty"`
		RetryDelay string `json:"retryDelay,omitempty"`
	}
	var b struct {
		Error struct {
			Code    int      `json:"code"`
			Message string   `json:"message"`
			Status  string   `json:"status"`
			Details []detail `json:"details,omitempty"`
		} `json:"error"`
	}
	b.Error.Code, b.Error.Message, b.Error.Status = status, msg, code
	if reason != "" {
		b.Error.Details = append(b.Error.Details, detail{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: reason, Domain: "googleapis.com"})
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		b.Error.Details = append(b.Error.Details, detail{Type: "type.googleapis.com/google.rpc.RetryInfo", RetryDelay: "1s"})
	}
	gemWriteJSON(w, status, b)
}

func gemWriteJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
