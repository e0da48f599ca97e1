package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// bedrInvoke answers InvokeModel for the embedding models svc translates:
// Amazon Titan ({"inputText"} → {"embedding","inputTextTokenCount"}) and
// Cohere on Bedrock ({"texts"} → {"embeddings":{"float":[…]}}), with
// deterministic vectors (Embedding) of 1024 dimensions unless asked.
func (s *Bedrock) bedrInvoke(w http.ResponseWriter, r *http.Request) {
	s.count.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	s.record(Recorded{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
	if !s.authorized(r.Header) {
		bedrWriteError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return
	}
	if bedrEcho(w, r) {
		return
	}
	model := r.PathValue("model")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(model, "titan-embed"):
		var req struct {
			InputText  string `json:"inputText"`
			Dimensions int    `json:"dimensions"`
		}
		if json.Unmarshal(body, &req) != nil || req.InputText == "" {
			bedrWriteError(w, http.StatusBadRequest, "ValidationException", "inputText is required")
			return
		}
		dims := req.Dimensions
		if dims == 0 {
			dims = 1024
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"embedding": Embedding(req.InputText, dims), "inputTextTokenCount": tokens(len(req.InputText))})
	case strings.Contains(model, "cohere.embed"):
		var req struct {
			Texts     []string `json:"texts"`
			InputType string   `json:"input_type"`
		}
		if json.Unmarshal(body, &req) != nil || len(req.Texts) == 0 || req.InputType == "" {
			bedrWriteError(w, http.StatusBadRequest, "ValidationException", "texts and input_type are required")
			return
		}
		vecs := make([][]float32, len(req.Texts))
		for i, t := range req.Texts {
			vecs[i] = Embedding(t, 1024)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "emb-1", "texts": req.Texts, "embeddings": map[string]any{"float": vecs}})
	default:
		bedrWriteError(w, http.StatusBadRequest, "ValidationException", "The provided model identifier is invalid.")
	}
}
