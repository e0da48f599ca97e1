package responses

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// Stream event types svc writes.
const (
	EventCreated      = "response.created"
	EventInProgress   = "response.in_progress"
	EventItemAdded    = "response.output_item.added"
	EventItemDone     = "response.output_item.done"
	EventPartAdded    = "response.content_part.added"
	EventPartDone     = "response.content_part.done"
	EventTextDelta    = "response.output_text.delta"
	EventTextDone     = "response.output_text.done"
	EventRefusalDelta = "response.refusal.delta"
	EventRefusalDone  = "response.refusal.done"
	EventArgsDelta    = "response.function_call_arguments.delta"
	EventArgsDone     = "response.function_call_arguments.done"
	EventCompleted    = "response.completed"
	EventIncomplete   = "response.incomplete"
	EventFailed       = "response.failed"
	EventError        = "error"
)

// Terminal reports whether an event type ends a response stream.
func Terminal(typ string) bool {
	return typ == EventCompleted || typ == EventIncomplete || typ == EventFailed
}

// event is one stream event; only the fields of its type are set.
type event struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *Response       `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Item           *Item           `json:"item,omitempty"`
	Part           *Part           `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Refusal        *string         `json:"refusal,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Name           string          `json:"name,omitempty"`
	Logprobs       json.RawMessage `json:"logprobs,omitempty"`
}

var noLogprobs = json.RawMessage("[]")

// Translate turns a stream of chat completion chunks (what every adapter's
// DecodeChatStream yields) into the Responses API's events for resp, a
// Frame: response.created and response.in_progress first; an output item
// per message and per function call, with their part, text, refusal and
// argument deltas and their done events; response.completed (or
// response.incomplete) last, carrying the whole response with its usage.
// The stream must have been asked for usage (ToChat does so). done, when
// set, sees the final response before its terminal event is returned (the
// proxy keeps its record then, so a follow-up can name it at once). A
// failure of chat ends the stream with that failure, which the HTTP surface
// writes as the API's error event (ErrorEvent).
//
// Memory grows with the answer's text (the done events and the final
// response repeat it, as the API defines); nothing else is buffered.
func Translate(chat llm.Stream, resp *Response, done func(*Response)) llm.Stream {
	return &translator{chat: chat, resp: resp, done: done, lastIdx: -1}
}

// translator is Translate's stream.
type translator struct {
	llm.Sticky
	chat    llm.Stream
	resp    *Response
	done    func(*Response)
	seq     int
	queue   []sse.Event
	started bool
	ended   bool
	// msg is the output index of the open message item (when hasMsg),
	// part the kind of its open part, parts its count of parts and buf
	// the open part's text.
	msg    int
	hasMsg bool
	part   string
	parts  int
	buf    strings.Builder
	// inCall: a function_call item is open, callIdx its chat tool-call
	// index, callOut its output index, args its arguments so far;
	// lastIdx is the highest chat index seen (-1: none).
	inCall           bool
	callIdx, callOut int
	lastIdx          int
	args             strings.Builder
	reason           string
	usage            *llm.Usage
	model            string
}

// Next returns the next event.
func (t *translator) Next() (sse.Event, error) { return t.Sticky.Next(t.next) }

func (t *translator) next() (sse.Event, error) {
	for len(t.queue) == 0 {
		if t.ended {
			return sse.Event{}, io.EOF
		}
		if err := t.pull(); err != nil {
			return sse.Event{}, err
		}
	}
	ev := t.queue[0]
	t.queue = t.queue[1:]
	return ev, nil
}

// pull reads one chunk (or starts, or ends) and queues its events.
func (t *translator) pull() error {
	if !t.started {
		t.started = true
		t.emit(event{Type: EventCreated, Response: t.resp})
		t.emit(event{Type: EventInProgress, Response: t.resp})
		return nil
	}
	ev, err := t.chat.Next()
	if errors.Is(err, io.EOF) {
		t.end()
		return nil
	}
	if err != nil {
		return err
	}
	var c llm.ChatChunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return apierr.Wrap(apierr.UpstreamError, "bad_upstream_stream", "the provider's stream could not be read", err)
	}
	if c.Usage != nil {
		t.usage = c.Usage
	}
	if c.Model != "" {
		t.model = c.Model
	}
	for _, ch := range c.Choices {
		if ch.Index == 0 {
			t.choice(&ch)
		}
	}
	return nil
}

// choice queues the events of the first choice's delta.
func (t *translator) choice(ch *llm.ChunkChoice) {
	d := ch.Delta
	if d.Content != nil && *d.Content != "" {
		t.text(PartOutputText, *d.Content)
	}
	if d.Refusal != nil && *d.Refusal != "" {
		t.text(PartRefusal, *d.Refusal)
	}
	for i, tc := range d.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		t.call(idx, tc)
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		t.reason = *ch.FinishReason
	}
}

// text appends a text or refusal delta to the open message, opening the
// message and the part as needed.
func (t *translator) text(kind, delta string) {
	if !t.hasMsg {
		t.closeCall()
		t.hasMsg, t.msg, t.parts, t.part = true, len(t.resp.Output), 0, ""
		item := Item{Type: TypeMessage, ID: NewID("msg_"), Status: "in_progress", Role: "assistant", Content: &Content{IsParts: true, Parts: []Part{}}}
		t.resp.Output = append(t.resp.Output, item)
		t.emit(event{Type: EventItemAdded, OutputIndex: &t.msg, Item: &item})
	}
	if t.part != kind {
		t.closePart()
		t.part = kind
		empty := ""
		p := Part{Type: kind, Text: &empty, Annotations: noLogprobs}
		if kind == PartRefusal {
			p = Part{Type: kind, Refusal: &empty}
		}
		t.emit(event{Type: EventPartAdded, OutputIndex: &t.msg, ItemID: t.resp.Output[t.msg].ID, ContentIndex: &t.parts, Part: &p})
	}
	t.buf.WriteString(delta)
	typ, lp := EventTextDelta, noLogprobs
	if kind == PartRefusal {
		typ, lp = EventRefusalDelta, nil
	}
	t.emit(event{Type: typ, OutputIndex: &t.msg, ItemID: t.resp.Output[t.msg].ID, ContentIndex: &t.parts, Delta: &delta, Logprobs: lp})
}

// closePart ends the message's open part.
func (t *translator) closePart() {
	if t.part == "" {
		return
	}
	s := t.buf.String()
	t.buf.Reset()
	p := Part{Type: t.part, Text: &s, Annotations: noLogprobs}
	done := event{Type: EventTextDone, Text: &s, Logprobs: noLogprobs}
	if t.part == PartRefusal {
		p = Part{Type: t.part, Refusal: &s}
		done = event{Type: EventRefusalDone, Refusal: &s}
	}
	id := t.resp.Output[t.msg].ID
	done.OutputIndex, done.ItemID, done.ContentIndex = &t.msg, id, &t.parts
	t.emit(done)
	t.emit(event{Type: EventPartDone, OutputIndex: &t.msg, ItemID: id, ContentIndex: &t.parts, Part: &p})
	item := &t.resp.Output[t.msg]
	item.Content.Parts = append(item.Content.Parts, p)
	t.parts++
	t.part = ""
}

// closeMessage ends the open message item.
func (t *translator) closeMessage() {
	if !t.hasMsg {
		return
	}
	t.closePart()
	item := &t.resp.Output[t.msg]
	item.Status = "completed"
	done := *item
	t.emit(event{Type: EventItemDone, OutputIndex: &t.msg, Item: &done})
	t.hasMsg = false
}

// call appends a tool-call delta, opening its function_call item first.
// Chat numbers a turn's calls in order and streams them one after another,
// so a new index ends the open call (as OpenAI's own streams order their
// events), and a piece of a call already closed is not relayed.
func (t *translator) call(idx int, tc llm.ToolCall) {
	if !t.inCall || idx != t.callIdx {
		if idx <= t.lastIdx {
			return
		}
		t.closeMessage()
		t.closeCall()
		t.inCall, t.callIdx, t.lastIdx, t.callOut = true, idx, idx, len(t.resp.Output)
		t.args.Reset()
		empty := ""
		item := Item{Type: TypeFunctionCall, ID: NewID("fc_"), Status: "in_progress", CallID: tc.ID, Name: tc.Function.Name, Arguments: &empty}
		t.resp.Output = append(t.resp.Output, item)
		t.emit(event{Type: EventItemAdded, OutputIndex: &t.callOut, Item: &item})
	} else if tc.Function.Name != "" {
		t.resp.Output[t.callOut].Name += tc.Function.Name
	}
	if a := tc.Function.Arguments; a != "" {
		t.args.WriteString(a)
		t.emit(event{Type: EventArgsDelta, OutputIndex: &t.callOut, ItemID: t.resp.Output[t.callOut].ID, Delta: &a})
	}
}

// closeCall ends the open function_call item.
func (t *translator) closeCall() {
	if !t.inCall {
		return
	}
	item := &t.resp.Output[t.callOut]
	args := t.args.String()
	item.Arguments, item.Status = &args, "completed"
	t.emit(event{Type: EventArgsDone, OutputIndex: &t.callOut, ItemID: item.ID, Arguments: &args, Name: item.Name})
	done := *item
	t.emit(event{Type: EventItemDone, OutputIndex: &t.callOut, Item: &done})
	t.inCall = false
}

// end closes every open item and queues the terminal event.
func (t *translator) end() {
	t.closeMessage()
	t.closeCall()
	finish(t.resp, t.reason)
	if t.usage != nil {
		t.resp.Usage = usageOf(t.usage)
	}
	if t.model != "" {
		t.resp.Model = t.model
	}
	if t.done != nil {
		t.done(t.resp)
	}
	typ := EventCompleted
	if t.resp.Status == "incomplete" {
		typ = EventIncomplete
	}
	t.emit(event{Type: typ, Response: t.resp})
	t.ended = true
}

// emit queues ev with the next sequence number, marshalled now (the
// response it may carry changes later).
func (t *translator) emit(ev event) {
	ev.SequenceNumber = t.seq
	t.seq++
	b, err := json.Marshal(ev)
	if err != nil { // only unmarshalable raw JSON echoed from the request could fail
		b = []byte(`{"type":"` + ev.Type + `"}`)
	}
	t.queue = append(t.queue, sse.Event{Event: ev.Type, Data: b})
}

// Close closes the chat stream.
func (t *translator) Close() error { return t.chat.Close() }

// ErrorEvent is the API's error event for a stream that failed after its
// headers: the message safe for the client, with sequence number seq (the
// count of events already sent).
func ErrorEvent(err error, seq int) sse.Event {
	e := apierr.From(err)
	b, _ := json.Marshal(struct {
		Type           string  `json:"type"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
		SequenceNumber int     `json:"sequence_number"`
	}{EventError, e.Code, e.Message, nonEmpty(e.Param), seq})
	return sse.Event{Event: EventError, Data: b}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
