package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/openai"
	"github.com/svc-gateway/svc/internal/responses"
)

// translateChunks is the number of text deltas in each measured stream.
const translateChunks = 100

// translateCase is one provider stream translated to OpenAI chunks by its
// adapter, as svc does for every streamed chat to that provider.
type translateCase struct {
	name   string
	stream []byte
	decode func(io.ReadCloser, *provider.StreamInfo) llm.Stream
}

// runTranslate measures the translation overhead per streamed request: the
// real adapters decoding a typical 100-delta stream from memory (no network),
// OpenAI's passthrough as the reference.
func runTranslate(stdout io.Writer) int {
	cases := translateCases(translateChunks)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stream\tdeltas\tµs/stream\tns/delta\tallocs/stream\tbytes/stream\t\n")
	for _, c := range cases {
		var failure error
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			rd := bytes.NewReader(c.stream)
			for b.Loop() {
				rd.Reset(c.stream)
				if err := drain(c.decode(io.NopCloser(rd), &provider.StreamInfo{Model: "m"})); err != nil {
					failure = err
					b.SkipNow()
				}
			}
		})
		if failure != nil {
			fmt.Fprintf(stdout, "svcbench: %s: %v\n", c.name, failure)
			return 1
		}
		ns := float64(r.NsPerOp())
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%d\t%d\t\n", c.name, translateChunks, ns/1e3, ns/translateChunks, r.AllocsPerOp(), r.AllocedBytesPerOp())
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}

func translateCases(n int) []translateCase {
	return []translateCase{
		{"openai (passthrough)", openAIStream(n), openai.New().DecodeChatStream},
		{"anthropic messages", anthropicStream(n), anthropic.New().DecodeChatStream},
		{"bedrock converse-stream", bedrockStream(n), bedrock.New().DecodeChatStream},
		// The Responses API: relayed from OpenAI's own, or translated from
		// a provider's chat stream (the adapter's translation and then
		// svc's chat → Responses events).
		{"responses: openai (relay)", responsesStream(n), func(b io.ReadCloser, _ *provider.StreamInfo) llm.Stream {
			return responses.Relay(b, func(*responses.Response) {})
		}},
		{"responses: openai chat", openAIStream(n), toResponses(openai.New().DecodeChatStream)},
		{"responses: anthropic", anthropicStream(n), toResponses(anthropic.New().DecodeChatStream)},
	}
}

// toResponses is decode with svc's chat → Responses translation after it.
func toResponses(decode func(io.ReadCloser, *provider.StreamInfo) llm.Stream) func(io.ReadCloser, *provider.StreamInfo) llm.Stream {
	req := &responses.Request{Model: "m", Input: responses.Input{Text: "Say hello."}, Stream: true}
	return func(b io.ReadCloser, info *provider.StreamInfo) llm.Stream {
		return responses.Translate(decode(b, info), responses.Frame(req, "resp_1", 1), func(*responses.Response) {})
	}
}

// responsesStream is a Responses API stream as OpenAI sends it.
func responsesStream(n int) []byte {
	var b strings.Builder
	seq := 0
	ev := func(typ, fields string) {
		b.WriteString("event: " + typ + "\ndata: {\"type\":\"" + typ + "\",\"sequence_number\":" + fmt.Sprint(seq) + fields + "}\n\n")
		seq++
	}
	resp := func(status, usage string) string {
		return `,"response":{"id":"resp_1","object":"response","created_at":1,"status":"` + status + `","model":"gpt-4o-mini","output":[],"usage":` + usage + `}`
	}
	ev("response.created", resp("in_progress", "null"))
	ev("response.in_progress", resp("in_progress", "null"))
	ev("response.output_item.added", `,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}`)
	ev("response.content_part.added", `,"output_index":0,"item_id":"msg_1","content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
	var text strings.Builder
	for i := 0; i < n; i++ {
		s, _ := json.Marshal(delta(i))
		text.WriteString(delta(i))
		ev("response.output_text.delta", `,"output_index":0,"item_id":"msg_1","content_index":0,"delta":`+string(s)+`,"logprobs":[]`)
	}
	all, _ := json.Marshal(text.String())
	ev("response.output_text.done", `,"output_index":0,"item_id":"msg_1","content_index":0,"text":`+string(all)+`,"logprobs":[]`)
	ev("response.output_item.done", `,"output_index":0,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":`+string(all)+`,"annotations":[]}]}`)
	ev("response.completed", resp("completed", `{"input_tokens":20,"output_tokens":100,"total_tokens":120}`))
	return []byte(b.String())
}

func drain(s llm.Stream) error {
	defer s.Close()
	for n := 0; ; n++ {
		if _, err := s.Next(); err != nil {
			if errors.Is(err, io.EOF) && n > 0 {
				return nil
			}
			return fmt.Errorf("after %d events: %w", n, err)
		}
	}
}

// delta is the text of one streamed piece.
func delta(i int) string { return fmt.Sprintf(" word%d", i) }

func openAIStream(n int) []byte {
	var b strings.Builder
	chunk := func(d string) {
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":` + d + `,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	chunk(`{"role":"assistant","content":""}`)
	for i := 0; i < n; i++ {
		s, _ := json.Marshal(delta(i))
		chunk(`{"content":` + string(s) + `}`)
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":100,"total_tokens":120}}` + "\n\ndata: [DONE]\n\n")
	return []byte(b.String())
}

func anthropicStream(n int) []byte {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":20,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			ev("ping", `{"type":"ping"}`)
		}
		s, _ := json.Marshal(delta(i))
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(s)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":100}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

func bedrockStream(n int) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	ev := func(typ, payload string) {
		_ = enc.Encode(&buf, eventstream.Message{
			Headers: eventstream.Headers{
				{Name: ":message-type", Value: eventstream.StringValue("event")},
				{Name: ":event-type", Value: eventstream.StringValue(typ)},
				{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			},
			Payload: []byte(payload),
		})
	}
	ev("messageStart", `{"role":"assistant","p":"abc"}`)
	for i := 0; i < n; i++ {
		s, _ := json.Marshal(delta(i))
		ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":`+string(s)+`},"p":"abcdef"}`)
	}
	ev("contentBlockStop", `{"contentBlockIndex":0,"p":"ab"}`)
	ev("messageStop", `{"stopReason":"end_turn","p":"abcd"}`)
	ev("metadata", `{"usage":{"inputTokens":20,"outputTokens":100,"totalTokens":120},"metrics":{"latencyMs":900},"p":"a"}`)
	return buf.Bytes()
}
