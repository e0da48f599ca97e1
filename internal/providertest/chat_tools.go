package providertest

import (
	"encoding/json"
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// Tool calls in chat completions, with WithToolCalls or X-Fake-Tool-Calls: 1.
// The request is read a second time for them, so the default text answers
// parse no more than they did.

// chatTools is the part of a chat completions request that decides a tool call.
type chatTools struct {
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Required []string `json:"required"`
			} `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice toolChoice `json:"tool_choice"`
}

// toolCall is the one tool call an answer makes.
type toolCall struct {
	id   string // "call_…"
	name string
	args string // a JSON object
}

// chatToolCall is the tool call the answer to body makes: when the request
// offers function tools and its last message is not a tool result; nil
// otherwise.
func (s *OpenAI) chatToolCall(body []byte) *toolCall {
	var req chatTools
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return nil
	}
	if r := req.Messages[len(req.Messages)-1].Role; r == "tool" || r == "function" {
		return nil
	}
	var tools []functionTool
	for _, t := range req.Tools {
		if t.Type == "function" {
			tools = append(tools, functionTool{name: t.Function.Name, required: t.Function.Parameters.Required})
		}
	}
	t, ok := pickTool(tools, req.ToolChoice)
	if !ok {
		return nil
	}
	return &toolCall{
		id:   "call_providertest_" + strconv.FormatUint(s.ids.Add(1), 10),
		name: t.name,
		args: string(toolArguments(t.required)),
	}
}

// appendChatToolMessage appends, after `"message":{"role":"assistant","content":`,
// the rest of a choice that calls c, up to `"usage":`.
func appendChatToolMessage(b []byte, c *toolCall) []byte {
	b = append(b, `null,"tool_calls":[{"id":`...)
	b = llm.AppendJSONString(b, c.id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = llm.AppendJSONString(b, c.name)
	b = append(b, `,"arguments":`...)
	b = llm.AppendJSONString(b, c.args)
	return append(b, `}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":`...)
}

// appendToolCallStart appends the first choice of a streamed tool call, as
// OpenAI sends it: the role, null content and the call's id, type and name
// with empty arguments.
func appendToolCallStart(b []byte, c *toolCall) []byte {
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":`...)
	b = llm.AppendJSONString(b, c.id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = llm.AppendJSONString(b, c.name)
	return append(b, `,"arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}`...)
}

// appendToolCallDelta appends a choice carrying one piece of the arguments.
func appendToolCallDelta(b []byte, args string) []byte {
	b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`...)
	b = llm.AppendJSONString(b, args)
	return append(b, `}}]},"logprobs":null,"finish_reason":null}`...)
}
