package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// This file holds the stream half of TestGolden: want_events.json and the
// checks on a relayed stream.

// events is want_events.json: what DecodeChatStream relayed.
type events struct {
	Events []event `json:"events"`
	// Dropped are the upstream events (by index in stream.sse) before the
	// end of the stream that were not relayed.
	Dropped []int          `json:"dropped"`
	End     goldentest.End `json:"end"`
	// Choices is what a client assembles from the relayed deltas.
	Choices []goldentest.Choice `json:"choices"`
	Info    goldentest.Info     `json:"info"`
}

type event struct {
	Upstream int             `json:"upstream"` // index of the event in stream.sse
	Event    string          `json:"event,omitempty"`
	Data     json.RawMessage `json:"data"`
}

// upstreamEvent is one event of stream.sse, read independently of the adapter.
type upstreamEvent struct {
	event string
	data  []byte
}

func readEvents(t *testing.T, b []byte) []upstreamEvent {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b), 0)
	var out []upstreamEvent
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("stream.sse: %v", err)
		}
		out = append(out, upstreamEvent{event: ev.Event, data: bytes.Clone(ev.Data)})
	}
}

// chunk is the part of a chat.completion.chunk the test reads.
type chunk struct {
	Model   string          `json:"model"`
	Usage   *llm.Usage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Choices []struct{}      `json:"choices"`
}

// relay decodes the stream as the proxy does, and checks what the test can
// know without the golden file: relayed events are the provider's, byte for
// byte and in order; only usage-only chunks are dropped, and only when
// hideUsage; usage and model are recorded from the provider's chunks.
func relay(t *testing.T, a *openai.Adapter, body io.ReadCloser, hideUsage bool, sseBytes []byte) events {
	t.Helper()
	ups := readEvents(t, sseBytes)

	// The test's own account of the stream: where it ends, what usage and
	// model it carries, which chunks are usage-only.
	stop, usageOnly := len(ups), map[int]bool{}
	var wantInfo goldentest.Info
	wantInfo.HideUsage = hideUsage
	for i, u := range ups {
		if string(bytes.TrimSpace(u.data)) == "[DONE]" {
			stop = i
			break
		}
		var c chunk
		if err := json.Unmarshal(u.data, &c); err != nil {
			continue
		}
		if c.Error != nil {
			stop = i
			break
		}
		if wantInfo.Model == "" {
			wantInfo.Model = c.Model
		}
		if c.Usage != nil {
			wantInfo.Usage = *c.Usage
			usageOnly[i] = len(c.Choices) == 0
		}
	}

	info := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(body, info)
	defer st.Close()
	var ev events
	next := 0
	ev.End = goldentest.Drain(t, st, func(e sse.Event) {
		data := bytes.Clone(e.Data)
		i := next
		for i < len(ups) && (ups[i].event != e.Event || !bytes.Equal(ups[i].data, data)) {
			i++
		}
		if i == len(ups) {
			t.Fatalf("relayed event %q is not the provider's next event (byte for byte, in order)", data)
		}
		for j := next; j < i; j++ {
			ev.Dropped = append(ev.Dropped, j)
		}
		next = i + 1
		d := json.RawMessage(data)
		if !json.Valid(d) {
			d, _ = json.Marshal(string(data))
		}
		ev.Events = append(ev.Events, event{Upstream: i, Event: e.Event, Data: d})
	})
	for j := next; j < stop; j++ {
		ev.Dropped = append(ev.Dropped, j)
	}
	if ev.Dropped == nil {
		ev.Dropped = []int{}
	}

	var wantDropped []int
	for i := range stop {
		if hideUsage && usageOnly[i] {
			wantDropped = append(wantDropped, i)
		}
	}
	if wantDropped == nil {
		wantDropped = []int{}
	}
	if diff := cmp.Diff(wantDropped, ev.Dropped); diff != "" {
		t.Errorf("dropped events (hide_usage=%v): got %v, want %v (only usage-only chunks, only when hiding)", hideUsage, ev.Dropped, wantDropped)
	}
	ev.Info = goldentest.InfoOf(info)
	gotInfo := ev.Info
	gotInfo.ToolCalls = nil // CheckToolCalls, below
	if diff := cmp.Diff(wantInfo, gotInfo); diff != "" {
		t.Errorf("StreamInfo: got != want, the provider's usage and first model (-want +got):\n%s", diff)
	}
	chunks := make([]json.RawMessage, len(ev.Events))
	for i, e := range ev.Events {
		chunks[i] = e.Data
	}
	ev.Choices = goldentest.Assemble(t, chunks, ev.End.EOF)
	goldentest.CheckToolCalls(t, ev.Info, chunks)
	return ev
}
