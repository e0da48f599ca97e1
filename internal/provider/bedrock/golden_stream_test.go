package bedrock_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// This file holds the stream half of TestGolden: stream.json, encoded into
// event stream frames, and want_events.json.

// streamFile is stream.json: what Bedrock sends, one entry per message.
type streamFile struct {
	Messages []streamMessage `json:"messages"`
	// CutMidFrame appends the first half of one more frame, as a connection
	// dropped mid-message leaves it.
	CutMidFrame bool `json:"cut_mid_frame,omitempty"`
}

// streamMessage is one event stream message: an event (Event names its
// :event-type) or an exception (Exception names its :exception-type).
type streamMessage struct {
	Event     string          `json:"event,omitempty"`
	Exception string          `json:"exception,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

// encodeMessage encodes m as Bedrock frames it.
func encodeMessage(t testing.TB, enc *eventstream.Encoder, w io.Writer, m streamMessage) {
	var hs eventstream.Headers
	if m.Exception != "" {
		hs.Set(":exception-type", eventstream.StringValue(m.Exception))
		hs.Set(":content-type", eventstream.StringValue("application/json"))
		hs.Set(":message-type", eventstream.StringValue("exception"))
	} else {
		hs.Set(":event-type", eventstream.StringValue(m.Event))
		hs.Set(":content-type", eventstream.StringValue("application/json"))
		hs.Set(":message-type", eventstream.StringValue("event"))
	}
	var payload bytes.Buffer
	if err := json.Compact(&payload, m.Payload); err != nil {
		t.Fatalf("stream.json: payload of %s%s: %v", m.Event, m.Exception, err)
	}
	if err := enc.Encode(w, eventstream.Message{Headers: hs, Payload: payload.Bytes()}); err != nil {
		t.Fatal(err)
	}
}

func encodeStream(t testing.TB, b []byte) []byte {
	var f streamFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("stream.json: %v", err)
	}
	enc := eventstream.NewEncoder()
	var out bytes.Buffer
	for _, m := range f.Messages {
		encodeMessage(t, enc, &out, m)
	}
	if f.CutMidFrame {
		var last bytes.Buffer
		encodeMessage(t, enc, &last, streamMessage{Event: "contentBlockDelta", Payload: json.RawMessage(`{"contentBlockIndex":0,"delta":{"text":" and then the connection dropped"}}`)})
		out.Write(last.Bytes()[:last.Len()/2])
	}
	return out.Bytes()
}

// events is want_events.json.
type events struct {
	// Chunks are the relayed chunks, id and created replaced.
	Chunks []json.RawMessage `json:"chunks"`
	End    goldentest.End    `json:"end"`
	// Choices is what a client assembles from the deltas.
	Choices []goldentest.Choice `json:"choices"`
	Info    goldentest.Info     `json:"info"`
}

// relay decodes the stream as the proxy does and checks what the test knows
// without the golden file: every chunk has one id and one created; a
// usage-only chunk comes last and only when usage is not hidden; after EOF
// Next keeps returning EOF; tool call arguments are valid JSON once
// concatenated.
func relay(t *testing.T, a *bedrock.Adapter, body io.ReadCloser, si provider.StreamInfo) events {
	t.Helper()
	st := a.DecodeChatStream(body, &si)
	defer st.Close()
	var ev events
	var id, created json.RawMessage
	ev.End = goldentest.Drain(t, st, func(e sse.Event) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatalf("chunk %q is not JSON: %v", e.Data, err)
		}
		if id == nil {
			id, created = m["id"], m["created"]
		} else if !bytes.Equal(id, m["id"]) || !bytes.Equal(created, m["created"]) {
			t.Errorf("chunk id/created %s/%s differ from the first chunk's %s/%s", m["id"], m["created"], id, created)
		}
		ev.Chunks = append(ev.Chunks, normalizeCompletion(t, e.Data, "chat.completion.chunk"))
	})
	for i, c := range ev.Chunks {
		var ch struct {
			Usage   *llm.Usage `json:"usage"`
			Choices []struct{} `json:"choices"`
		}
		goldentest.MustUnmarshal(t, "chunk", c, &ch)
		if ch.Usage != nil {
			if si.HideUsage || i != len(ev.Chunks)-1 || len(ch.Choices) != 0 {
				t.Errorf("chunk %d carries usage: want a usage-only chunk, last, only when usage is not hidden", i)
			}
		}
	}
	ev.Info = goldentest.InfoOf(&si)
	ev.Choices = goldentest.Assemble(t, ev.Chunks, ev.End.EOF)
	goldentest.CheckToolCalls(t, ev.Info, ev.Chunks)
	return ev
}
