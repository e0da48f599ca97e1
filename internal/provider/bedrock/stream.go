package bedrock

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// Bounds on one event stream message from the provider. The event stream
// format caps a message at 16 MiB and its headers at 128 KiB; Bedrock's
// headers take about 100 bytes, and the decoder's cost grows with the square
// of their number, so svc allows 8 KiB.
const (
	maxMessage = 16 << 20
	maxHeaders = 8 << 10
	// minMessage is the prelude (8), its CRC (4) and the message CRC (4).
	minMessage = 16
)

// DecodeChatStream turns a ConverseStream body, read one event stream message
// at a time, into OpenAI chat.completion.chunk events. The stream does not
// name the model: chunks carry info.Model when the caller sets it before
// decoding. Usage is recorded in info at the metadata event and, unless
// info.HideUsage, relayed as a final usage-only chunk. Tool calls (toolUse
// blocks and their input pieces) are recorded in info as they pass.
func (a *Adapter) DecodeChatStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	s := &stream{
		body: body,
		src:  bodyReader{r: body},
		// The decoder's bytes.Buffer wants 512 free bytes before each read:
		// room enough that a typical payload never makes it reallocate.
		payload: make([]byte, 0, 8<<10),
		dec:     eventstream.NewDecoder(),
		info:    info,
		tools:   map[int]int{},
	}
	s.r = bufio.NewReaderSize(&s.src, 4<<10)
	s.prefix = appendPrefix(nil, completionID(), time.Now().Unix(), info.Model)
	return s
}

type stream struct {
	body io.ReadCloser
	src  bodyReader
	r    *bufio.Reader
	dec  *eventstream.Decoder
	info *provider.StreamInfo

	payload []byte // the decoder's payload buffer, reused
	out     []byte // the chunk returned, reused
	prefix  []byte // {"id":…,"model":…,"choices":

	ev       streamEvent // the event being translated, reused
	tools    map[int]int // contentBlockIndex → tool call index
	started  bool        // messageStart seen
	stopped  bool        // messageStop seen
	metadata bool        // metadata seen
	usageOut bool        // the usage chunk is to be sent next
	done     bool
	err      error
}

// streamEvent is the union of the ConverseStream events svc reads. Value
// fields, not pointers, keep decoding cheap: an empty text or input delta
// carries nothing to relay anyway.
type streamEvent struct {
	Role              string `json:"role"`
	ContentBlockIndex int    `json:"contentBlockIndex"`
	Start             struct {
		ToolUse struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta struct {
		Text    string `json:"text"`
		ToolUse struct {
			Input string `json:"input"`
		} `json:"toolUse"`
	} `json:"delta"`
	StopReason string   `json:"stopReason"`
	Usage      awsUsage `json:"usage"`
}

func (s *stream) Next() (sse.Event, error) {
	if s.err != nil {
		return sse.Event{}, s.err
	}
	if s.usageOut {
		s.usageOut, s.done = false, true
		return s.emit(s.usageChunk()), nil
	}
	for !s.done {
		m, err := s.read()
		if err != nil {
			s.err = err
			return sse.Event{}, err
		}
		switch header(m.Headers, ":message-type") {
		case "event":
		case "exception":
			s.err = exceptionError(header(m.Headers, ":exception-type"), m.Payload)
			return sse.Event{}, s.err
		case "error":
			s.err = apierr.New(apierr.UpstreamError, "upstream_stream_error",
				"bedrock reported an error mid-stream: "+apierr.Redact(header(m.Headers, ":error-code")+" "+header(m.Headers, ":error-message")))
			return sse.Event{}, s.err
		default:
			continue
		}
		ev := &s.ev
		*ev = streamEvent{}
		typ := header(m.Headers, ":event-type")
		if err := json.Unmarshal(m.Payload, ev); err != nil {
			s.err = apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an invalid stream event", err)
			return sse.Event{}, s.err
		}
		if out := s.translate(typ, ev); out != nil {
			return s.emit(out), nil
		}
	}
	s.err = io.EOF
	return sse.Event{}, io.EOF
}

// translate returns the chunk for one event, or nil when it has none.
func (s *stream) translate(typ string, ev *streamEvent) []byte {
	b := append(s.out[:0], s.prefix...)
	switch typ {
	case "messageStart":
		s.started = true
		return append(b, `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`...)
	case "contentBlockStart":
		if ev.Start.ToolUse.ToolUseID == "" && ev.Start.ToolUse.Name == "" {
			return nil // a text or reasoning block
		}
		i := len(s.tools)
		s.tools[ev.ContentBlockIndex] = i
		s.info.AddToolCall(0, i, ev.Start.ToolUse.ToolUseID, ev.Start.ToolUse.Name, "")
		b = append(b, `[{"index":0,"delta":{`...)
		b = s.roleOnce(b)
		b = append(b, `"tool_calls":[{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"id":`...)
		b = llm.AppendJSONString(b, ev.Start.ToolUse.ToolUseID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = llm.AppendJSONString(b, ev.Start.ToolUse.Name)
		return append(b, `,"arguments":""}}]},"finish_reason":null}]}`...)
	case "contentBlockDelta":
		switch d := &ev.Delta; {
		case d.Text != "":
			b = append(b, `[{"index":0,"delta":{`...)
			b = s.roleOnce(b)
			b = append(b, `"content":`...)
			b = llm.AppendJSONString(b, d.Text)
			return append(b, `},"finish_reason":null}]}`...)
		case d.ToolUse.Input != "":
			i, ok := s.tools[ev.ContentBlockIndex]
			if !ok {
				return nil
			}
			s.info.AddToolCall(0, i, "", "", d.ToolUse.Input)
			b = append(b, `[{"index":0,"delta":{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"function":{"arguments":`...)
			b = llm.AppendJSONString(b, d.ToolUse.Input)
			return append(b, `}}]},"finish_reason":null}]}`...)
		}
		return nil // empty deltas, reasoningContent, citations: not relayed
	case "messageStop":
		s.stopped = true
		if s.metadata { // metadata came first: end after this chunk
			s.usageOut, s.done = !s.info.HideUsage, s.info.HideUsage
		}
		b = append(b, `[{"index":0,"delta":{},"finish_reason":`...)
		b = llm.AppendJSONString(b, finishReason(ev.StopReason))
		return append(b, `}]}`...)
	case "metadata":
		s.info.Usage, s.metadata = ev.Usage.usage(), true
		if !s.stopped {
			return nil // metadata comes last; keep reading to messageStop
		}
		if s.info.HideUsage {
			s.done = true
			return nil
		}
		s.done = true
		return s.usageChunk()
	}
	return nil
}

// roleOnce adds the assistant role to the first delta when messageStart did
// not come.
func (s *stream) roleOnce(b []byte) []byte {
	if s.started {
		return b
	}
	s.started = true
	return append(b, `"role":"assistant",`...)
}

func (s *stream) usageChunk() []byte {
	b := append(s.out[:0], s.prefix...)
	b = append(b, `[],"usage":`...)
	u, _ := json.Marshal(&s.info.Usage)
	b = append(b, u...)
	return append(b, '}')
}

func (s *stream) emit(b []byte) sse.Event {
	s.out = b
	return sse.Event{Data: b}
}

// read returns the next message, after checking its prelude against the
// bounds so that a corrupt length cannot make the decoder read without end.
func (s *stream) read() (eventstream.Message, error) {
	pre, err := s.r.Peek(8)
	if err != nil {
		return eventstream.Message{}, s.readError(err)
	}
	total, headers := binary.BigEndian.Uint32(pre[0:4]), binary.BigEndian.Uint32(pre[4:8])
	if total < minMessage || total > maxMessage || headers > maxHeaders || headers > total-minMessage {
		return eventstream.Message{}, apierr.New(apierr.UpstreamError, "upstream_bad_response", "the provider sent an invalid event stream message")
	}
	m, err := s.dec.Decode(s.r, s.payload[:0])
	if err != nil {
		return eventstream.Message{}, s.readError(err)
	}
	if cap(m.Payload) <= 1<<20 {
		s.payload = m.Payload
	}
	return m, nil
}

// readError classifies a failure to read a message: the body failed, the
// body ended early (before messageStop and metadata: the answer or its usage
// is lost), or the bytes are not a valid message.
func (s *stream) readError(err error) error {
	switch {
	case s.src.err != nil:
		return apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", s.src.err)
	case s.src.eof && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return truncated()
	}
	return apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an invalid event stream message", err)
}

// bodyReader is the body as the decoder reads it, remembering how it ended.
type bodyReader struct {
	r   io.Reader
	eof bool
	err error // a read error other than io.EOF
}

func (s *bodyReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		s.eof = true
	case err != nil:
		s.err = err
	}
	return n, err
}

func truncated() error {
	return apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream ended before its final metadata event")
}

func (s *stream) Close() error { return s.body.Close() }

// header returns the string value of a message header, or "".
func header(hs eventstream.Headers, name string) string {
	for i := range hs {
		if hs[i].Name == name {
			if v, ok := hs[i].Value.(eventstream.StringValue); ok {
				return string(v)
			}
			return hs[i].Value.String()
		}
	}
	return ""
}

// exceptionError maps a ConverseStream exception event to an error.
func exceptionError(typ string, payload []byte) error {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(payload, &body)
	msg := apierr.Redact(body.Message)
	e := &apierr.Error{Code: "upstream_stream_error", Err: errors.New("bedrock stream exception " + typ)}
	switch typ {
	case "throttlingException":
		e.Kind, e.Code = apierr.RateLimited, "upstream_rate_limited"
		e.Message = "bedrock rate limit: " + orDefault(msg, "too many requests")
	case "validationException":
		e.Kind, e.Code = apierr.InvalidRequest, "invalid_request"
		e.Message = "bedrock rejected the request: " + orDefault(msg, "validation failed")
	default: // modelStreamErrorException, serviceUnavailableException, internalServerException, …
		e.Kind = apierr.UpstreamError
		e.Message = "bedrock reported " + orDefault(typ, "an error") + " mid-stream"
		if msg != "" {
			e.Message += ": " + msg
		}
	}
	return e
}

// appendPrefix appends the chunk's fixed head, up to "choices":.
func appendPrefix(b []byte, id string, created int64, model string) []byte {
	b = append(b, `{"id":`...)
	b = llm.AppendJSONString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, model)
	return append(b, `,"choices":`...)
}
