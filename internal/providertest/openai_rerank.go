package providertest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/svc-gateway/svc/internal/llm"
)

// ---------------------------------------------------------------------------
// POST /v1/rerank

type rerankRequest struct {
	Model           string            `json:"model"`
	Query           *string           `json:"query"`
	Documents       []json.RawMessage `json:"documents"`
	TopN            *int              `json:"top_n"`
	ReturnDocuments *bool             `json:"return_documents"`
}

// rerankWords is the set of lower-cased words (runs of letters and digits) of s.
func rerankWords(s string) map[string]struct{} {
	set := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		set[w] = struct{}{}
	}
	return set
}

// RerankScore is the relevance_score the server gives document for query:
// the share of the query's distinct words (case-insensitive) found in the
// document, in [0, 1].
func RerankScore(query, document string) float64 {
	q := rerankWords(query)
	if len(q) == 0 {
		return 0
	}
	d := rerankWords(document)
	hits := 0
	for w := range q {
		if _, ok := d[w]; ok {
			hits++
		}
	}
	return float64(hits) / float64(len(q))
}

// rerank serves POST /v1/rerank. Results are sorted by score, highest first
// (equal scores in document order), cut at top_n; documents are returned
// unless return_documents is false, as vLLM and Jina do.
func (s *OpenAI) rerank(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req rerankRequest
	err := json.Unmarshal(x.body, &req)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	var bad apiError
	docs := make([]string, len(req.Documents))
	switch {
	case err != nil:
		bad = badJSON(err)
	case req.Model == "":
		bad = invalidRequest("", "", "you must provide a model parameter")
	case req.Query == nil:
		bad = missingParam("query")
	case req.Documents == nil:
		bad = missingParam("documents")
	case len(req.Documents) == 0:
		bad = invalidRequest("documents", "empty_array", "Invalid 'documents': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	case req.TopN != nil && *req.TopN < 0:
		bad = invalidRequest("top_n", "integer_below_min_value", "Invalid 'top_n': integer below minimum value. Expected a value >= 0, but got "+strconv.Itoa(*req.TopN)+" instead.")
	default:
		for i, raw := range req.Documents {
			if json.Unmarshal(raw, &docs[i]) == nil {
				continue
			}
			var obj struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(raw, &obj) != nil || obj.Text == nil {
				bad = invalidRequest("documents", "invalid_type", "Invalid 'documents["+strconv.Itoa(i)+"]': expected a string or an object with a 'text' string.")
				break
			}
			docs[i] = *obj.Text
		}
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	type result struct {
		index int
		score float64
	}
	results := make([]result, len(docs))
	total := len(*req.Query)
	for i, d := range docs {
		results[i] = result{i, RerankScore(*req.Query, d)}
		total += len(d)
	}
	slices.SortStableFunc(results, func(a, b result) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	if req.TopN != nil && *req.TopN > 0 && *req.TopN < len(results) {
		results = results[:*req.TopN]
	}
	withDocs := req.ReturnDocuments == nil || *req.ReturnDocuments

	id := s.requestID(w)
	b := x.out[:0]
	b = append(b, `{"id":"rerank-providertest`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","model":`...)
	b = llm.AppendJSONString(b, req.Model)
	b = append(b, `,"results":[`...)
	for i, res := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = appendInt(b, res.index)
		b = append(b, `,"relevance_score":`...)
		b = strconv.AppendFloat(b, res.score, 'g', -1, 64)
		if withDocs {
			b = append(b, `,"document":{"text":`...)
			b = llm.AppendJSONString(b, docs[res.index])
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, `],"usage":{"total_tokens":`...)
	b = appendInt(b, tokens(total))
	b = append(b, "}}\n"...)
	writeJSONAnswer(w, x, b)
}
