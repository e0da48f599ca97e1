package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// maxEvent bounds one SSE event from the provider.
const maxEvent = 8 << 20

// maxCandidates bounds the candidates a stream tracks (Gemini allows 8).
const maxCandidates = 16

// DecodeChatStream turns streamGenerateContent?alt=sse events (each a
// GenerateContentResponse) into OpenAI chunks, one per event: the first of a
// choice carries role "assistant", text parts are content deltas (thought
// parts are dropped), each functionCall part is one complete tool call delta,
// recorded in info.ToolCalls too.
// usageMetadata is recorded in info (the last one wins); unless
// info.HideUsage, a usage-only chunk (choices: []) follows the last event.
// Gemini has no end marker: the body's end after a finishReason is the clean
// end, before one it is a truncated stream. A failure ends the stream: Next
// returns it again if called again.
func (a *Adapter) DecodeChatStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return &stream{body: body, r: sse.NewReader(body, maxEvent), info: info, created: time.Now().Unix()}
}

type stream struct {
	body    io.ReadCloser
	r       *sse.Reader
	info    *provider.StreamInfo
	id      string
	created int64

	started    [maxCandidates]bool // role sent, per candidate
	calls      [maxCandidates]int  // tool calls sent, per candidate
	finished   bool                // a finishReason arrived
	gotUsage   bool
	ended      bool // the usage chunk (if any) was sent: only EOF remains
	llm.Sticky      // Next after a failure fails the same way

	chunk llm.ChatChunk
}

var errorPrefix = []byte(`{"error"`)

// Next is next with its failure made final (llm.Sticky).
func (s *stream) Next() (sse.Event, error) { return s.Sticky.Next(s.next) }

func (s *stream) next() (sse.Event, error) {
	for {
		if s.ended {
			return sse.Event{}, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return s.end()
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an oversized stream event", err)
			}
			return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", err)
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if bytes.HasPrefix(data, errorPrefix) || data[0] == '[' {
			return sse.Event{}, streamError(data)
		}
		var g genResponse
		if err := json.Unmarshal(data, &g); err != nil {
			return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an invalid stream event", err)
		}
		out, ok, err := s.translate(&g)
		if err != nil {
			return sse.Event{}, err
		}
		if ok {
			return sse.Event{Data: out}, nil
		}
	}
}

// end is the body's end: the usage chunk then EOF after a finishReason, a
// truncation error before one.
func (s *stream) end() (sse.Event, error) {
	s.ended = true
	if !s.finished {
		return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream ended before a finish reason")
	}
	if s.info.HideUsage || !s.gotUsage {
		return sse.Event{}, io.EOF
	}
	u := s.info.Usage
	s.chunk = llm.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.info.Model, Choices: []llm.ChunkChoice{}, Usage: &u}
	b, err := s.encode()
	return sse.Event{Data: b}, err
}

// translate turns one event into a chunk; ok is false when it carries
// nothing for the client.
func (s *stream) translate(g *genResponse) (out []byte, ok bool, err error) {
	if g.UsageMetadata != nil {
		s.info.Usage = g.UsageMetadata.usage()
		s.gotUsage = true
	}
	if s.info.Model == "" {
		s.info.Model = g.ModelVersion
	}
	if s.id == "" {
		s.id = completionID(g.ResponseID)
	}
	if len(g.Candidates) == 0 {
		if g.PromptFeedback != nil && g.PromptFeedback.BlockReason != "" {
			return nil, false, blocked(g.PromptFeedback)
		}
		return nil, false, nil
	}
	model := g.ModelVersion
	if model == "" {
		model = s.info.Model
	}
	s.chunk = llm.ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: model, Choices: s.chunk.Choices[:0]}
	for i, c := range g.Candidates {
		idx := c.Index
		if idx == 0 {
			idx = i
		}
		if idx < 0 || idx >= maxCandidates {
			return nil, false, apierr.Newf(apierr.UpstreamError, "upstream_bad_response", "the provider sent candidate index %d", idx)
		}
		text, calls := message(c.Content.Parts, s.calls[idx])
		for j := range calls {
			k := s.calls[idx] + j
			calls[j].Index = &k
			s.info.AddToolCall(idx, k, calls[j].ID, calls[j].Function.Name, calls[j].Function.Arguments)
		}
		s.calls[idx] += len(calls)
		fr := finishReason(c.FinishReason, s.calls[idx] > 0)
		if text == "" && len(calls) == 0 && fr == "" && s.started[idx] {
			continue
		}
		ch := llm.ChunkChoice{Index: idx, Delta: llm.Delta{ToolCalls: calls}}
		if !s.started[idx] {
			s.started[idx] = true
			ch.Delta.Role = "assistant"
		}
		if text != "" || (ch.Delta.Role != "" && len(calls) == 0) {
			ch.Delta.Content = &text
		}
		if fr != "" {
			ch.FinishReason = &fr
			s.finished = true
		}
		s.chunk.Choices = append(s.chunk.Choices, ch)
	}
	if len(s.chunk.Choices) == 0 {
		return nil, false, nil
	}
	out, err = s.encode()
	return out, err == nil, err
}

func (s *stream) encode() ([]byte, error) {
	b, err := json.Marshal(&s.chunk)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode a stream chunk", err)
	}
	return b, nil
}

func (s *stream) Close() error { return s.body.Close() }

// streamError turns an in-stream error object into an UpstreamError.
func streamError(data []byte) error {
	b := parseError(data)
	msg := "the provider reported an error mid-stream"
	if b.Error.Message != "" {
		msg += ": " + apierr.Redact(b.Error.Message)
	}
	return apierr.New(apierr.UpstreamError, "upstream_stream_error", msg)
}
