package providertest

import (
	"encoding/json"
	"net/http"

	"github.com/svc-gateway/svc/internal/llm"
)

// respStream writes a Responses API event stream: "event: <type>" and
// "data: <json>" lines, each event's JSON starting with its type and
// sequence_number (from 0). OpenAI ends this stream with response.completed,
// not with [DONE].
type respStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	seq     int
	b       []byte
}

// send writes one event: typ, then the fields given as name, value pairs.
func (st *respStream) send(typ string, fields ...any) {
	b := append(st.b[:0], "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":"...)
	b = llm.AppendJSONString(b, typ)
	b = append(b, `,"sequence_number":`...)
	b = appendInt(b, st.seq)
	for i := 0; i+1 < len(fields); i += 2 {
		b = append(b, ',')
		b = llm.AppendJSONString(b, fields[i].(string))
		b = append(b, ':')
		v, err := json.Marshal(fields[i+1])
		if err != nil {
			abort()
		}
		b = append(b, v...)
	}
	b = append(b, "}\n\n"...)
	st.b = b
	st.seq++
	if _, err := st.w.Write(b); err != nil {
		abort()
	}
	if st.flusher != nil {
		st.flusher.Flush()
	}
}

// streamResponse answers a stream:true request with the events OpenAI sends
// for o, whose one output item (id itemID) is call's function_call or, when
// call is nil, a message with the reply: response.created,
// response.in_progress, response.output_item.added, then for a message
// response.content_part.added, ctl.chunks response.output_text.delta,
// response.output_text.done and response.content_part.done, for a call
// ctl.chunks response.function_call_arguments.delta and
// response.function_call_arguments.done; then response.output_item.done and
// response.completed. X-Fake-Chunk-Delay paces the deltas and
// X-Fake-Cut-After cuts the connection after that many of them.
func (s *OpenAI) streamResponse(w http.ResponseWriter, r *http.Request, x *exchange, o *respObject, call *toolCall, itemID string) {
	ctl := &x.ctl
	h := w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	st := &respStream{w: w, b: x.out[:0]}
	st.flusher, _ = w.(http.Flusher)
	defer func() { x.out = st.b }()

	start := o.inProgress()
	st.send("response.created", "response", start)
	st.send("response.in_progress", "response", start)

	// delta pauses, or cuts the stream before the i-th delta.
	delta := func(i int) {
		if i == ctl.cutAfter || !s.wait(r.Context(), ctl.chunkDelay) {
			abort()
		}
	}
	if call != nil {
		item := *o.Output[0].(*respFunctionCall)
		item.Status, item.Arguments = "in_progress", ""
		st.send("response.output_item.added", "output_index", 0, "item", &item)
		for i := range ctl.chunks {
			delta(i)
			st.send("response.function_call_arguments.delta", "item_id", itemID, "output_index", 0,
				"delta", piece(call.args, i, ctl.chunks))
		}
		if ctl.cutAfter >= ctl.chunks {
			abort()
		}
		st.send("response.function_call_arguments.done", "item_id", itemID, "name", call.name, "output_index", 0,
			"arguments", call.args)
	} else {
		item := *o.Output[0].(*respMessage)
		item.Status, item.Content = "in_progress", []respText{}
		st.send("response.output_item.added", "output_index", 0, "item", &item)
		empty := outputText("")
		st.send("response.content_part.added", "item_id", itemID, "output_index", 0, "content_index", 0, "part", empty)
		for i := range ctl.chunks {
			delta(i)
			st.send("response.output_text.delta", "item_id", itemID, "output_index", 0, "content_index", 0,
				"delta", piece(ctl.reply, i, ctl.chunks), "logprobs", empty.Logprobs)
		}
		if ctl.cutAfter >= ctl.chunks {
			abort()
		}
		st.send("response.output_text.done", "item_id", itemID, "output_index", 0, "content_index", 0,
			"text", ctl.reply, "logprobs", empty.Logprobs)
		st.send("response.content_part.done", "item_id", itemID, "output_index", 0, "content_index", 0,
			"part", outputText(ctl.reply))
	}
	st.send("response.output_item.done", "output_index", 0, "item", o.Output[0])
	st.send("response.completed", "response", o)
}
