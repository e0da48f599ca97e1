package providertest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// maxEmbeddingDims bounds the "dimensions" a request may ask for.
const maxEmbeddingDims = 8192

type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     int             `json:"dimensions"`
}

// embeddingInput is one input: its text (or its token IDs in decimal) and its
// token count.
type embeddingInput struct {
	key    string
	tokens int
}

// embeddingInputs reads "input": a string, an array of strings, an array of
// token IDs or an array of arrays of token IDs.
func embeddingInputs(raw json.RawMessage) ([]embeddingInput, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embeddingInput{{one, tokens(len(one))}}, true
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil && len(texts) > 0 {
		in := make([]embeddingInput, len(texts))
		for i, t := range texts {
			in[i] = embeddingInput{t, tokens(len(t))}
		}
		return in, true
	}
	ids := func(a []int64) embeddingInput {
		var b []byte
		for _, id := range a {
			b = strconv.AppendInt(append(b, ' '), id, 10)
		}
		return embeddingInput{string(b), len(a)}
	}
	var arr []int64
	if json.Unmarshal(raw, &arr) == nil && len(arr) > 0 {
		return []embeddingInput{ids(arr)}, true
	}
	var arrs [][]int64
	if json.Unmarshal(raw, &arrs) == nil && len(arrs) > 0 {
		in := make([]embeddingInput, len(arrs))
		for i, a := range arrs {
			in[i] = ids(a)
		}
		return in, true
	}
	return nil, false
}

// Embedding is the vector the server answers for text with dims dimensions:
// deterministic pseudo-random values of unit length, so equal inputs get equal
// vectors and different inputs nearly orthogonal ones. Tests may call it to
// compute what to expect.
func Embedding(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	state := h.Sum64()
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		// splitmix64
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		f := float64(z>>11)/(1<<53)*2 - 1
		v[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	if norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / norm)
		}
	}
	return v
}

// embeddings serves POST /v1/embeddings.
func (s *OpenAI) embeddings(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req embeddingRequest
	err := json.Unmarshal(x.body, &req)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	if err != nil {
		writeError(w, invalidRequest("", "", "We could not parse the JSON body of your request. providertest: "+err.Error()))
		return
	}
	if req.Model == "" {
		writeError(w, invalidRequest("", "", "you must provide a model parameter"))
		return
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		writeError(w, invalidRequest("input", "missing_required_parameter", "Missing required parameter: 'input'."))
		return
	}
	inputs, ok := embeddingInputs(req.Input)
	if !ok {
		writeError(w, invalidRequest("input", "invalid_type", "Invalid 'input': expected a string, an array of strings, an array of tokens or an array of token arrays."))
		return
	}
	dims := x.cfg.embeddingDims
	if req.Dimensions != 0 {
		if req.Dimensions < 1 || req.Dimensions > maxEmbeddingDims {
			writeError(w, invalidRequest("dimensions", "invalid_value", "Invalid 'dimensions': must be between 1 and "+strconv.Itoa(maxEmbeddingDims)+"."))
			return
		}
		dims = req.Dimensions
	}
	base64Format := false
	switch req.EncodingFormat {
	case "", "float":
	case "base64":
		base64Format = true
	default:
		writeError(w, invalidRequest("encoding_format", "invalid_value", "Invalid 'encoding_format': must be 'float' or 'base64'."))
		return
	}

	total := 0
	b := x.out[:0]
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, in := range inputs {
		total += in.tokens
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = appendInt(b, i)
		b = append(b, `,"embedding":`...)
		vec := Embedding(in.key, dims)
		if base64Format {
			raw = raw[:0]
			for _, f := range vec {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, f := range vec {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendInt(b, total)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, total)
	b = append(b, "}}\n"...)
	x.out = b

	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// listModels serves GET /v1/models.
func (s *OpenAI) listModels(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, ""))
		return
	}
	body := x.cfg.modelsBody
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// retrieveModel serves GET /v1/models/{model}.
func (s *OpenAI) retrieveModel(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	id := r.PathValue("model")
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, id))
		return
	}
	if !slices.Contains(x.cfg.models, id) {
		writeError(w, forcedError(http.StatusNotFound, id))
		return
	}
	b := append(appendModel(x.out[:0], id), '\n')
	x.out = b
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
