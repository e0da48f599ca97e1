package providertest

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// CohEmbeddingDims is the vector size the Cohere fake answers unless a request
// sets output_dimension (embed-v4.0's default).
const CohEmbeddingDims = 1536

// cohMaxTexts is the most texts one v2 embed request may carry.
const cohMaxTexts = 96

// cohEmbed serves POST /v2/embed, as Cohere's reference shows it:
//
//	{model, texts, input_type, embedding_types, output_dimension}
//	→ {"id","embeddings":{"float":[[…]]},"texts","meta":{"api_version","billed_units":{"input_tokens"}},
//	   "response_type":"embeddings_by_type"}
//
// Vectors are Embedding(text, dims), dims being output_dimension (256, 512,
// 1024 or 1536, as embed-v4.0 allows) or CohEmbeddingDims. input_type is
// required, as Cohere requires it of v3 and later models; the fake embeds
// "float" only and refuses the other embedding types. Input tokens are
// bytes/4 (at least 1) per text. Credentials and X-Fake-Status work as for
// /v2/chat.
func (s *Cohere) cohEmbed(w http.ResponseWriter, r *http.Request) {
	ctl, ok := s.cohBegin(w, r)
	if !ok {
		return
	}
	var req struct {
		Model           string   `json:"model"`
		Texts           []string `json:"texts"`
		InputType       string   `json:"input_type"`
		EmbeddingTypes  []string `json:"embedding_types"`
		OutputDimension *int     `json:"output_dimension"`
	}
	if err := json.Unmarshal(ctl.body, &req); err != nil {
		cohError(w, http.StatusBadRequest, "invalid request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		cohError(w, http.StatusBadRequest, "invalid request: model is required")
		return
	case len(req.Texts) == 0:
		cohError(w, http.StatusBadRequest, "invalid request: texts must not be empty")
		return
	case len(req.Texts) > cohMaxTexts:
		cohError(w, http.StatusBadRequest, "invalid request: total number of texts must be at most "+strconv.Itoa(cohMaxTexts)+" - received "+strconv.Itoa(len(req.Texts)))
		return
	}
	switch req.InputType {
	case "search_document", "search_query", "classification", "clustering":
	case "":
		cohError(w, http.StatusBadRequest, "invalid request: input_type is required for embed-v3 and newer models")
		return
	default:
		cohError(w, http.StatusBadRequest, "invalid request: input_type must be one of search_document, search_query, classification, clustering, image; got "+strconv.Quote(req.InputType))
		return
	}
	for _, t := range req.EmbeddingTypes {
		if t != "float" {
			cohError(w, http.StatusBadRequest, "providertest: the fake embeds float only, not "+strconv.Quote(t))
			return
		}
	}
	dims := CohEmbeddingDims
	if d := req.OutputDimension; d != nil {
		switch *d {
		case 256, 512, 1024, 1536:
			dims = *d
		default:
			cohError(w, http.StatusBadRequest, "invalid request: output_dimension must be one of 256, 512, 1024, 1536; got "+strconv.Itoa(*d))
			return
		}
	}
	vectors := make([][]float32, len(req.Texts))
	input := 0
	for i, t := range req.Texts {
		vectors[i] = Embedding(t, dims)
		input += cohTokens(len(t))
	}
	cohWriteJSON(w, map[string]any{
		"id":            "providertest-embed-" + strconv.FormatUint(s.ids.Add(1), 10),
		"embeddings":    map[string]any{"float": vectors},
		"texts":         req.Texts,
		"meta":          map[string]any{"api_version": map[string]any{"version": "2"}, "billed_units": map[string]any{"input_tokens": input}},
		"response_type": "embeddings_by_type",
	})
}
