package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The native messages API's shapes, as the policy check reads and rewrites
// them: the request's system prompt and messages (a string, or blocks of
// which the text ones count), the answer's text blocks, the stream's text
// deltas. The caller's other fields pass as they came.

// nativePromptTexts are the texts of a messages request: the system prompt
// (msg -1) and each message's string content or text blocks.
func nativePromptTexts(body []byte) ([]string, []textAt) {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil, nil
	}
	var texts []string
	var at []textAt
	add := func(msg int, raw json.RawMessage) {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			if str != "" {
				texts, at = append(texts, str), append(at, textAt{msg, -1})
			}
			return
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) != nil {
			return
		}
		for j, b := range blocks {
			if b.Type == "text" && b.Text != "" {
				texts, at = append(texts, b.Text), append(at, textAt{msg, j})
			}
		}
	}
	if len(req.System) > 0 {
		add(-1, req.System)
	}
	for i, m := range req.Messages {
		add(i, m.Content)
	}
	return texts, at
}

// redactNativePrompt returns body with the texts at at replaced.
func redactNativePrompt(body []byte, at []textAt, redacted []string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	var msgs []map[string]json.RawMessage
	if raw, ok := fields["messages"]; ok {
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, err
		}
	}
	for k, a := range at {
		if k >= len(redacted) {
			return nil, errors.New("redact: fewer texts than places")
		}
		var content *json.RawMessage
		if a.msg < 0 {
			v := fields["system"]
			content = &v
		} else {
			if a.msg >= len(msgs) {
				return nil, errors.New("redact: message out of range")
			}
			v := msgs[a.msg]["content"]
			content = &v
		}
		out, err := replaceText(*content, a.part, redacted[k])
		if err != nil {
			return nil, err
		}
		if a.msg < 0 {
			fields["system"] = out
		} else {
			msgs[a.msg]["content"] = out
		}
	}
	if msgs != nil {
		var err error
		if fields["messages"], err = json.Marshal(msgs); err != nil {
			return nil, err
		}
	}
	return json.Marshal(fields)
}

// replaceText replaces a string content (part -1) or the text of block
// part.
func replaceText(content json.RawMessage, part int, text string) (json.RawMessage, error) {
	if part < 0 {
		return json.Marshal(text)
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil || part >= len(blocks) {
		return nil, fmt.Errorf("redact: block %d", part)
	}
	blocks[part]["text"], _ = json.Marshal(text)
	return json.Marshal(blocks)
}

// nativeAnswerTexts are the text blocks of a messages answer.
func nativeAnswerTexts(body []byte) ([]string, []int) {
	var a struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(body, &a) != nil {
		return nil, nil
	}
	var texts []string
	var idx []int
	for i, b := range a.Content {
		if b.Type == "text" && b.Text != "" {
			texts, idx = append(texts, b.Text), append(idx, i)
		}
	}
	return texts, idx
}

// redactNativeAnswer replaces the text of the answer's blocks idx.
func redactNativeAnswer(body []byte, idx []int, redacted []string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	for k, i := range idx {
		if k >= len(redacted) {
			return nil, errors.New("redact: fewer texts than blocks")
		}
		out, err := replaceText(fields["content"], i, redacted[k])
		if err != nil {
			return nil, err
		}
		fields["content"] = out
	}
	return json.Marshal(fields)
}

// nativeDeltaText is the text of a content_block_delta event.
func nativeDeltaText(data []byte) string {
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" {
		return ""
	}
	return ev.Delta.Text
}
