package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// DecodeChatRequest parses and validates a chat completions body. Every failure
// is an apierr InvalidRequest naming the offending field. Extra is not filled:
// call FillExtra when the top-level unknown fields are needed.
func DecodeChatRequest(body []byte) (*ChatRequest, error) {
	var r ChatRequest
	if err := jsonbody.Decode(body, &r, false); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// chatFields are the top-level JSON names ChatRequest models.
var chatFields = jsonNames(reflect.TypeOf(ChatRequest{}))

// FillExtra sets r.Extra to the top-level fields of body that ChatRequest does
// not model.
func (r *ChatRequest) FillExtra(body []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "invalid_json", "request body is not valid JSON", err)
	}
	for k := range all {
		if _, ok := chatFields[k]; ok {
			delete(all, k)
		}
	}
	if len(all) == 0 {
		all = nil
	}
	r.Extra = all
	return nil
}

// MaxOutputTokens bounds max_tokens and max_completion_tokens: far above
// any model's output, and small enough that no estimate built on it
// overflows.
const MaxOutputTokens = 100_000_000

// Validate checks the fields svc relies on, and bounds every number it
// reads. Providers validate the rest.
func (r *ChatRequest) Validate() error {
	if strings.TrimSpace(r.Model) == "" {
		return apierr.BadParam("model", "you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return apierr.BadParam("messages", "messages must be a non-empty array")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		case "":
			return apierr.BadParam(fmt.Sprintf("messages[%d].role", i), "messages[%d].role is required", i)
		default:
			return apierr.BadParam(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not one of system, developer, user, assistant, tool", i, m.Role)
		}
		if (m.Content.Null || !m.Content.Present) && m.Role != "assistant" && m.Role != "function" {
			return apierr.BadParam(fmt.Sprintf("messages[%d].content", i), "messages[%d].content is required for role %s", i, m.Role)
		}
		for j, p := range m.Content.Parts {
			param := fmt.Sprintf("messages[%d].content[%d]", i, j)
			switch p.Type {
			case "":
				return apierr.BadParam(param+".type", "%s.type is required", param)
			case "image_url":
				if p.ImageURL == nil || p.ImageURL.URL == "" {
					return apierr.BadParam(param+".image_url", "%s.image_url.url is required", param)
				}
			case "input_audio":
				if p.InputAudio == nil || p.InputAudio.Data == "" || p.InputAudio.Format == "" {
					return apierr.BadParam(param+".input_audio", "%s.input_audio needs data and format", param)
				}
			}
		}
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 2) {
		return apierr.BadParam("temperature", "temperature must be between 0 and 2")
	}
	if p := r.TopP; p != nil && (*p < 0 || *p > 1) {
		return apierr.BadParam("top_p", "top_p must be between 0 and 1")
	}
	if m := r.MaxTokens; m != nil && (*m < 1 || *m > MaxOutputTokens) {
		return apierr.BadParam("max_tokens", "max_tokens must be between 1 and %d", MaxOutputTokens)
	}
	if m := r.MaxCompletionTokens; m != nil && (*m < 1 || *m > MaxOutputTokens) {
		return apierr.BadParam("max_completion_tokens", "max_completion_tokens must be between 1 and %d", MaxOutputTokens)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"presence_penalty", r.PresencePenalty}, {"frequency_penalty", r.FrequencyPenalty}} {
		if f.v != nil && (*f.v < -2 || *f.v > 2) {
			return apierr.BadParam(f.name, "%s must be between -2 and 2", f.name)
		}
	}
	if n := r.N; n != nil && (*n < 1 || *n > 128) {
		return apierr.BadParam("n", "n must be between 1 and 128")
	}
	return nil
}

func jsonNames(t reflect.Type) map[string]struct{} {
	m := map[string]struct{}{}
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			m[name] = struct{}{}
		}
	}
	return m
}

// MaxOutput is the most completion tokens r asks for: max_completion_tokens,
// else max_tokens; 0 when it sets neither.
func (r *ChatRequest) MaxOutput() int64 {
	switch {
	case r.MaxCompletionTokens != nil:
		return int64(*r.MaxCompletionTokens)
	case r.MaxTokens != nil:
		return int64(*r.MaxTokens)
	}
	return 0
}
