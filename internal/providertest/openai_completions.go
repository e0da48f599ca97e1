package providertest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/llm"
)

// ---------------------------------------------------------------------------
// POST /v1/completions

type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// completionText is the text a completion answers and why it stopped: the
// reply, cut to max_tokens*4 bytes (at a rune boundary) with finish_reason
// "length" when max_tokens is smaller than its tokens.
func completionText(reply string, maxTokens *int) (text, finish string) {
	if maxTokens != nil && *maxTokens > 0 && tokens(len(reply)) > *maxTokens {
		n := *maxTokens * 4
		for n > 0 && !utf8.RuneStart(reply[n]) {
			n--
		}
		return reply[:n], "length"
	}
	return reply, "stop"
}

// completions serves POST /v1/completions, the legacy text completions API.
func (s *OpenAI) completions(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req completionRequest
	err := json.Unmarshal(x.body, &req)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	var inputs []embeddingInput
	bad := apiError{}
	switch {
	case err != nil:
		bad = badJSON(err)
	case req.Model == "":
		bad = invalidRequest("", "", "you must provide a model parameter")
	case len(req.Prompt) == 0 || string(req.Prompt) == "null":
		bad = missingParam("prompt")
	case req.MaxTokens != nil && *req.MaxTokens < 0:
		bad = invalidRequest("max_tokens", "integer_below_min_value", "Invalid 'max_tokens': integer below minimum value. Expected a value >= 0, but got "+strconv.Itoa(*req.MaxTokens)+" instead.")
	default:
		if inputs, ok = embeddingInputs(req.Prompt); !ok {
			bad = invalidRequest("prompt", "invalid_type", "Invalid 'prompt': expected a string, an array of strings, an array of tokens or an array of token arrays.")
		}
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	text, finish := completionText(x.ctl.reply, req.MaxTokens)
	u := usage{completion: tokens(len(text))}
	for _, in := range inputs {
		u.prompt += in.tokens
	}
	u.cached = min(x.ctl.cachedTokens, u.prompt)

	id := s.requestID(w)
	created := time.Now().Unix()
	if req.Stream {
		s.streamCompletion(w, r, x, &req, text, finish, u, id, created)
		return
	}
	b := x.out[:0]
	b = append(b, `{"id":"cmpl-providertest`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","object":"text_completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"choices":[{"text":`...)
	b = llm.AppendJSONString(b, text)
	b = append(b, `,"index":0,"logprobs":null,"finish_reason":`...)
	b = llm.AppendJSONString(b, finish)
	b = append(b, `}],"usage":`...)
	b = appendUsage(b, u)
	b = append(b, `,"system_fingerprint":"fp_providertest"}`+"\n"...)
	writeJSONAnswer(w, x, b)
}

// streamCompletion answers a stream:true completions request as OpenAI does:
// ctl.chunks text_completion chunks with pieces of the text, one with an
// empty text and the finish_reason, a usage chunk with empty choices when
// stream_options.include_usage is set, then "data: [DONE]".
func (s *OpenAI) streamCompletion(w http.ResponseWriter, r *http.Request, x *exchange, req *completionRequest, text, finish string, u usage, id uint64, created int64) {
	ctl := &x.ctl
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	flusher, _ := w.(http.Flusher)

	h := w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}

	b := x.out[:0]
	b = append(b, `data: {"id":"cmpl-providertest`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","object":"text_completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"system_fingerprint":"fp_providertest","choices":[`...)
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

	for i := range ctl.chunks {
		if i == ctl.cutAfter {
			abort()
		}
		if !s.wait(r.Context(), ctl.chunkDelay) {
			abort()
		}
		b = append(b[:head], `{"text":`...)
		b = llm.AppendJSONString(b, piece(text, i, ctl.chunks))
		b = append(b, `,"index":0,"logprobs":null,"finish_reason":null}`...)
		b = append(b, tail...)
		send(b)
	}
	if ctl.cutAfter >= ctl.chunks {
		abort()
	}
	b = append(b[:head], `{"text":"","index":0,"logprobs":null,"finish_reason":`...)
	b = llm.AppendJSONString(b, finish)
	b = append(b, '}')
	b = append(b, tail...)
	send(b)
	if includeUsage {
		b = append(b[:head], `],"usage":`...)
		b = appendUsage(b, u)
		b = append(b, "}\n\n"...)
		send(b)
	}
	send(append(b[:0], "data: [DONE]\n\n"...))
}
