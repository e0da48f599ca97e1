package cohere_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/providertest"
)

var embTarget = provider.Deployment{Provider: "cohere", Model: "embed-v4.0", BaseURL: "https://api.cohere.com/"}

// TestEmbeddingsGolden runs embeddings translations: the caller's body, the
// upstream request the adapter must build, Cohere's answer and the OpenAI
// answer svc must give, JSON compared by value.
func TestEmbeddingsGolden(t *testing.T) {
	tests := []struct {
		name       string
		body       string // the caller's POST /v1/embeddings body
		wantBody   string // the upstream body
		response   string // Cohere's answer
		wantOut    string // svc's answer
		wantTokens int64
	}{
		{
			name:     "one string, default input_type",
			body:     `{"model":"embed-v4.0","input":"Hello world"}`,
			wantBody: `{"model":"embed-v4.0","texts":["Hello world"],"input_type":"search_document","embedding_types":["float"]}`,
			response: `{"id":"e1","embeddings":{"float":[[0.5,-0.25]]},"texts":["hello world"],
				"meta":{"api_version":{"version":"2"},"billed_units":{"input_tokens":2}},"response_type":"embeddings_by_type"}`,
			wantOut: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],
				"model":"embed-v4.0","usage":{"prompt_tokens":2,"total_tokens":2}}`,
			wantTokens: 2,
		},
		{
			name:     "strings, query, dimensions, base64",
			body:     `{"model":"embed-v4.0","input":["What is an ant?","ants"],"input_type":"search_query","dimensions":256,"encoding_format":"base64","user":"u1"}`,
			wantBody: `{"model":"embed-v4.0","texts":["What is an ant?","ants"],"input_type":"search_query","embedding_types":["float"],"output_dimension":256}`,
			response: `{"id":"e2","embeddings":{"float":[[0.5,-0.25],[1,0.125]]},"texts":["what is an ant?","ants"],
				"meta":{"billed_units":{"input_tokens":7.0}}}`,
			wantOut: `{"object":"list","data":[
				{"object":"embedding","index":0,"embedding":"AAAAPwAAgL4="},
				{"object":"embedding","index":1,"embedding":"AACAPwAAAD4="}],
				"model":"embed-v4.0","usage":{"prompt_tokens":7,"total_tokens":7}}`,
			wantTokens: 7,
		},
		{
			name:     "classification, no usage reported",
			body:     `{"model":"embed-v4.0","input":["x"],"input_type":"classification"}`,
			wantBody: `{"model":"embed-v4.0","texts":["x"],"input_type":"classification","embedding_types":["float"]}`,
			response: `{"embeddings":{"float":[[1]]}}`,
			wantOut: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]}],
				"model":"embed-v4.0","usage":{"prompt_tokens":0,"total_tokens":0}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := cohere.New()
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			hreq, err := a.NewEmbeddingsRequest(context.Background(), embTarget, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := "https://api.cohere.com/v2/embed"; hreq.Method != http.MethodPost || hreq.URL.String() != want {
				t.Errorf("request: got %s %s, want POST %s", hreq.Method, hreq.URL, want)
			}
			if ct := hreq.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			if v := hreq.Header.Get("Authorization"); v != "" {
				t.Errorf("Authorization: got %q, want none (credentials are upstream/cred's business)", v)
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
	for _, body := range []string{`{"model":"m","input":[1,2,3]}`, `{"model":"m","input":[[1],[2]]}`} {
		r, err := llm.DecodeEmbeddingsRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = cohere.New().NewEmbeddingsRequest(context.Background(), embTarget, r)
		if e := apierr.From(err); err == nil || e.Status() != http.StatusBadRequest || e.Param != "input" {
			t.Errorf("%s: got %v, want a 400 about input", body, err)
		}
	}
}

func TestEmbeddingsBadAnswers(t *testing.T) {
	for name, response := range map[string]string{
		"not JSON":         `<html>`,
		"no float":         `{"embeddings":{"int8":[[1],[2]]}}`,
		"too few vectors":  `{"embeddings":{"float":[[1]]}}`,
		"too many vectors": `{"embeddings":{"float":[[1],[2],[3]]}}`,
		"not numbers":      `{"embeddings":{"float":[["a"],[2]]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r, err := llm.DecodeEmbeddingsRequest([]byte(`{"model":"m","input":["a","b"]}`))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = cohere.New().DecodeEmbeddings(r, []byte(response))
			if e := apierr.From(err); err == nil || e.Kind != apierr.UpstreamError || e.Code != "upstream_bad_response" {
				t.Errorf("got %v, want an UpstreamError upstream_bad_response", err)
			}
		})
	}
}

// TestEmbeddingsErrors checks that embed errors go through the same
// DecodeError as chat.
func TestEmbeddingsErrors(t *testing.T) {
	tests := []struct {
		status     int
		body       string
		wantStatus int
	}{
		{400, `{"id":"x","message":"invalid request: total number of texts must be at most 96 - received 97"}`, 400},
		{401, `{"id":"x","message":"invalid api token"}`, 502},
		{404, `{"message":"model 'embed-nope' not found"}`, 404},
		{429, `{"message":"You are using a Trial key"}`, 429},
		{500, `{"message":"internal server error"}`, 502},
	}
	for _, tc := range tests {
		e := cohere.New().DecodeError("cohere", tc.status, http.Header{}, []byte(tc.body))
		if e == nil || e.Status() != tc.wantStatus {
			t.Errorf("HTTP %d %s: got %v, want status %d", tc.status, tc.body, e, tc.wantStatus)
		}
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

// embCall sends r through the adapter to the fake at base, with header, and
// returns the status and body of the answer.
func embCall(t *testing.T, base string, r *llm.EmbeddingsRequest, header http.Header) (int, []byte) {
	t.Helper()
	target := embTarget
	target.BaseURL = base
	hreq, err := cohere.New().NewEmbeddingsRequest(context.Background(), target, r)
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

// TestEmbeddingsFake runs the adapter against providertest's fake Cohere:
// vectors are the fake's Embedding(text, dims), usage its billed tokens.
func TestEmbeddingsFake(t *testing.T) {
	const key = "co-test-key"
	tests := []struct {
		name       string
		body       string
		texts      []string
		dims       int
		wantTokens int64
	}{
		{name: "float", body: `{"model":"embed-v4.0","input":["alpha","beta gamma delta"],"dimensions":256,"input_type":"search_query"}`,
			texts: []string{"alpha", "beta gamma delta"}, dims: 256, wantTokens: 1 + 4},
		{name: "base64 default dims", body: `{"model":"embed-v4.0","input":"alpha","encoding_format":"base64"}`,
			texts: []string{"alpha"}, dims: providertest.CohEmbeddingDims, wantTokens: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewCohere(t, providertest.CohWithAPIKey(key))
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			status, body := embCall(t, s.URL(), r, http.Header{"Authorization": {"Bearer " + key}})
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			out, usage, err := cohere.New().DecodeEmbeddings(r, body)
			if err != nil {
				t.Fatal(err)
			}
			var resp openai.CreateEmbeddingResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if len(resp.Data) != len(tc.texts) {
				t.Fatalf("got %d embeddings, want %d", len(resp.Data), len(tc.texts))
			}
			for i, text := range tc.texts {
				got := make([]float32, len(resp.Data[i].Embedding))
				for j, f := range resp.Data[i].Embedding {
					got[j] = float32(f)
				}
				if diff := cmp.Diff(providertest.Embedding(text, tc.dims), got); diff != "" {
					t.Errorf("vector %d (-want +got):\n%s", i, diff)
				}
			}
			if usage.PromptTokens != tc.wantTokens || resp.Usage.PromptTokens != tc.wantTokens {
				t.Errorf("usage: got %+v and %+v in the answer, want %d tokens", usage, resp.Usage, tc.wantTokens)
			}
			if p := s.LastRequest().Path; p != "/v2/embed" {
				t.Errorf("path: got %s, want /v2/embed", p)
			}
		})
	}
}

// TestEmbeddingsFakeErrors checks the fake's refusals through DecodeError.
func TestEmbeddingsFakeErrors(t *testing.T) {
	const key = "co-test-key"
	tests := []struct {
		name       string
		body       string
		header     http.Header
		wantStatus int
		wantKind   apierr.Kind
	}{
		{name: "wrong key", header: http.Header{"Authorization": {"Bearer co-wrong"}}, wantStatus: 401, wantKind: apierr.UpstreamError},
		{name: "forced 429", header: http.Header{providertest.HeaderStatus: {"429"}}, wantStatus: 429, wantKind: apierr.RateLimited},
		{name: "forced 500", header: http.Header{providertest.HeaderStatus: {"500"}}, wantStatus: 500, wantKind: apierr.UpstreamError},
		{name: "dimension Cohere refuses", body: `{"model":"embed-v4.0","input":"a","dimensions":8}`, wantStatus: 400, wantKind: apierr.InvalidRequest},
		{name: "too many texts", body: `{"model":"embed-v4.0","input":[` + strings.Repeat(`"a",`, 96) + `"a"]}`, wantStatus: 400, wantKind: apierr.InvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewCohere(t, providertest.CohWithAPIKey(key))
			if tc.body == "" {
				tc.body = `{"model":"embed-v4.0","input":["a"]}`
			}
			if tc.header == nil {
				tc.header = http.Header{}
			}
			if tc.header.Get("Authorization") == "" {
				tc.header.Set("Authorization", "Bearer "+key)
			}
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			status, body := embCall(t, s.URL(), r, tc.header)
			if status != tc.wantStatus {
				t.Fatalf("status: got %d, want %d: %s", status, tc.wantStatus, body)
			}
			if e := cohere.New().DecodeError("cohere", status, http.Header{}, body); e.Kind != tc.wantKind {
				t.Errorf("DecodeError: got %v (kind %d), want kind %d", e, e.Kind, tc.wantKind)
			}
		})
	}
}
