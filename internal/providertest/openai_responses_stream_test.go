package providertest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/svc-gateway/svc/internal/providertest"
)

var (
	textEvents = []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	callEvents = []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
)

// streamed is what a Responses stream brought.
type streamed struct {
	types     []string
	deltas    strings.Builder // output_text or function_call_arguments deltas
	completed *responses.Response
	acc       responses.ResponseAccumulator
}

// drain reads stream to its end; every event goes through the SDK's
// ResponseAccumulator too, which checks their indices and fields.
func drain(t *testing.T, stream *ssestream.Stream[responses.ResponseStreamEventUnion]) (*streamed, error) {
	t.Helper()
	var got streamed
	var itemID string // of the output item
	for stream.Next() {
		e := stream.Current()
		if e.SequenceNumber != int64(len(got.types)) {
			t.Errorf("event %d (%s): sequence_number %d", len(got.types), e.Type, e.SequenceNumber)
		}
		got.types = append(got.types, e.Type)
		switch e.Type {
		case "response.output_item.added":
			itemID = e.Item.ID
		case "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
			"response.function_call_arguments.delta", "response.function_call_arguments.done":
			if e.ItemID != itemID || e.OutputIndex != 0 || e.ContentIndex != 0 {
				t.Errorf("%s: item %q output_index %d content_index %d, want item %q and 0, 0", e.Type, e.ItemID, e.OutputIndex, e.ContentIndex, itemID)
			}
		}
		switch e.Type {
		case "response.output_text.delta", "response.function_call_arguments.delta":
			got.deltas.WriteString(e.Delta)
		case "response.completed":
			r := e.AsResponseCompleted().Response
			got.completed = &r
		}
		var ev responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(e.RawJSON()), &ev); err != nil {
			t.Fatalf("event %s: %v", e.RawJSON(), err)
		}
		if err := got.acc.AddEvent(ev); err != nil {
			t.Errorf("accumulator refused %s: %v", e.RawJSON(), err)
		}
	}
	return &got, stream.Err()
}

func TestResponsesStream(t *testing.T) {
	_, rs := newResponsesClient(t)
	ctx := context.Background()
	chunks := option.WithHeader(providertest.HeaderChunks, "3")

	t.Run("text", func(t *testing.T) {
		got, err := drain(t, rs.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("Hello there.")},
			chunks, option.WithHeader(providertest.HeaderReasoningTokens, "2")))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.types, textEvents) {
			t.Errorf("events:\ngot  %v\nwant %v", got.types, textEvents)
		}
		if got.deltas.String() != providertest.DefaultReply {
			t.Errorf("deltas: got %q, want the reply", got.deltas.String())
		}
		r := got.completed
		if r == nil || r.Status != "completed" || r.OutputText() != providertest.DefaultReply || r.Model != "gpt-4.1-mini" {
			t.Fatalf("response.completed: got %+v", r)
		}
		if want := int64(len("Hello there.") / 4); r.Usage.InputTokens != want || r.Usage.OutputTokensDetails.ReasoningTokens != 2 ||
			r.Usage.OutputTokens != int64(len(providertest.DefaultReply)/4+2) {
			t.Errorf("usage: got %s", r.Usage.RawJSON())
		}
		snap := got.acc.Snapshot()
		if snap.TerminalEvent != "response.completed" || snap.ResponseID != r.ID || snap.OutputText() != providertest.DefaultReply {
			t.Errorf("accumulator: got terminal %q id %q text %q", snap.TerminalEvent, snap.ResponseID, snap.OutputText())
		}
		if rebuilt, err := got.acc.ReconstructedResponse(); err != nil || rebuilt.OutputText() != providertest.DefaultReply {
			t.Errorf("reconstructed: got %v, %v", rebuilt, err)
		}
		// The streamed response is stored as completed.
		kept, err := rs.Get(ctx, r.ID, responses.ResponseGetParams{})
		if err != nil || kept.OutputText() != providertest.DefaultReply || kept.Status != "completed" {
			t.Errorf("GET: got %v, %v", kept, err)
		}
	})

	t.Run("function call round trip", func(t *testing.T) {
		got, err := drain(t, rs.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("Weather in Paris?"),
			Tools: []responses.ToolUnionParam{weatherTool()}}, chunks))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.types, callEvents) {
			t.Errorf("events:\ngot  %v\nwant %v", got.types, callEvents)
		}
		if got.deltas.String() != weatherArgs {
			t.Errorf("argument deltas: got %q, want %q", got.deltas.String(), weatherArgs)
		}
		snap := got.acc.Snapshot()
		if len(snap.Output) != 1 || snap.Output[0].Type != "function_call" || snap.Output[0].Name != "get_weather" || snap.Output[0].Arguments != weatherArgs {
			t.Fatalf("accumulator: got %+v", snap.Output)
		}
		callID := snap.Output[0].CallID
		if got.completed == nil || got.completed.Output[0].CallID != callID || !strings.HasPrefix(callID, "call_") {
			t.Fatalf("response.completed: got %+v, want the call %q", got.completed, callID)
		}

		got, err = drain(t, rs.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", PreviousResponseID: openai.String(got.completed.ID),
			Input: itemsInput(callOutput(callID, `{"temp_c":21}`)), Tools: []responses.ToolUnionParam{weatherTool()}}, chunks))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.types, textEvents) || got.deltas.String() != providertest.DefaultReply {
			t.Errorf("after the tool result: got events %v, text %q", got.types, got.deltas.String())
		}
	})

	t.Run("cut", func(t *testing.T) {
		got, err := drain(t, rs.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")},
			chunks, option.WithHeader(providertest.HeaderCutAfter, "1")))
		if err == nil {
			t.Error("a cut stream ended without an error")
		}
		if got.completed != nil || got.acc.Snapshot().TerminalEvent != "" {
			t.Errorf("a cut stream completed: %v", got.types)
		}
	})

	t.Run("error before the stream", func(t *testing.T) {
		_, err := drain(t, rs.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")},
			option.WithHeader(providertest.HeaderStatus, "503")))
		if e := apiError(t, err, http.StatusServiceUnavailable); e.Type != "server_error" {
			t.Errorf("type: got %q, want server_error", e.Type)
		}
	})
}

// sseEvent is one event of a Responses stream on the wire.
type sseEvent struct{ name, data string }

// readTypedEvents reads a stream whose events are each an "event:" line and a
// "data:" line, then a blank line.
func readTypedEvents(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	var events []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var lines []string
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			lines = append(lines, line)
			continue
		}
		name, ok1 := strings.CutPrefix(lines[0], "event: ")
		data, ok2 := "", false
		if len(lines) == 2 {
			data, ok2 = strings.CutPrefix(lines[1], "data: ")
		}
		if !ok1 || !ok2 {
			t.Errorf("event %d: got lines %q, want an event and a data line", len(events), lines)
		}
		events = append(events, sseEvent{name, data})
		lines = nil
	}
	if len(lines) > 0 && sc.Err() == nil {
		t.Errorf("stream ends inside an event: %q", lines)
	}
	return events, sc.Err()
}

func TestResponsesStreamWire(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithChunkDelay(10*time.Millisecond))
	const body = `{"model":"gpt-4.1","stream":true,"input":[{"role":"user","content":"hi"}]}`
	start := time.Now()
	resp := post(t, s.URL()+"/responses", body, map[string]string{providertest.HeaderChunks: "3"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("got %d %q, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, err := readTypedEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 3*10*time.Millisecond {
		t.Errorf("3 deltas 10ms apart took %v", d)
	}
	var names []string
	for i, e := range events {
		var head struct {
			Type           string `json:"type"`
			SequenceNumber *int   `json:"sequence_number"`
		}
		if err := json.Unmarshal([]byte(e.data), &head); err != nil {
			t.Fatalf("event %d: %s: %v", i, e.data, err)
		}
		if head.Type != e.name || head.SequenceNumber == nil || *head.SequenceNumber != i {
			t.Errorf("event %d %q: got type %q, sequence_number %v", i, e.name, head.Type, head.SequenceNumber)
		}
		names = append(names, e.name)
	}
	if !slices.Equal(names, textEvents) {
		t.Errorf("events:\ngot  %v\nwant %v (and no [DONE])", names, textEvents)
	}

	for _, cut := range []int{0, 2, 3} {
		t.Run("cut after "+strconv.Itoa(cut), func(t *testing.T) {
			resp := post(t, s.URL()+"/responses", body, map[string]string{providertest.HeaderChunks: "3", providertest.HeaderCutAfter: strconv.Itoa(cut)})
			events, err := readTypedEvents(t, resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("reading: got %v, want unexpected EOF", err)
			}
			if len(events) != 4+cut || (cut > 0 && events[len(events)-1].name != "response.output_text.delta") {
				t.Errorf("got %d events, want the 4 before the deltas and %d deltas", len(events), cut)
			}
		})
	}

	t.Run("non-stream cut", func(t *testing.T) {
		resp := post(t, s.URL()+"/responses", `{"model":"gpt-4.1","input":"hi"}`, map[string]string{providertest.HeaderCutAfter: "0"})
		b, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) || json.Valid(b) {
			t.Errorf("got %d bytes and %v, want half a body and unexpected EOF", len(b), err)
		}
	})
}
