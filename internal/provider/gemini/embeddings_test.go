package gemini_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/providertest"
)

// embCase is one embeddings translation: the caller's body, the upstream
// request the adapter must build, Google's answer and the OpenAI answer svc
// must give, all as JSON compared by value.
type embCase struct {
	name       string
	vertex     bool
	body       string // the caller's POST /v1/embeddings body
	wantURL    string
	wantBody   string // the upstream body
	response   string // Google's answer
	wantOut    string // svc's answer
	wantTokens int64
}

var gemTarget = provider.Deployment{Provider: "gemini", Model: "gemini-embedding-001", BaseURL: "https://generativelanguage.googleapis.com"}

var vertexTarget = provider.Deployment{Provider: "vertex", Model: "text-embedding-005", Project: "proj", Location: "us-central1"}

var embCases = []embCase{
	{
		name:     "gemini one string",
		body:     `{"model":"gemini-embedding-001","input":"Hello world"}`,
		wantURL:  "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents",
		wantBody: `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"Hello world"}]}}]}`,
		response: `{"embeddings":[{"values":[0.5,-0.25]}]}`,
		wantOut: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],
			"model":"gemini-embedding-001","usage":{"prompt_tokens":3,"total_tokens":3}}`,
		wantTokens: 3, // ceil(11/4)
	},
	{
		name:    "gemini strings, task type, dimensions, base64",
		body:    `{"model":"gemini-embedding-001","input":["What is an ant?","ants"],"input_type":"search_query","dimensions":2,"encoding_format":"base64"}`,
		wantURL: "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents",
		wantBody: `{"requests":[
			{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"What is an ant?"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":2},
			{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"ants"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":2}]}`,
		response: `{"embeddings":[{"values":[0.5,-0.25]},{"values":[1,0.125]}]}`,
		wantOut: `{"object":"list","data":[
			{"object":"embedding","index":0,"embedding":"AAAAPwAAgL4="},
			{"object":"embedding","index":1,"embedding":"AACAPwAAAD4="}],
			"model":"gemini-embedding-001","usage":{"prompt_tokens":5,"total_tokens":5}}`,
		wantTokens: 5, // ceil(15/4) + ceil(4/4)
	},
	{
		name:    "gemini input types",
		body:    `{"model":"gemini-embedding-001","input":["a","b"],"input_type":"clustering"}`,
		wantURL: "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents",
		wantBody: `{"requests":[
			{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]},"taskType":"CLUSTERING"},
			{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b"}]},"taskType":"CLUSTERING"}]}`,
		response: `{"embeddings":[{"values":[1]},{"values":[-1]}]}`,
		wantOut: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]},{"object":"embedding","index":1,"embedding":[-1]}],
			"model":"gemini-embedding-001","usage":{"prompt_tokens":2,"total_tokens":2}}`,
		wantTokens: 2,
	},
	{
		name:    "vertex predict",
		vertex:  true,
		body:    `{"model":"text-embedding-005","input":["doc one","doc two"],"input_type":"search_document","dimensions":3}`,
		wantURL: "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/text-embedding-005:predict",
		wantBody: `{"instances":[{"content":"doc one","task_type":"RETRIEVAL_DOCUMENT"},{"content":"doc two","task_type":"RETRIEVAL_DOCUMENT"}],
			"parameters":{"outputDimensionality":3}}`,
		response: `{"predictions":[
			{"embeddings":{"statistics":{"truncated":false,"token_count":2},"values":[0.25,0.5,-1]}},
			{"embeddings":{"statistics":{"truncated":false,"token_count":3.0},"values":[1,0,0]}}],
			"metadata":{"billableCharacterCount":12}}`,
		wantOut: `{"object":"list","data":[
			{"object":"embedding","index":0,"embedding":[0.25,0.5,-1]},
			{"object":"embedding","index":1,"embedding":[1,0,0]}],
			"model":"text-embedding-005","usage":{"prompt_tokens":5,"total_tokens":5}}`,
		wantTokens: 5,
	},
	{
		name:     "vertex base64, no parameters",
		vertex:   true,
		body:     `{"model":"text-embedding-005","input":"q","encoding_format":"base64"}`,
		wantURL:  "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/text-embedding-005:predict",
		wantBody: `{"instances":[{"content":"q"}]}`,
		response: `{"predictions":[{"embeddings":{"statistics":{"token_count":1},"values":[0.25,0.5,-1]}}]}`,
		wantOut: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPgAAAD8AAIC/"}],
			"model":"text-embedding-005","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		wantTokens: 1,
	},
}

func embAdapter(vertex bool) (*gemini.Adapter, provider.Deployment) {
	if vertex {
		return gemini.NewVertex(), vertexTarget
	}
	return gemini.New(), gemTarget
}

func TestEmbeddingsGolden(t *testing.T) {
	for _, tc := range embCases {
		t.Run(tc.name, func(t *testing.T) {
			a, target := embAdapter(tc.vertex)
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			hreq, err := a.NewEmbeddingsRequest(context.Background(), target, r)
			if err != nil {
				t.Fatal(err)
			}
			if hreq.Method != http.MethodPost || hreq.URL.String() != tc.wantURL {
				t.Errorf("request: got %s %s, want POST %s", hreq.Method, hreq.URL, tc.wantURL)
			}
			if ct := hreq.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			for _, k := range []string{"Authorization", "X-Goog-Api-Key"} {
				if v := hreq.Header.Get(k); v != "" {
					t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
				}
			}
			embSameJSON(t, "upstream body", embBody(t, hreq), tc.wantBody)

			out, usage, err := a.DecodeEmbeddings(r, []byte(tc.response))
			if err != nil {
				t.Fatal(err)
			}
			embSameJSON(t, "answer", out, tc.wantOut)
			if usage.PromptTokens != tc.wantTokens || usage.TotalTokens != tc.wantTokens || usage.CompletionTokens != 0 {
				t.Errorf("usage: got %+v, want %d prompt and total tokens", usage, tc.wantTokens)
			}
		})
	}
}

func TestEmbeddingsTokenInput(t *testing.T) {
	for _, vertex := range []bool{false, true} {
		for _, body := range []string{`{"model":"m","input":[1,2,3]}`, `{"model":"m","input":[[1],[2]]}`} {
			a, target := embAdapter(vertex)
			r, err := llm.DecodeEmbeddingsRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.NewEmbeddingsRequest(context.Background(), target, r)
			if e := apierr.From(err); err == nil || e.Status() != http.StatusBadRequest || e.Param != "input" {
				t.Errorf("vertex=%v %s: got %v, want a 400 about input", vertex, body, err)
			}
		}
	}
}

func TestEmbeddingsBadAnswers(t *testing.T) {
	tests := []struct {
		name, response string
		vertex         bool
	}{
		{name: "not JSON", response: `<html>`},
		{name: "too few embeddings", response: `{"embeddings":[{"values":[1]}]}`},
		{name: "too many embeddings", response: `{"embeddings":[{"values":[1]},{"values":[1]},{"values":[1]}]}`},
		{name: "values not numbers", response: `{"embeddings":[{"values":["a"]},{"values":[1]}]}`},
		{name: "vertex too few predictions", vertex: true, response: `{"predictions":[]}`},
		{name: "vertex not JSON", vertex: true, response: `{`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := embAdapter(tc.vertex)
			r, err := llm.DecodeEmbeddingsRequest([]byte(`{"model":"m","input":["a","b"]}`))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = a.DecodeEmbeddings(r, []byte(tc.response))
			if e := apierr.From(err); err == nil || e.Kind != apierr.UpstreamError || e.Code != "upstream_bad_response" {
				t.Errorf("got %v, want an UpstreamError upstream_bad_response", err)
			}
		})
	}
}

// TestEmbeddingsErrors checks that embeddings errors go through the same
// DecodeError as chat.
func TestEmbeddingsErrors(t *testing.T) {
	tests := []struct {
		status     int
		body       string
		wantStatus int
	}{
		{400, `{"error":{"code":400,"message":"* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch","status":"INVALID_ARGUMENT"}}`, 400},
		{400, `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`, 502},
		{404, `{"error":{"code":404,"message":"models/nope is not found","status":"NOT_FOUND"}}`, 404},
		{429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, 429},
		{500, `{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`, 502},
	}
	for _, tc := range tests {
		e := gemini.New().DecodeError("gemini", tc.status, http.Header{}, []byte(tc.body))
		if e == nil || e.Status() != tc.wantStatus {
			t.Errorf("HTTP %d %s: got %v, want status %d", tc.status, tc.body, e, tc.wantStatus)
		}
	}
}

func TestEmbeddingsVertexNotConfigured(t *testing.T) {
	r, err := llm.DecodeEmbeddingsRequest([]byte(`{"model":"m","input":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = gemini.NewVertex().NewEmbeddingsRequest(context.Background(), provider.Deployment{Model: "m"}, r)
	if e := apierr.From(err); err == nil || e.Kind != apierr.Unavailable {
		t.Errorf("got %v, want Unavailable (VERTEX_PROJECT and VERTEX_LOCATION unset)", err)
	}
}

// embBody reads the request body through GetBody (which retries use) and
// checks it is the one the request carries.
func embBody(t *testing.T, r *http.Request) []byte {
	t.Helper()
	if r.GetBody == nil {
		t.Fatal("the upstream request has no GetBody: it cannot be retried")
	}
	rc, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != r.ContentLength {
		t.Errorf("ContentLength: got %d, want %d", r.ContentLength, len(b))
	}
	return b
}

// embSameJSON compares got with want as JSON values.
func embSameJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	value := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: invalid JSON %q: %v", what, b, err)
		}
		return v
	}
	if diff := cmp.Diff(value([]byte(want)), value(got)); diff != "" {
		t.Errorf("%s: got != want (-want +got):\n%s\ngot: %s", what, diff, got)
	}
}

// embCall sends r through a to the fake at target, with header, and returns
// the status and body of the answer.
func embCall(t *testing.T, a *gemini.Adapter, target provider.Deployment, r *llm.EmbeddingsRequest, header http.Header) (int, []byte) {
	t.Helper()
	hreq, err := a.NewEmbeddingsRequest(context.Background(), target, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		hreq.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// embVectors reads the vectors of an OpenAI answer, float or base64.
func embVectors(t *testing.T, out []byte) [][]float32 {
	t.Helper()
	var resp struct {
		Data []struct {
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	vecs := make([][]float32, len(resp.Data))
	for i, d := range resp.Data {
		if d.Index != i {
			t.Errorf("data[%d].index: got %d", i, d.Index)
		}
		var raw []byte
		if json.Unmarshal(d.Embedding, &raw) == nil { // a base64 string
			for j := 0; j+4 <= len(raw); j += 4 {
				vecs[i] = append(vecs[i], math.Float32frombits(binary.LittleEndian.Uint32(raw[j:])))
			}
			continue
		}
		if err := json.Unmarshal(d.Embedding, &vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return vecs
}

// TestEmbeddingsFake runs the adapters against providertest's fake Gemini
// API and Vertex AI: vectors are the fake's Embedding(text, dims).
func TestEmbeddingsFake(t *testing.T) {
	const key, token = "AIza-test-key-0123456789", "ya29.test-token"
	tests := []struct {
		name       string
		vertex     bool
		body       string
		texts      []string
		dims       int
		wantTokens int64
	}{
		{name: "gemini", body: `{"model":"gemini-embedding-001","input":["alpha","beta gamma"],"dimensions":16,"input_type":"search_document"}`,
			texts: []string{"alpha", "beta gamma"}, dims: 16, wantTokens: 2 + 3},
		{name: "gemini base64 default dims", body: `{"model":"gemini-embedding-001","input":"alpha","encoding_format":"base64"}`,
			texts: []string{"alpha"}, dims: providertest.GemEmbeddingDims, wantTokens: 2},
		{name: "vertex", vertex: true, body: `{"model":"text-embedding-005","input":["alpha","beta gamma delta"],"dimensions":8,"input_type":"search_query"}`,
			texts: []string{"alpha", "beta gamma delta"}, dims: 8, wantTokens: 1 + 4},
		{name: "vertex base64", vertex: true, body: `{"model":"text-embedding-005","input":"alpha","encoding_format":"base64"}`,
			texts: []string{"alpha"}, dims: providertest.GemEmbeddingDims, wantTokens: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, target := embAdapter(tc.vertex)
			var s *providertest.Gemini
			header := http.Header{}
			if tc.vertex {
				s = providertest.NewGemini(t, providertest.GemBearer(token))
				header.Set("Authorization", "Bearer "+token)
			} else {
				s = providertest.NewGemini(t, providertest.GemAPIKey(key))
				header.Set("X-Goog-Api-Key", key)
			}
			target.BaseURL = s.URL()
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			status, body := embCall(t, a, target, r, header)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			out, usage, err := a.DecodeEmbeddings(r, body)
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]float32, len(tc.texts))
			for i, text := range tc.texts {
				want[i] = providertest.Embedding(text, tc.dims)
			}
			if diff := cmp.Diff(want, embVectors(t, out)); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			if usage.PromptTokens != tc.wantTokens || usage.TotalTokens != tc.wantTokens {
				t.Errorf("usage: got %+v, want %d tokens", usage, tc.wantTokens)
			}
			method := ":batchEmbedContents"
			if tc.vertex {
				method = ":predict"
			}
			if p := s.LastRequest().Path; !strings.HasSuffix(p, "/models/"+target.Model+method) {
				t.Errorf("path: got %s, want …/models/%s%s", p, target.Model, method)
			}
		})
	}
}

// TestEmbeddingsFakeErrors checks the fake's refusals through DecodeError.
func TestEmbeddingsFakeErrors(t *testing.T) {
	const key = "AIza-test-key-0123456789"
	tests := []struct {
		name       string
		vertex     bool
		header     http.Header
		wantStatus int
		wantKind   apierr.Kind
	}{
		{name: "wrong key", header: http.Header{"X-Goog-Api-Key": {"AIza-wrong-key-0123456789"}}, wantStatus: 400, wantKind: apierr.UpstreamError},
		{name: "no key", header: http.Header{}, wantStatus: 403, wantKind: apierr.UpstreamError},
		{name: "forced 429", header: http.Header{"X-Goog-Api-Key": {key}, providertest.HeaderStatus: {"429"}}, wantStatus: 429, wantKind: apierr.RateLimited},
		{name: "forced 404", header: http.Header{"X-Goog-Api-Key": {key}, providertest.HeaderStatus: {"404"}}, wantStatus: 404, wantKind: apierr.NotFound},
		{name: "vertex forced 503", vertex: true, header: http.Header{providertest.HeaderStatus: {"503"}}, wantStatus: 503, wantKind: apierr.UpstreamError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, target := embAdapter(tc.vertex)
			s := providertest.NewGemini(t, providertest.GemAPIKey(key))
			if tc.vertex {
				s = providertest.NewGemini(t)
			}
			target.BaseURL = s.URL()
			r, err := llm.DecodeEmbeddingsRequest([]byte(`{"model":"m","input":["a"]}`))
			if err != nil {
				t.Fatal(err)
			}
			status, body := embCall(t, a, target, r, tc.header)
			if status != tc.wantStatus {
				t.Fatalf("status: got %d, want %d: %s", status, tc.wantStatus, body)
			}
			if e := a.DecodeError(target.Provider, status, http.Header{}, body); e.Kind != tc.wantKind {
				t.Errorf("DecodeError: got %v (kind %d), want kind %d", e, e.Kind, tc.wantKind)
			}
		})
	}
}
