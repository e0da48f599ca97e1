package goldentest

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// End is how a decoded stream ended, as want_events.json records it.
type End struct {
	EOF   bool      `json:"eof,omitempty"`
	Error *ErrorOut `json:"error,omitempty"`
}

// Drain reads st to its end as the proxy does, handing each event to each,
// and checks that Next after the end ends the same way again.
func Drain(t *testing.T, st llm.Stream, each func(sse.Event)) End {
	t.Helper()
	for {
		e, err := st.Next()
		if err == nil {
			each(e)
			continue
		}
		_, again := st.Next()
		if errors.Is(err, io.EOF) {
			if !errors.Is(again, io.EOF) {
				t.Errorf("Next after the end: got %v, want io.EOF", again)
			}
			return End{EOF: true}
		}
		if again != err && !errors.Is(again, err) {
			t.Errorf("Next after the error: got %v, want %v again", again, err)
		}
		return End{Error: ErrorOf(err)}
	}
}

// Info is the final provider.StreamInfo, as want_events.json records it.
type Info struct {
	HideUsage bool           `json:"hide_usage"`
	Model     string         `json:"model"`
	Usage     llm.Usage      `json:"usage"`
	ToolCalls []InfoToolCall `json:"tool_calls,omitempty"`
}

// InfoToolCall is a provider.ToolCall as want_events.json records it.
type InfoToolCall struct {
	Choice    int    `json:"choice"`
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// InfoOf is si as want_events.json records it.
func InfoOf(si *provider.StreamInfo) Info {
	out := Info{HideUsage: si.HideUsage, Model: si.Model, Usage: si.Usage}
	for _, tc := range si.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, InfoToolCall{Choice: tc.Choice, Index: tc.Index, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)})
	}
	return out
}

// CheckToolCalls checks that the tool calls the stream recorded in its
// StreamInfo are those a client assembles from the chunks it relayed: same
// choices, indexes, ids, names and arguments, in the order they began.
func CheckToolCalls(t *testing.T, info Info, chunks []json.RawMessage) {
	t.Helper()
	var want []InfoToolCall
	type key struct{ choice, index int }
	order := map[key]int{}
	for _, raw := range chunks {
		// Order of first appearance, across choices.
		var c chunk
		if json.Unmarshal(raw, &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					continue
				}
				if _, ok := order[key{ch.Index, *d.Index}]; !ok {
					order[key{ch.Index, *d.Index}] = len(order)
					want = append(want, InfoToolCall{Choice: ch.Index, Index: *d.Index})
				}
			}
		}
	}
	for _, c := range Assemble(t, chunks, false) {
		for _, tc := range c.ToolCalls {
			w := &want[order[key{c.Index, tc.Index}]]
			w.ID, w.Name, w.Arguments = tc.ID, tc.Name, tc.Arguments
		}
	}
	if diff := cmp.Diff(want, info.ToolCalls, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("StreamInfo.ToolCalls: got != what a client assembles from the relayed chunks (-client +info):\n%s", diff)
	}
}

// Choice is what a client assembles of one choice from a stream's chunks.
type Choice struct {
	Index        int        `json:"index"`
	Role         string     `json:"role,omitempty"`
	Content      string     `json:"content"`
	FinishReason string     `json:"finish_reason,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is one assembled tool call.
type ToolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chunk is the part of a chat.completion.chunk Assemble reads.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// Assemble concatenates the chunks' deltas as a client does: role, content,
// finish reason and tool calls per choice (by index, in order), each tool
// call's name and arguments concatenated. A chunk that is not JSON, or a
// tool call delta without an index, fails the test. With complete (the
// stream ended cleanly), every tool call's arguments must be valid JSON.
func Assemble(t *testing.T, chunks []json.RawMessage, complete bool) []Choice {
	t.Helper()
	byIndex := map[int]*Choice{}
	for i, raw := range chunks {
		var c chunk
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Errorf("chunk %d is not a chat.completion.chunk: %v", i, err)
			continue
		}
		for _, ch := range c.Choices {
			out := byIndex[ch.Index]
			if out == nil {
				out = &Choice{Index: ch.Index}
				byIndex[ch.Index] = out
			}
			if ch.Delta.Role != "" {
				out.Role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				out.Content += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				out.FinishReason = *ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Errorf("chunk %d: tool call delta without index: %s", i, raw)
					continue
				}
				k := slices.IndexFunc(out.ToolCalls, func(tc ToolCall) bool { return tc.Index == *d.Index })
				if k < 0 {
					out.ToolCalls = append(out.ToolCalls, ToolCall{Index: *d.Index})
					k = len(out.ToolCalls) - 1
				}
				tc := &out.ToolCalls[k]
				if d.ID != "" {
					tc.ID = d.ID
				}
				if d.Type != "" {
					tc.Type = d.Type
				}
				tc.Name += d.Function.Name
				tc.Arguments += d.Function.Arguments
			}
		}
	}
	out := make([]Choice, 0, len(byIndex))
	for _, c := range byIndex {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	if complete {
		for _, c := range out {
			for _, tc := range c.ToolCalls {
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("choice %d tool call %d: arguments %q are not valid JSON once concatenated", c.Index, tc.Index, tc.Arguments)
				}
			}
		}
	}
	return out
}
