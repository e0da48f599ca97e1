package responses

import (
	"fmt"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/llm"
)

// Decode parses and validates a POST /v1/responses body. Every failure is
// an apierr InvalidRequest naming the field (input[2].content[0].type).
func Decode(body []byte) (*Request, error) {
	var r Request
	if err := jsonbody.Decode(body, &r, false); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks the fields svc reads and bounds every number.
func (r *Request) Validate() error {
	if strings.TrimSpace(r.Model) == "" {
		return apierr.BadParam("model", "you must provide a model parameter")
	}
	if !r.Input.IsItems && r.Input.Text == "" {
		return apierr.BadParam("input", "you must provide input: a string or an array of input items")
	}
	if r.PreviousResponseID != "" && len(r.Conversation) > 0 && string(r.Conversation) != "null" {
		return apierr.BadParam("previous_response_id", "previous_response_id and conversation cannot both be set")
	}
	for i := range r.Input.Items {
		if err := r.Input.Items[i].validate(fmt.Sprintf("input[%d]", i)); err != nil {
			return err
		}
	}
	for i, t := range r.Tools {
		if err := t.validate(fmt.Sprintf("tools[%d]", i)); err != nil {
			return err
		}
	}
	return r.validateSettings()
}

// validateSettings checks the sampling and output settings.
func (r *Request) validateSettings() error {
	switch {
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2):
		return apierr.BadParam("temperature", "temperature must be between 0 and 2")
	case r.TopP != nil && (*r.TopP < 0 || *r.TopP > 1):
		return apierr.BadParam("top_p", "top_p must be between 0 and 1")
	case r.MaxOutputTokens != nil && (*r.MaxOutputTokens < 1 || *r.MaxOutputTokens > llm.MaxOutputTokens):
		return apierr.BadParam("max_output_tokens", "max_output_tokens must be between 1 and %d", llm.MaxOutputTokens)
	}
	if r.Text != nil && r.Text.Format != nil {
		f := r.Text.Format
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.Name == "" {
				return apierr.BadParam("text.format.name", "a json_schema format needs a name")
			}
			if len(f.Schema) == 0 {
				return apierr.BadParam("text.format.schema", "a json_schema format needs a schema")
			}
		default:
			return apierr.BadParam("text.format.type", "unknown text format type %q: expected text, json_object or json_schema", f.Type)
		}
	}
	if r.Reasoning != nil {
		switch r.Reasoning.Effort {
		case "", "none", "minimal", "low", "medium", "high", "xhigh":
		default:
			return apierr.BadParam("reasoning.effort", "unknown reasoning effort %q", r.Reasoning.Effort)
		}
	}
	return nil
}

// validate checks one input item; at is its path.
func (it *Item) validate(at string) error {
	switch it.Kind() {
	case TypeMessage:
		return it.validateMessage(at)
	case TypeFunctionCall:
		switch {
		case it.CallID == "":
			return apierr.BadParam(at+".call_id", "a function_call item needs a call_id")
		case it.Name == "":
			return apierr.BadParam(at+".name", "a function_call item needs a name")
		case it.Arguments == nil:
			return apierr.BadParam(at+".arguments", "a function_call item needs arguments (a JSON string)")
		}
	case TypeFunctionCallOutput:
		switch {
		case it.CallID == "":
			return apierr.BadParam(at+".call_id", "a function_call_output item needs a call_id")
		case it.Output == nil:
			return apierr.BadParam(at+".output", "a function_call_output item needs an output")
		}
		for j, p := range it.Output.Parts {
			if err := p.validate(fmt.Sprintf("%s.output[%d]", at, j), inputParts); err != nil {
				return err
			}
		}
	case TypeReasoning:
	case TypeItemReference:
		if it.ID == "" {
			return apierr.BadParam(at+".id", "an item_reference needs the id of the item it refers to")
		}
	default:
		return apierr.BadParam(at+".type", "unknown input item type %q: expected message, function_call, function_call_output, reasoning or item_reference", it.Type)
	}
	return nil
}

// Content part types allowed by role.
var (
	inputParts  = []string{PartInputText, PartInputImage, PartInputFile}
	outputParts = []string{PartOutputText, PartRefusal, PartInputText}
)

// validateMessage checks a message item.
func (it *Item) validateMessage(at string) error {
	allowed := inputParts
	switch it.Role {
	case "user", "system", "developer":
	case "assistant":
		allowed = outputParts
	case "":
		return apierr.BadParam(at+".role", "a message needs a role: user, assistant, system or developer")
	default:
		return apierr.BadParam(at+".role", "unknown role %q: expected user, assistant, system or developer", it.Role)
	}
	if it.Content == nil {
		return apierr.BadParam(at+".content", "a message needs content")
	}
	for j, p := range it.Content.Parts {
		if err := p.validate(fmt.Sprintf("%s.content[%d]", at, j), allowed); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one content part against the types allowed where it is.
func (p *Part) validate(at string, allowed []string) error {
	ok := false
	for _, a := range allowed {
		ok = ok || p.Type == a
	}
	if !ok {
		return apierr.BadParam(at+".type", "content part type %q is not allowed here: expected one of %s", p.Type, strings.Join(allowed, ", "))
	}
	switch p.Type {
	case PartInputText, PartOutputText:
		if p.Text == nil {
			return apierr.BadParam(at+".text", "a %s part needs text", p.Type)
		}
	case PartRefusal:
		if p.Refusal == nil {
			return apierr.BadParam(at+".refusal", "a refusal part needs refusal text")
		}
	case PartInputImage:
		if p.ImageURL == "" && p.FileID == "" {
			return apierr.BadParam(at+".image_url", "an input_image part needs image_url or file_id")
		}
	case PartInputFile:
		if p.FileData == "" && p.FileID == "" && p.FileURL == "" {
			return apierr.BadParam(at+".file_data", "an input_file part needs file_data, file_id or file_url")
		}
	}
	return nil
}

// validate checks one tool.
func (t *Tool) validate(at string) error {
	switch {
	case t.Type == "":
		return apierr.BadParam(at+".type", "a tool needs a type")
	case t.Type == "function" && t.Name == "":
		return apierr.BadParam(at+".name", "a function tool needs a name")
	}
	return nil
}
