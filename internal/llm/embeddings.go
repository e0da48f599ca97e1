package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// MaxEmbeddingInputs is the most inputs one embeddings request may carry, as
// OpenAI allows.
const MaxEmbeddingInputs = 2048

// Input types of EmbeddingsRequest.InputType: how the embedded texts will be
// used, an extension to OpenAI's request in Cohere's words (Gemini's taskType
// says the same).
const (
	InputSearchDocument = "search_document"
	InputSearchQuery    = "search_query"
	InputClassification = "classification"
	InputClustering     = "clustering"
)

// EmbeddingsRequest is a POST /v1/embeddings body: OpenAI's, plus svc's
// input_type.
type EmbeddingsRequest struct {
	Model          string         `json:"model"`
	Input          EmbeddingInput `json:"input"`
	EncodingFormat string         `json:"encoding_format,omitempty"` // "float" (default) or "base64"
	Dimensions     *int           `json:"dimensions,omitempty"`
	// InputType is one of the Input* constants, or "" for the provider's
	// default. OpenAI's API has no such field; Cohere's and Gemini's do.
	InputType string `json:"input_type,omitempty"`
	User      string `json:"user,omitempty"`
}

// Base64 reports whether the caller asked for base64-encoded vectors.
func (r *EmbeddingsRequest) Base64() bool { return r.EncodingFormat == "base64" }

// EmbeddingInputKind says which of OpenAI's four shapes an input came in.
type EmbeddingInputKind uint8

// The shapes of "input". The zero kind is an absent (or null) input.
const (
	InputNone        EmbeddingInputKind = iota
	InputString                         // "text"
	InputStrings                        // ["text", …]
	InputTokens                         // [1, 2, …]: one input given as token IDs
	InputTokenArrays                    // [[1, 2], …]: several inputs given as token IDs
)

// EmbeddingInput is the "input" of an embeddings request: a string, an array
// of strings, an array of token IDs or an array of token-ID arrays. Texts
// holds the inputs of the first two kinds, Tokens those of the last two (one
// element for InputTokens).
type EmbeddingInput struct {
	Kind   EmbeddingInputKind
	Texts  []string
	Tokens [][]int64
}

// Len is the number of inputs, hence of vectors in the answer.
func (in *EmbeddingInput) Len() int {
	if in.Kind == InputTokens || in.Kind == InputTokenArrays {
		return len(in.Tokens)
	}
	return len(in.Texts)
}

// IsTokens reports whether the input is given as token IDs.
func (in *EmbeddingInput) IsTokens() bool {
	return in.Kind == InputTokens || in.Kind == InputTokenArrays
}

// TextsFor returns the input texts for a provider that embeds text only, or
// the 400 telling the caller that providerName does not take token IDs.
func (in *EmbeddingInput) TextsFor(providerName string) ([]string, error) {
	if in.IsTokens() {
		return nil, &apierr.Error{Kind: apierr.InvalidRequest, Code: "unsupported_value", Param: "input",
			Message: providerName + " embeds text only: send input as a string or an array of strings, not token IDs"}
	}
	return in.Texts, nil
}

// UnmarshalJSON reads any of the four shapes; null leaves the input absent.
func (in *EmbeddingInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*in = EmbeddingInput{}
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := jsonbody.Unmarshal(b, &s); err != nil {
			return err
		}
		in.Kind, in.Texts = InputString, []string{s}
		return nil
	case '[':
	default:
		return errEmbeddingInput
	}
	first := bytes.TrimSpace(b[1:])
	if len(first) == 0 {
		return errEmbeddingInput
	}
	switch c := first[0]; {
	case c == ']':
		in.Kind = InputStrings // empty: Validate says so
		return nil
	case c == '"':
		in.Kind = InputStrings
		return jsonbody.Unmarshal(b, &in.Texts)
	case c == '[':
		in.Kind = InputTokenArrays
		return jsonbody.Unmarshal(b, &in.Tokens)
	case c == '-' || (c >= '0' && c <= '9'):
		var ids []int64
		if err := jsonbody.Unmarshal(b, &ids); err != nil {
			return err
		}
		in.Kind, in.Tokens = InputTokens, [][]int64{ids}
		return nil
	}
	return errEmbeddingInput
}

var errEmbeddingInput error = jsonbody.Invalid("input must be a string, an array of strings, an array of token IDs or an array of token-ID arrays")

// MarshalJSON writes the input in the shape it came in.
func (in EmbeddingInput) MarshalJSON() ([]byte, error) {
	switch in.Kind {
	case InputString:
		if len(in.Texts) == 1 {
			return json.Marshal(in.Texts[0])
		}
	case InputStrings:
		return json.Marshal(in.Texts)
	case InputTokens:
		if len(in.Tokens) == 1 {
			return json.Marshal(in.Tokens[0])
		}
	case InputTokenArrays:
		return json.Marshal(in.Tokens)
	case InputNone:
		return []byte("null"), nil
	}
	return nil, errEmbeddingInput
}

// DecodeEmbeddingsRequest parses and validates an embeddings body. Every
// failure is an apierr InvalidRequest naming the offending field.
func DecodeEmbeddingsRequest(body []byte) (*EmbeddingsRequest, error) {
	var r EmbeddingsRequest
	if err := jsonbody.Decode(body, &r, false); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks what proxy checks of every embeddings body, and the limits
// OpenAI sets: at most MaxEmbeddingInputs inputs, none empty.
func (r *EmbeddingsRequest) Validate() error {
	if strings.TrimSpace(r.Model) == "" {
		return apierr.BadParam("model", "you must provide a model parameter")
	}
	in := &r.Input
	switch n := in.Len(); {
	case in.Kind == InputNone:
		return apierr.BadParam("input", "input is required")
	case n == 0:
		return apierr.BadParam("input", "input must not be empty")
	case n > MaxEmbeddingInputs:
		return apierr.BadParam("input", "input may hold at most %d inputs, got %d", MaxEmbeddingInputs, n)
	}
	for i, t := range in.Texts {
		if t == "" {
			return apierr.BadParam(inputParam(in.Kind, i), "input must not contain empty strings")
		}
	}
	for i, ids := range in.Tokens {
		if len(ids) == 0 {
			return apierr.BadParam(inputParam(in.Kind, i), "input must not contain empty token arrays")
		}
	}
	switch r.EncodingFormat {
	case "", "float", "base64":
	default:
		return apierr.BadParam("encoding_format", "encoding_format must be float or base64")
	}
	if r.Dimensions != nil && *r.Dimensions < 1 {
		return apierr.BadParam("dimensions", "dimensions must be at least 1")
	}
	switch r.InputType {
	case "", InputSearchDocument, InputSearchQuery, InputClassification, InputClustering:
	default:
		return apierr.BadParam("input_type", "input_type must be one of %s, %s, %s or %s",
			InputSearchDocument, InputSearchQuery, InputClassification, InputClustering)
	}
	return nil
}

// inputParam names input i: input[i] in an array of inputs, input itself
// when it is one string or one token array.
func inputParam(k EmbeddingInputKind, i int) string {
	if k == InputString || k == InputTokens {
		return "input"
	}
	return "input[" + strconv.Itoa(i) + "]"
}

// EncodeEmbeddings writes the OpenAI embeddings answer for vectors, in the
// order and shape OpenAI writes it:
//
//	{"object":"list","data":[{"object":"embedding","index":0,"embedding":[…]},…],
//	 "model":…,"usage":{"prompt_tokens":n,"total_tokens":n}}
//
// With base64, each embedding is instead the standard base64 of its float32
// values in little-endian order, as OpenAI sends for encoding_format=base64
// (and its SDKs decode). Floats are written in the shortest form that reads
// back as the same float32; a NaN or an infinity, which JSON cannot carry,
// is written as 0.
func EncodeEmbeddings(model string, vectors [][]float32, promptTokens int64, base64 bool) []byte {
	size, longest := 128+len(model), 0
	for _, v := range vectors {
		longest = max(longest, len(v))
		if base64 {
			size += 48 + (len(v)*4+2)/3*4
		} else {
			size += 48 + len(v)*14
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	if base64 {
		raw = make([]byte, 0, 4*longest)
	}
	for i, v := range vectors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if base64 {
			raw = appendFloat32LE(raw[:0], v)
			b = append(b, '"')
			b = encoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = appendFloat32s(b, v)
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = AppendJSONString(b, model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, promptTokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, promptTokens, 10)
	return append(b, "}}"...)
}

// encoding is the base64 of OpenAI's answers (named so that the parameter
// base64 can keep OpenAI's word).
var encoding = base64.StdEncoding

func appendFloat32LE(b []byte, v []float32) []byte {
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func appendFloat32s(b []byte, v []float32) []byte {
	b = append(b, '[')
	for j, f := range v {
		if j > 0 {
			b = append(b, ',')
		}
		if f64 := float64(f); math.IsNaN(f64) || math.IsInf(f64, 0) {
			b = append(b, '0')
		} else {
			b = strconv.AppendFloat(b, f64, 'g', -1, 32)
		}
	}
	return append(b, ']')
}
