package llm

import "github.com/svc-gateway/svc/internal/llm/sse"

// Stream is a pull-based sequence of SSE events in the client's wire format
// (for OpenAI chat: one chat.completion.chunk JSON per event, without the final
// [DONE], which the HTTP surface writes). Next returns io.EOF after the last
// event; the event's Data is valid until the next call. Close releases the
// upstream connection and may be called at any time, more than once.
//
// Pipeline stages wrap a Stream to observe it (usage, caching, post-call
// scans); nothing buffers a whole stream.
type Stream interface {
	Next() (sse.Event, error)
	Close() error
}
