package cache

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// replay is a cached answer served as a stream: the events are made up front
// (an answer is bounded by MaxEntryBytes), then handed out one by one.
type replay struct {
	events [][]byte
	i      int
}

func (r *replay) Next() (sse.Event, error) {
	if r.i >= len(r.events) {
		return sse.Event{}, io.EOF
	}
	ev := sse.Event{Data: r.events[r.i]}
	r.i++
	return ev, nil
}

func (r *replay) Close() error { r.i = len(r.events); return nil }

// replayStream turns a chat.completion body into the chunks a provider would
// have streamed for it: per choice a role chunk, the content, the tool calls
// and a finish chunk; then the usage chunk when the caller asked for it. The
// writer adds the final [DONE].
func replayStream(body []byte, includeUsage bool) (llm.Stream, error) {
	var resp llm.ChatResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, err
	}
	base := llm.ChatChunk{ID: resp.ID, Object: "chat.completion.chunk", Created: resp.Created, Model: resp.Model}
	var events [][]byte
	add := func(c llm.ChatChunk) error {
		b, err := json.Marshal(&c)
		if err != nil {
			return err
		}
		events = append(events, b)
		return nil
	}
	for _, ch := range resp.Choices {
		empty := ""
		role := ch.Message.Role
		if role == "" {
			role = "assistant"
		}
		chunk := base
		chunk.Choices = []llm.ChunkChoice{{Index: ch.Index, Delta: llm.Delta{Role: role, Content: &empty}}}
		if err := add(chunk); err != nil {
			return nil, err
		}
		if text := ch.Message.Content.String(); text != "" {
			chunk.Choices = []llm.ChunkChoice{{Index: ch.Index, Delta: llm.Delta{Content: &text}}}
			if err := add(chunk); err != nil {
				return nil, err
			}
		}
		if ch.Message.Refusal != "" {
			r := ch.Message.Refusal
			chunk.Choices = []llm.ChunkChoice{{Index: ch.Index, Delta: llm.Delta{Refusal: &r}}}
			if err := add(chunk); err != nil {
				return nil, err
			}
		}
		if len(ch.Message.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(ch.Message.ToolCalls))
			for i, tc := range ch.Message.ToolCalls {
				i := i
				tc.Index = &i
				calls[i] = tc
			}
			chunk.Choices = []llm.ChunkChoice{{Index: ch.Index, Delta: llm.Delta{ToolCalls: calls}}}
			if err := add(chunk); err != nil {
				return nil, err
			}
		}
		finish := ch.FinishReason
		if finish == "" {
			finish = "stop"
		}
		chunk.Choices = []llm.ChunkChoice{{Index: ch.Index, FinishReason: &finish}}
		if err := add(chunk); err != nil {
			return nil, err
		}
	}
	if includeUsage && resp.Usage != nil {
		chunk := base
		chunk.Choices = []llm.ChunkChoice{}
		chunk.Usage = resp.Usage
		if err := add(chunk); err != nil {
			return nil, err
		}
	}
	return &replay{events: events}, nil
}

// assembler rebuilds a chat.completion from the chunks of a stream as they
// pass, so that a streamed answer can be stored once it completed. It holds
// at most MaxEntryBytes of text; past that (or on a chunk it cannot read) it
// gives up and the answer is not stored.
type assembler struct {
	id, model string
	created   int64
	choices   []*assembledChoice
	usage     *llm.Usage
	size      int
	failed    bool
}

type assembledChoice struct {
	role    string
	content strings.Builder
	refusal strings.Builder
	calls   []llm.ToolCall
	finish  string
}

// add takes one event of the stream.
func (a *assembler) add(ev sse.Event) {
	if a.failed {
		return
	}
	if ev.Event != "" {
		a.failed = true // not a plain chunk
		return
	}
	a.size += len(ev.Data)
	if a.size > MaxEntryBytes {
		a.failed = true
		a.choices = nil
		return
	}
	var c llm.ChatChunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		a.failed = true
		return
	}
	if a.id == "" {
		a.id, a.model, a.created = c.ID, c.Model, c.Created
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for _, cc := range c.Choices {
		if cc.Index < 0 || cc.Index > 16 {
			a.failed = true
			return
		}
		for len(a.choices) <= cc.Index {
			a.choices = append(a.choices, &assembledChoice{})
		}
		ch := a.choices[cc.Index]
		d := cc.Delta
		if d.Role != "" {
			ch.role = d.Role
		}
		if d.Content != nil {
			ch.content.WriteString(*d.Content)
		}
		if d.Refusal != nil {
			ch.refusal.WriteString(*d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			i := len(ch.calls)
			if tc.Index != nil {
				i = *tc.Index
			}
			if i < 0 || i > 128 {
				a.failed = true
				return
			}
			for len(ch.calls) <= i {
				ch.calls = append(ch.calls, llm.ToolCall{})
			}
			call := &ch.calls[i]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			if tc.Function.Name != "" {
				call.Function.Name += tc.Function.Name
			}
			call.Function.Arguments += tc.Function.Arguments
		}
		if cc.FinishReason != nil && *cc.FinishReason != "" {
			ch.finish = *cc.FinishReason
		}
	}
}

// body returns the assembled chat.completion, or nil when the stream cannot
// be stored: it failed, or a choice never finished. usage, when the stream
// did not carry one (the caller did not ask for it), is the usage svc read.
func (a *assembler) body(usage *llm.Usage) []byte {
	if a.failed || len(a.choices) == 0 {
		return nil
	}
	resp := llm.ChatResponse{ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model, Usage: a.usage}
	if resp.Usage == nil && usage != nil && usage.Total() > 0 {
		u := *usage
		resp.Usage = &u
	}
	for i, ch := range a.choices {
		if ch.finish == "" {
			return nil // cut short
		}
		role := ch.role
		if role == "" {
			role = "assistant"
		}
		m := llm.Message{Role: role, Refusal: ch.refusal.String()}
		if ch.content.Len() > 0 || len(ch.calls) == 0 {
			m.Content = llm.TextContent(ch.content.String())
		} else {
			m.Content = llm.Content{Null: true, Present: true}
		}
		for j := range ch.calls {
			ch.calls[j].Index = nil
			if ch.calls[j].Type == "" {
				ch.calls[j].Type = "function"
			}
		}
		m.ToolCalls = ch.calls
		resp.Choices = append(resp.Choices, llm.Choice{Index: i, Message: m, FinishReason: ch.finish})
	}
	b, err := json.Marshal(&resp)
	if err != nil {
		return nil
	}
	return b
}
