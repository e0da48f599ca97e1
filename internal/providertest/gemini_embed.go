package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The Gemini fake's embeddings, as Google's reference pages show them:
//
//	POST /v1beta/models/{model}:batchEmbedContents   {"requests":[{model, content, taskType, outputDimensionality}]}
//	                                                 → {"embeddings":[{"values":[…]}]}
//	POST /v1beta/models/{model}:embedContent         {content, taskType, outputDimensionality}
//	                                                 → {"embedding":{"values":[…]}}
//	POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:predict   (Vertex AI)
//	     {"instances":[{content, task_type}], "parameters":{outputDimensionality}}
//	     → {"predictions":[{"embeddings":{"values":[…],"statistics":{"token_count","truncated"}}}],
//	        "metadata":{"billableCharacterCount"}}
//
// Vectors are Embedding(text, dims), dims being outputDimensionality or
// GemEmbeddingDims. As Google's, the Gemini API answers carry no usage; Vertex
// AI's count bytes/4 (at least 1) tokens per instance. Credentials,
// GemStatus and X-Fake-Status work as for generateContent.

// GemEmbeddingDims is the vector size the Gemini fake answers unless a request
// sets outputDimensionality (text-embedding-005's default).
const GemEmbeddingDims = 768

// gemMaxBatch is the most requests one batchEmbedContents may carry.
const gemMaxBatch = 100

// gemTaskTypes are Google's embedding task types.
var gemTaskTypes = map[string]bool{
	"RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true, "SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true,
	"CLUSTERING": true, "QUESTION_ANSWERING": true, "FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true,
}

// gemCall routes a call on a model ({model}:{method}) to its handler.
func (s *Gemini) gemCall(w http.ResponseWriter, r *http.Request) {
	_, method, _ := strings.Cut(r.PathValue("call"), ":")
	vertex := r.PathValue("project") != ""
	switch {
	case !vertex && (method == "batchEmbedContents" || method == "embedContent"):
		s.gemEmbed(w, r, method)
	case vertex && method == "predict":
		s.gemEmbed(w, r, method)
	default:
		s.gemGenerate(w, r)
	}
}

// gemEmbedContent is an EmbedContentRequest as the fake reads it.
type gemEmbedContent struct {
	Model   string `json:"model"`
	Content struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"content"`
	TaskType             string `json:"taskType"`
	OutputDimensionality *int   `json:"outputDimensionality"`
}

func (c *gemEmbedContent) gemText() string {
	var b strings.Builder
	for _, p := range c.Content.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

type gemValues struct {
	Values []float32 `json:"values"`
}

// gemEmbed serves batchEmbedContents, embedContent and (Vertex AI) predict.
func (s *Gemini) gemEmbed(w http.ResponseWriter, r *http.Request, method string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, gemMaxBody))
	s.gemBegin(w, r, body)
	if err != nil {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Could not read the request body.", "")
		return
	}
	if !s.gemAuthorized(w, r) {
		return
	}
	model, _, _ := strings.Cut(r.PathValue("call"), ":")
	status := s.cfg.status
	if v := r.Header.Get(HeaderStatus); v != "" {
		status, _ = strconv.Atoi(v)
	}
	if status >= 400 {
		gemForcedError(w, status, model)
		return
	}
	switch method {
	case "predict":
		s.gemPredict(w, body)
	case "embedContent":
		var q gemEmbedContent
		if err := json.Unmarshal(body, &q); err != nil {
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error(), "")
			return
		}
		q.Model = "models/" + model // the URL names it
		v, msg := gemEmbedOne(&q, model, "EmbedContentRequest")
		if msg != "" {
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg, "")
			return
		}
		gemWriteJSON(w, http.StatusOK, map[string]gemValues{"embedding": {v}})
	default:
		var q struct {
			Requests []gemEmbedContent `json:"requests"`
		}
		if err := json.Unmarshal(body, &q); err != nil {
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error(), "")
			return
		}
		switch {
		case len(q.Requests) == 0:
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: requests is not specified\n", "")
			return
		case len(q.Requests) > gemMaxBatch:
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: at most "+strconv.Itoa(gemMaxBatch)+" requests can be in one batch\n", "")
			return
		}
		out := struct {
			Embeddings []gemValues `json:"embeddings"`
		}{Embeddings: make([]gemValues, len(q.Requests))}
		for i := range q.Requests {
			v, msg := gemEmbedOne(&q.Requests[i], model, "BatchEmbedContentsRequest.requests["+strconv.Itoa(i)+"]")
			if msg != "" {
				gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg, "")
				return
			}
			out.Embeddings[i] = gemValues{v}
		}
		gemWriteJSON(w, http.StatusOK, out)
	}
}

// gemEmbedOne is the vector of one EmbedContentRequest, or Google's message
// for what is wrong with it.
func gemEmbedOne(q *gemEmbedContent, model, where string) ([]float32, string) {
	text := q.gemText()
	switch {
	case q.Model != "models/"+model:
		return nil, "* " + where + ".model: the model of every request must be models/" + model + ", got \"" + q.Model + "\"\n"
	case text == "":
		return nil, "* " + where + ".content.parts: contents is not specified\n"
	case q.TaskType != "" && !gemTaskTypes[q.TaskType]:
		return nil, "Invalid value at '" + where + ".task_type', \"" + q.TaskType + "\""
	}
	dims, msg := gemDims(q.OutputDimensionality)
	if msg != "" {
		return nil, msg
	}
	return Embedding(text, dims), ""
}

func gemDims(n *int) (int, string) {
	if n == nil {
		return GemEmbeddingDims, ""
	}
	if *n < 1 || *n > maxEmbeddingDims {
		return 0, "outputDimensionality must be between 1 and " + strconv.Itoa(maxEmbeddingDims) + ", got " + strconv.Itoa(*n)
	}
	return *n, ""
}

// gemPredict serves Vertex AI's text-embedding :predict.
func (s *Gemini) gemPredict(w http.ResponseWriter, body []byte) {
	var q struct {
		Instances []struct {
			Content  string `json:"content"`
			TaskType string `json:"task_type"`
		} `json:"instances"`
		Parameters struct {
			OutputDimensionality *int `json:"outputDimensionality"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error(), "")
		return
	}
	if len(q.Instances) == 0 {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "instances must not be empty", "")
		return
	}
	dims, msg := gemDims(q.Parameters.OutputDimensionality)
	if msg != "" {
		gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg, "")
		return
	}
	type stats struct {
		TokenCount int  `json:"token_count"`
		Truncated  bool `json:"truncated"`
	}
	type prediction struct {
		Embeddings struct {
			Statistics stats     `json:"statistics"`
			Values     []float32 `json:"values"`
		} `json:"embeddings"`
	}
	var out struct {
		Predictions []prediction `json:"predictions"`
		Metadata    struct {
			BillableCharacterCount int `json:"billableCharacterCount"`
		} `json:"metadata"`
	}
	out.Predictions = make([]prediction, len(q.Instances))
	for i, in := range q.Instances {
		switch {
		case in.Content == "":
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "instances["+strconv.Itoa(i)+"].content must not be empty", "")
			return
		case in.TaskType != "" && !gemTaskTypes[in.TaskType]:
			gemWriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Unsupported task type: "+in.TaskType, "")
			return
		}
		p := &out.Predictions[i]
		p.Embeddings.Values = Embedding(in.Content, dims)
		p.Embeddings.Statistics.TokenCount = tokens(len(in.Content))
		out.Metadata.BillableCharacterCount += len(in.Content)
	}
	gemWriteJSON(w, http.StatusOK, out)
}
