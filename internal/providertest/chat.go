package providertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/llm"
)

// Constant header values, shared by all responses: net/http only reads them.
var (
	contentTypeJSON = []string{"application/json"}
	contentTypeSSE  = []string{"text/event-stream; charset=utf-8"}
	noCache         = []string{"no-cache"}
	oneMS           = []string{"1"}
)

// chatRequest is the part of a chat completions request the fake reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage keeps only the length of a message's text.
type chatMessage struct {
	Content textLen `json:"content"`
}

// textLen is the number of bytes of text in a message's content: a string, or
// an array of content parts whose "text" fields count.
type textLen int

func (n *textLen) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"':
		if bytes.IndexByte(b, '\\') < 0 {
			*n = textLen(len(b) - 2)
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = textLen(len(s))
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		*n = 0
		for _, p := range parts {
			*n += textLen(len(p.Text))
		}
	default: // null: an assistant message with tool calls only
		*n = 0
	}
	return nil
}

// usage is an OpenAI usage object.
type usage struct {
	prompt, completion, cached, reasoning int
}

// tokens estimates tokens from text bytes deterministically: bytes/4, at least 1.
func tokens(bytes int) int { return max(bytes/4, 1) }

// chatUsage is the usage of an answer with the reply of ctl, or call.
func chatUsage(req *chatRequest, ctl *controls, call *toolCall) usage {
	text := 0
	for _, m := range req.Messages {
		text += int(m.Content)
	}
	u := usage{
		prompt:    tokens(text),
		reasoning: ctl.reasoningTokens,
	}
	out := len(ctl.reply)
	if call != nil {
		out = len(call.args)
	}
	u.completion = tokens(out) + u.reasoning
	u.cached = min(ctl.cachedTokens, u.prompt)
	return u
}

func appendUsage(dst []byte, u usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = appendInt(dst, u.prompt)
	dst = append(dst, `,"completion_tokens":`...)
	dst = appendInt(dst, u.completion)
	dst = append(dst, `,"total_tokens":`...)
	dst = appendInt(dst, u.prompt+u.completion)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = appendInt(dst, u.cached)
	dst = append(dst, `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = appendInt(dst, u.reasoning)
	return append(dst, `,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
}

// decodeChat parses and validates a chat completions request body.
func decodeChat(body []byte, req *chatRequest) (bad apiError) {
	if err := json.Unmarshal(body, req); err != nil {
		return invalidRequest("", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.) providertest: "+err.Error())
	}
	switch {
	case req.Model == "":
		return invalidRequest("", "", "you must provide a model parameter")
	case req.Messages == nil:
		return invalidRequest("messages", "missing_required_parameter", "Missing required parameter: 'messages'.")
	case len(req.Messages) == 0:
		return invalidRequest("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	return apiError{}
}

// chatCompletions serves POST /v1/chat/completions.
func (s *OpenAI) chatCompletions(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req chatRequest
	bad := decodeChat(x.body, &req)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	var call *toolCall
	if x.ctl.toolCalls {
		call = s.chatToolCall(x.body)
	}
	id := s.ids.Add(1)
	created := time.Now().Unix()
	h := w.Header()
	h["X-Request-Id"] = []string{"req_providertest_" + strconv.FormatUint(id, 10)}
	h["Openai-Processing-Ms"] = oneMS
	if req.Stream {
		s.streamChat(w, r, x, &req, call, id, created)
		return
	}

	u := chatUsage(&req, &x.ctl, call)
	b := x.out[:0]
	b = append(b, `{"id":"chatcmpl-providertest`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if call != nil {
		b = appendChatToolMessage(b, call)
	} else {
		b = llm.AppendJSONString(b, x.ctl.reply)
		b = append(b, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":`...)
	}
	b = appendUsage(b, u)
	b = append(b, `,"service_tier":"default","system_fingerprint":"fp_providertest"}`+"\n"...)
	x.out = b

	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	if x.ctl.cutAfter >= 0 {
		// A body cut short: headers promise len(b) bytes, half of them come.
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:len(b)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		abort()
	}
	_, _ = w.Write(b)
}

// streamChat answers a stream:true request as OpenAI does: a first chunk with
// the assistant role, ctl.chunks content chunks, a chunk with finish_reason,
// a usage chunk with empty choices when stream_options.include_usage is set,
// then "data: [DONE]". A tool call's first chunk carries the call's id, type
// and name, and its ctl.chunks chunks pieces of the arguments.
func (s *OpenAI) streamChat(w http.ResponseWriter, r *http.Request, x *exchange, req *chatRequest, call *toolCall, id uint64, created int64) {
	ctl := &x.ctl
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	flusher, _ := w.(http.Flusher)

	h := w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)

	// Every chunk is head + choices + tail.
	b := x.out[:0]
	b = append(b, `data: {"id":"chatcmpl-providertest`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"service_tier":"default","system_fingerprint":"fp_providertest","choices":[`...)
	head := len(b)
	tail := "]}\n\n"
	if includeUsage {
		tail = `],"usage":null}` + "\n\n"
	}
	send := func(b []byte) {
		if _, err := w.Write(b); err != nil {
			abort()
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	defer func() { x.out = b }()

	if call != nil {
		b = appendToolCallStart(b[:head], call)
	} else {
		b = append(b[:head], `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`...)
	}
	b = append(b, tail...)
	send(b)

	for i := range ctl.chunks {
		if i == ctl.cutAfter {
			abort()
		}
		if !s.wait(r.Context(), ctl.chunkDelay) {
			abort()
		}
		if call != nil {
			b = appendToolCallDelta(b[:head], piece(call.args, i, ctl.chunks))
		} else {
			b = append(b[:head], `{"index":0,"delta":{"content":`...)
			b = llm.AppendJSONString(b, piece(ctl.reply, i, ctl.chunks))
			b = append(b, `},"logprobs":null,"finish_reason":null}`...)
		}
		b = append(b, tail...)
		send(b)
	}
	if ctl.cutAfter >= ctl.chunks {
		abort()
	}

	if call != nil {
		b = append(b[:head], `{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}`...)
	} else {
		b = append(b[:head], `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`...)
	}
	b = append(b, tail...)
	send(b)
	if includeUsage {
		b = append(b[:head], `],"usage":`...)
		b = appendUsage(b, chatUsage(req, ctl, call))
		b = append(b, "}\n\n"...)
		send(b)
	}
	send(append(b[:0], "data: [DONE]\n\n"...))
}

// piece is the i-th of n nearly equal parts of text, cut at rune boundaries;
// the parts concatenate to text. With fewer runes than parts some are empty.
func piece(text string, i, n int) string {
	return text[runeStart(text, i*len(text)/n):runeStart(text, (i+1)*len(text)/n)]
}

// runeStart moves k forward to the start of a rune in s.
func runeStart(s string, k int) int {
	for k < len(s) && !utf8.RuneStart(s[k]) {
		k++
	}
	return k
}
