package providertest

// This file holds Bedrock, the fake Amazon Bedrock Runtime (Converse API).
// Unlike the rest of the package it imports a third-party module, the AWS
// event stream encoder, to frame ConverseStream answers exactly as Bedrock
// does.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/svc-gateway/svc/internal/llm"
)

// Request headers that control one Bedrock response, besides HeaderStatus
// (answer that status with a Bedrock error), HeaderReply (the assistant's
// text) and HeaderChunks (text deltas in a stream).
const (
	// HeaderBedrockException makes a stream end with that exception event
	// (throttlingException, modelStreamErrorException, validationException,
	// serviceUnavailableException, internalServerException).
	HeaderBedrockException = "X-Fake-Exception"
	// HeaderBedrockExceptionAfter is the number of content deltas sent
	// before the exception (default 1).
	HeaderBedrockExceptionAfter = "X-Fake-Exception-After"
)

// bedrConfig is a Bedrock server's defaults.
type bedrConfig struct {
	bearer         string // demand this bearer token instead of SigV4
	status         int
	reply          string
	chunks         int
	exception      string
	exceptionAfter int
	recordLimit    int
}

// BedrOption sets a Bedrock server default.
type BedrOption func(*bedrConfig)

// BedrockBearer makes the server demand "Authorization: Bearer token" (a
// Bedrock API key) instead of a SigV4 signature.
func BedrockBearer(token string) BedrOption { return func(c *bedrConfig) { c.bearer = token } }

// BedrockStatus makes every request fail with status and a Bedrock error, as
// X-Fake-Status does for one request. 0 turns it off.
func BedrockStatus(status int) BedrOption { return func(c *bedrConfig) { c.status = status } }

// BedrockReply sets the assistant's text, as X-Fake-Reply does.
func BedrockReply(text string) BedrOption { return func(c *bedrConfig) { c.reply = text } }

// BedrockChunks sets the number of text deltas in a stream, as X-Fake-Chunks does.
func BedrockChunks(n int) BedrOption { return func(c *bedrConfig) { c.chunks = max(n, 1) } }

// BedrockException makes streams end with exception typ after n content
// deltas, as X-Fake-Exception and X-Fake-Exception-After do. "" turns it off.
func BedrockException(typ string, n int) BedrOption {
	return func(c *bedrConfig) { c.exception, c.exceptionAfter = typ, max(n, 0) }
}

// BedrockRecording keeps the last n requests (default DefaultRecordLimit).
func BedrockRecording(n int) BedrOption { return func(c *bedrConfig) { c.recordLimit = max(n, 0) } }

// Bedrock is a running fake Bedrock Runtime: POST /model/{modelId}/converse
// and /model/{modelId}/converse-stream, answering the shapes of the Bedrock
// API reference. It demands a SigV4 Authorization header for the bedrock
// service with X-Amz-Date (or the bearer token set by BedrockBearer) and
// answers 403 otherwise. With a toolConfig and a last turn from the user, the
// model calls the first tool; otherwise it answers text. Usage is the bytes of
// text / 4, as the OpenAI fake computes it. Its methods are safe for
// concurrent use.
type Bedrock struct {
	cfg   bedrConfig
	url   string
	srv   *httptest.Server
	count atomic.Int64

	mu  sync.Mutex
	rec []Recorded // the last cfg.recordLimit requests, oldest first
}

// NewBedrock starts a fake Bedrock Runtime for the length of the test.
func NewBedrock(t testing.TB, opts ...BedrOption) *Bedrock {
	t.Helper()
	s := &Bedrock{cfg: bedrConfig{reply: DefaultReply, chunks: DefaultChunks, exceptionAfter: 1, recordLimit: DefaultRecordLimit}}
	for _, o := range opts {
		o(&s.cfg)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /model/{model}/converse", func(w http.ResponseWriter, r *http.Request) { s.converse(w, r, false) })
	mux.HandleFunc("POST /model/{model}/converse-stream", func(w http.ResponseWriter, r *http.Request) { s.converse(w, r, true) })
	mux.HandleFunc("POST /model/{model}/invoke", s.bedrInvoke)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.count.Add(1)
		bedrWriteError(w, http.StatusNotFound, "UnknownOperationException", "Unknown operation "+r.Method+" "+r.URL.Path)
	})
	s.srv = httptest.NewServer(mux)
	s.url = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to put in Target.BaseURL (no trailing slash).
func (s *Bedrock) URL() string { return s.url }

// Close stops the server; it is safe to call more than once.
func (s *Bedrock) Close() { s.srv.Close() }

// Count is the number of requests received.
func (s *Bedrock) Count() int { return int(s.count.Load()) }

// Requests returns copies of the recorded requests, oldest first.
func (s *Bedrock) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.rec))
	for i, r := range s.rec {
		out[i] = r.clone()
	}
	return out
}

// LastRequest returns the most recent recorded request, or the zero Recorded.
func (s *Bedrock) LastRequest() Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rec) == 0 {
		return Recorded{}
	}
	return s.rec[len(s.rec)-1].clone()
}

// bedrRequest is the part of a Converse request the fake reads.
type bedrRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text       *string         `json:"text"`
			ToolResult json.RawMessage `json:"toolResult"`
		} `json:"content"`
	} `json:"messages"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name string `json:"name"`
			} `json:"toolSpec"`
		} `json:"tools"`
	} `json:"toolConfig"`
}

func (s *Bedrock) converse(w http.ResponseWriter, r *http.Request, stream bool) {
	s.count.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	s.record(Recorded{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if !s.authorized(r.Header) {
		bedrWriteError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return
	}
	if bedrEcho(w, r) {
		return
	}
	status, reply, chunks := s.cfg.status, s.cfg.reply, s.cfg.chunks
	exception, after := s.cfg.exception, s.cfg.exceptionAfter
	h := r.Header
	if v, err := strconv.Atoi(h.Get(HeaderStatus)); err == nil {
		status = v
	}
	if v := h.Get(HeaderReply); v != "" {
		reply = v
	}
	if v, err := strconv.Atoi(h.Get(HeaderChunks)); err == nil && v > 0 {
		chunks = v
	}
	if v := h.Get(HeaderBedrockException); v != "" {
		exception = v
	}
	if v, err := strconv.Atoi(h.Get(HeaderBedrockExceptionAfter)); err == nil && v >= 0 {
		after = v
	}
	if status >= 400 {
		typ, msg := bedrForcedError(status)
		bedrWriteError(w, status, typ, msg)
		return
	}
	var req bedrRequest
	if len(body) > maxBody || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		bedrWriteError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	}
	text := 0
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Text != nil {
				text += len(*c.Text)
			}
		}
	}
	in := tokens(text)
	tool := ""
	if last := req.Messages[len(req.Messages)-1]; req.ToolConfig != nil && len(req.ToolConfig.Tools) > 0 && last.Role == "user" {
		tool = req.ToolConfig.Tools[0].ToolSpec.Name
		for _, c := range last.Content {
			if len(c.ToolResult) > 0 {
				tool = "" // the tool answered: the model answers in text
			}
		}
	}
	w.Header().Set("X-Amzn-Requestid", "5f3c0c4e-7f0e-4a8e-9a53-"+strconv.FormatInt(1e11+s.count.Load(), 10))
	if stream {
		s.stream(w, r, reply, tool, chunks, in, exception, after)
		return
	}
	out := tokens(len(reply))
	content := `[{"text":` + string(llm.AppendJSONString(nil, reply)) + `}]`
	stop := "end_turn"
	if tool != "" {
		content = `[{"toolUse":{"toolUseId":"tooluse_providertest0001","name":` + string(llm.AppendJSONString(nil, tool)) + `,"input":{"query":"providertest"}}}]`
		stop = "tool_use"
	}
	resp := `{"output":{"message":{"role":"assistant","content":` + content + `}},"stopReason":"` + stop +
		`","usage":{"inputTokens":` + strconv.Itoa(in) + `,"outputTokens":` + strconv.Itoa(out) + `,"totalTokens":` + strconv.Itoa(in+out) +
		`},"metrics":{"latencyMs":12}}`
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
	_, _ = io.WriteString(w, resp)
}

// stream writes a ConverseStream answer, one flushed frame per event.
func (s *Bedrock) stream(w http.ResponseWriter, r *http.Request, reply, tool string, chunks, in int, exception string, after int) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	enc := eventstream.NewEncoder()
	var buf bytes.Buffer
	send := func(kind, typ, payload string) bool {
		var hs eventstream.Headers
		if kind == "exception" {
			hs.Set(":exception-type", eventstream.StringValue(typ))
		} else {
			hs.Set(":event-type", eventstream.StringValue(typ))
		}
		hs.Set(":content-type", eventstream.StringValue("application/json"))
		hs.Set(":message-type", eventstream.StringValue(kind))
		buf.Reset()
		if err := enc.Encode(&buf, eventstream.Message{Headers: hs, Payload: []byte(payload)}); err != nil {
			return false
		}
		if _, err := w.Write(buf.Bytes()); err != nil || r.Context().Err() != nil {
			return false
		}
		if f != nil {
			f.Flush()
		}
		return true
	}
	if !send("event", "messageStart", `{"p":"abcdefgh","role":"assistant"}`) {
		return
	}
	deltas := 0
	delta := func(payload string) bool {
		if exception != "" && deltas == after {
			send("exception", exception, `{"message":"providertest: `+exception+` on command."}`)
			return false
		}
		deltas++
		return send("event", "contentBlockDelta", payload)
	}
	text := reply
	if tool != "" {
		text = `{"query":"providertest"}`
		if !send("event", "contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_providertest0001","name":`+string(llm.AppendJSONString(nil, tool))+`}}}`) {
			return
		}
	}
	for i := range chunks {
		p := piece(text, i, chunks)
		var payload string
		if tool != "" {
			payload = `{"contentBlockIndex":0,"delta":{"toolUse":{"input":` + string(llm.AppendJSONString(nil, p)) + `}}}`
		} else {
			payload = `{"contentBlockIndex":0,"delta":{"text":` + string(llm.AppendJSONString(nil, p)) + `},"p":"abcd"}`
		}
		if !delta(payload) {
			return
		}
	}
	if exception != "" { // after fewer deltas than asked: after the last
		send("exception", exception, `{"message":"providertest: `+exception+` on command."}`)
		return
	}
	stop := "end_turn"
	if tool != "" {
		stop = "tool_use"
	}
	out := tokens(len(text))
	_ = send("event", "contentBlockStop", `{"contentBlockIndex":0}`) &&
		send("event", "messageStop", `{"stopReason":"`+stop+`"}`) &&
		send("event", "metadata", `{"usage":{"inputTokens":`+strconv.Itoa(in)+`,"outputTokens":`+strconv.Itoa(out)+`,"totalTokens":`+strconv.Itoa(in+out)+`},"metrics":{"latencyMs":12}}`)
}

// authorized checks the request's credentials: a SigV4 signature for the
// bedrock service with its date, or the configured bearer token.
func (s *Bedrock) authorized(h http.Header) bool {
	if s.cfg.bearer != "" {
		tok, ok := bearer(h)
		return ok && tok == s.cfg.bearer
	}
	auth := h.Get("Authorization")
	cred, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !ok || h.Get("X-Amz-Date") == "" {
		return false
	}
	scope, _, _ := strings.Cut(cred, ",")
	parts := strings.Split(scope, "/") // key id, date, region, service, aws4_request
	return len(parts) == 5 && parts[0] != "" && parts[3] == "bedrock" && parts[4] == "aws4_request" &&
		strings.Contains(auth, "SignedHeaders=") && strings.Contains(auth, "Signature=")
}

func (s *Bedrock) record(r Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.recordLimit == 0 {
		return
	}
	if len(s.rec) == s.cfg.recordLimit {
		copy(s.rec, s.rec[1:])
		s.rec = s.rec[:len(s.rec)-1]
	}
	s.rec = append(s.rec, r)
}

// bedrEcho answers X-Fake-Echo-Key, and reports whether it did.
func bedrEcho(w http.ResponseWriter, r *http.Request) bool {
	st, ok := echoStatus(r.Header)
	switch {
	case !ok:
		bedrWriteError(w, http.StatusBadRequest, "ValidationException", badEchoHeader(r.Header))
	case st != 0:
		typ := "ValidationException"
		if st >= 500 {
			typ = "InternalServerException"
		}
		bedrWriteError(w, st, typ, echoMessage(receivedKey(r)))
	default:
		return false
	}
	return true
}

// bedrForcedError is Bedrock's error type and message for status.
func bedrForcedError(status int) (typ, msg string) {
	switch status {
	case http.StatusBadRequest:
		return "ValidationException", "providertest: X-Fake-Status 400."
	case http.StatusForbidden:
		return "AccessDeniedException", "You don't have access to the model with the specified model ID."
	case http.StatusNotFound:
		return "ResourceNotFoundException", "Model not found."
	case http.StatusRequestTimeout:
		return "ModelTimeoutException", "Model has timed out in processing the request."
	case http.StatusFailedDependency:
		return "ModelErrorException", "The model returned an error."
	case http.StatusTooManyRequests:
		return "ThrottlingException", "Too many requests, please wait before trying again."
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableException", "Bedrock is unable to process your request."
	}
	if status >= 500 {
		return "InternalServerException", "The server encountered an internal error while processing the request."
	}
	return "ValidationException", "providertest: X-Fake-Status " + strconv.Itoa(status) + "."
}

// bedrWriteError answers a Bedrock error: the type in x-amzn-errortype and
// {"message": …} as the body.
func bedrWriteError(w http.ResponseWriter, status int, typ, msg string) {
	body := `{"message":` + string(llm.AppendJSONString(nil, msg)) + "}"
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
