package providertest

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The fakes' tool calling, shared by chat completions, the Responses API and
// Anthropic: the call goes to the first function tool offered (or the one
// tool_choice names), with arguments that set every required property of the
// tool's parameters schema to a string.

// functionTool is a function tool a request offers: its name and the required
// properties of its parameters schema.
type functionTool struct {
	name     string
	required []string
}

// toolChoice is a request's tool_choice as far as the fakes read it: a mode
// ("none", "auto", "required") or an object, {"type":"function","name"} in
// the Responses API, {"type":"function","function":{"name"}} in chat, or
// another type (a built-in tool, "allowed_tools").
type toolChoice struct {
	mode, typ, name string
}

func (c *toolChoice) UnmarshalJSON(b []byte) error {
	*c = toolChoice{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.mode)
	}
	var o struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.typ, c.name = o.Type, o.Name
	if c.name == "" {
		c.name = o.Function.Name
	}
	return nil
}

// pickTool is the tool the fake calls, if it calls one: none when no function
// tool is offered, tool_choice is "none" or forces a tool that is not a
// function; the named function when tool_choice names one that is offered;
// otherwise the first.
func pickTool(tools []functionTool, choice toolChoice) (functionTool, bool) {
	if len(tools) == 0 || choice.mode == "none" {
		return functionTool{}, false
	}
	switch choice.typ {
	case "", "allowed_tools":
		return tools[0], true
	case "function":
		for _, t := range tools {
			if t.name == choice.name {
				return t, true
			}
		}
	}
	return functionTool{}, false
}

// toolArguments is the arguments object of a call of a tool whose schema
// requires the properties required: each set to "providertest value i".
func toolArguments(required []string) []byte {
	var b bytes.Buffer
	b.WriteString(`{`)
	for i, p := range required {
		if i > 0 {
			b.WriteString(`,`)
		}
		k, _ := json.Marshal(p)
		b.Write(k)
		b.WriteString(`:"providertest value ` + strconv.Itoa(i) + `"`)
	}
	b.WriteString(`}`)
	return b.Bytes()
}
