package proxy

import (
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/tokens"
)

// streamMeter counts what a stream relayed, to estimate its usage when the
// provider never reported it: its events, their data bytes, and the
// smallest event, whose size stands for the framing every event carries
// (ids, model, object names) around the text.
type streamMeter struct {
	events, bytes, smallest int64
}

func (m *streamMeter) add(ev sse.Event) {
	n := int64(len(ev.Data))
	m.events++
	m.bytes += n
	if m.events == 1 || n < m.smallest {
		m.smallest = n
	}
}

// bytesPerToken is the text a completion token is estimated to carry: a
// little less than the average of English text with OpenAI's tokenizers,
// so that a cut stream is charged at least what it used.
const bytesPerToken = 3

// completionTokens estimates the tokens of the text the stream carried:
// its bytes beyond each event's framing.
func (m *streamMeter) completionTokens() int64 {
	content := max(m.bytes-m.events*m.smallest, 0)
	return (content + bytesPerToken - 1) / bytesPerToken
}

// estimatedUsage is the usage of a stream that ended without the provider's:
// the prompt counted as the limits count it (package tokens) and the
// completion estimated from what was relayed.
func estimatedUsage(x *pipeline.Exchange, m *streamMeter) llm.Usage {
	model := x.UpstreamModel
	var prompt int64
	if x.Chat != nil {
		prompt = tokens.ChatPrompt(model, x.Chat)
	} else {
		prompt = tokens.Body(model, x.Body)
	}
	u := llm.Usage{PromptTokens: prompt, CompletionTokens: m.completionTokens()}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}
