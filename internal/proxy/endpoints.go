package proxy

import (
	"bytes"
	"encoding/json"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// lenient reads providers' answers (see provider/openai).
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// usageOf reads model and usage from a JSON answer, in either naming:
// prompt/completion tokens (OpenAI) or input/output tokens (images, audio).
func usageOf(body []byte) (llm.Usage, string, bool) {
	var s struct {
		Model string `json:"model"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			InputTokens      int64 `json:"input_tokens"`
			OutputTokens     int64 `json:"output_tokens"`
			TotalTokens      int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if len(body) == 0 || body[0] != '{' || jsonv2.Unmarshal(body, &s, lenient) != nil || s.Usage == nil {
		return llm.Usage{}, s.Model, false
	}
	u := llm.Usage{
		PromptTokens:     max(s.Usage.PromptTokens, s.Usage.InputTokens),
		CompletionTokens: max(s.Usage.CompletionTokens, s.Usage.OutputTokens),
		TotalTokens:      s.Usage.TotalTokens,
	}
	return u, s.Model, true
}

// callerWantsUsage reports whether a streamed body asked for usage itself.
func callerWantsUsage(body []byte) bool {
	var s struct {
		StreamOptions *llm.StreamOptions `json:"stream_options"`
	}
	return jsonbody.Unmarshal(body, &s) == nil && s.StreamOptions != nil && s.StreamOptions.IncludeUsage
}

// requireModel fails when model is empty.
func requireModel(model string) error {
	if strings.TrimSpace(model) == "" {
		return apierr.BadParam("model", "you must provide a model parameter")
	}
	return nil
}

// boundTokens checks an optional token count field.
func boundTokens(param string, v *int64) error {
	if v != nil && (*v < 1 || *v > llm.MaxOutputTokens) {
		return apierr.BadParam(param, "%s must be between 1 and %d", param, llm.MaxOutputTokens)
	}
	return nil
}

func decodeChat(x *pipeline.Exchange) error {
	req, err := llm.DecodeChatRequest(x.Body)
	if err != nil {
		return err
	}
	x.Chat, x.Model, x.Stream = req, req.Model, req.Stream
	return nil
}

func decodeRerank(x *pipeline.Exchange) error {
	r, err := llm.DecodeRerankRequest(x.Body)
	if err != nil {
		return err
	}
	x.Model, x.Rerank = r.Model, r
	return nil
}

// decodeNative reads the model and, where the operation streams, stream
// from a native messages body; the rest is the provider's to validate.
func decodeNative(streams bool) func(x *pipeline.Exchange) error {
	return func(x *pipeline.Exchange) error {
		var b struct {
			Model     string `json:"model"`
			Stream    bool   `json:"stream"`
			MaxTokens *int64 `json:"max_tokens"`
		}
		if err := jsonbody.Decode(x.Body, &b, false); err != nil {
			return err
		}
		if err := requireModel(b.Model); err != nil {
			return err
		}
		if err := boundTokens("max_tokens", b.MaxTokens); err != nil {
			return err
		}
		x.Model, x.Stream = b.Model, b.Stream && streams
		return nil
	}
}

func decodeEmbeddings(x *pipeline.Exchange) error {
	r, err := llm.DecodeEmbeddingsRequest(x.Body)
	if err != nil {
		return err
	}
	x.Model, x.Embeddings = r.Model, r
	return nil
}

func decodeCompletions(x *pipeline.Exchange) error {
	var r struct {
		Model     string          `json:"model"`
		Prompt    json.RawMessage `json:"prompt"`
		Stream    bool            `json:"stream"`
		MaxTokens *int64          `json:"max_tokens"`
		N         *int64          `json:"n"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if err := requireModel(r.Model); err != nil {
		return err
	}
	if err := boundTokens("max_tokens", r.MaxTokens); err != nil {
		return err
	}
	if r.N != nil && (*r.N < 1 || *r.N > 128) {
		return apierr.BadParam("n", "n must be between 1 and 128")
	}
	if p := bytes.TrimSpace(r.Prompt); len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return apierr.BadParam("prompt", "prompt is required")
	}
	x.Model, x.Stream = r.Model, r.Stream
	return nil
}

// defaultImageModel is OpenAI's default when a body names no model.
const defaultImageModel = "dall-e-2"

func decodeImages(x *pipeline.Exchange) error {
	var r struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		N      *int   `json:"n"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return apierr.BadParam("prompt", "prompt is required")
	}
	if r.N != nil && (*r.N < 1 || *r.N > 10) {
		return apierr.BadParam("n", "n must be between 1 and 10")
	}
	x.Model = r.Model
	if x.Model == "" {
		x.Model = defaultImageModel
	}
	return nil
}

func decodeSpeech(x *pipeline.Exchange) error {
	var r struct {
		Model string          `json:"model"`
		Input string          `json:"input"`
		Voice json.RawMessage `json:"voice"`
		Speed *float64        `json:"speed"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if err := requireModel(r.Model); err != nil {
		return err
	}
	switch {
	case r.Input == "":
		return apierr.BadParam("input", "input is required")
	case len(r.Input) > 4096*4:
		return apierr.BadParam("input", "input is too long")
	case len(bytes.TrimSpace(r.Voice)) == 0 || bytes.Equal(bytes.TrimSpace(r.Voice), []byte("null")):
		return apierr.BadParam("voice", "voice is required")
	case r.Speed != nil && (*r.Speed < 0.25 || *r.Speed > 4):
		return apierr.BadParam("speed", "speed must be between 0.25 and 4")
	}
	x.Model = r.Model
	return nil
}
