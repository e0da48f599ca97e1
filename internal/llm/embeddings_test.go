package llm_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

func TestDecodeEmbeddingsRequest(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantKind  llm.EmbeddingInputKind
		wantTexts []string
		wantIDs   [][]int64
		wantParam string // "" when the body is valid
		wantCode  string
	}{
		{name: "string", body: `{"model":"m","input":"hello"}`, wantKind: llm.InputString, wantTexts: []string{"hello"}},
		{name: "strings", body: `{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":8,"input_type":"search_query","user":"u"}`,
			wantKind: llm.InputStrings, wantTexts: []string{"a", "b"}},
		{name: "token ids", body: `{"model":"m","input":[1,2,3]}`, wantKind: llm.InputTokens, wantIDs: [][]int64{{1, 2, 3}}},
		{name: "token arrays", body: `{"model":"m","input":[[1,2],[3]]}`, wantKind: llm.InputTokenArrays, wantIDs: [][]int64{{1, 2}, {3}}},
		{name: "unknown fields pass", body: `{"model":"m","input":"x","extra":{"a":1}}`, wantKind: llm.InputString, wantTexts: []string{"x"}},

		{name: "not an object", body: `["m"]`, wantCode: "invalid_json"},
		{name: "no model", body: `{"input":"x"}`, wantParam: "model"},
		{name: "blank model", body: `{"model":" ","input":"x"}`, wantParam: "model"},
		{name: "no input", body: `{"model":"m"}`, wantParam: "input"},
		{name: "null input", body: `{"model":"m","input":null}`, wantParam: "input"},
		{name: "empty string", body: `{"model":"m","input":""}`, wantParam: "input"},
		{name: "empty array", body: `{"model":"m","input":[]}`, wantParam: "input"},
		{name: "empty array with space", body: `{"model":"m","input":[ ]}`, wantParam: "input"},
		{name: "empty string in array", body: `{"model":"m","input":["a",""]}`, wantParam: "input[1]"},
		{name: "empty token array", body: `{"model":"m","input":[[1],[]]}`, wantParam: "input[1]"},
		{name: "number input", body: `{"model":"m","input":5}`, wantParam: "input", wantCode: "invalid_value"},
		{name: "object input", body: `{"model":"m","input":{"text":"x"}}`, wantParam: "input", wantCode: "invalid_value"},
		{name: "mixed array", body: `{"model":"m","input":["a",1]}`, wantParam: "input[1]", wantCode: "invalid_type"},
		{name: "fractional token", body: `{"model":"m","input":[1,2.5]}`, wantParam: "input[1]"},
		{name: "too many inputs", body: `{"model":"m","input":[` + strings.Repeat(`"x",`, llm.MaxEmbeddingInputs) + `"x"]}`, wantParam: "input"},
		{name: "bad encoding_format", body: `{"model":"m","input":"x","encoding_format":"int8"}`, wantParam: "encoding_format"},
		{name: "dimensions zero", body: `{"model":"m","input":"x","dimensions":0}`, wantParam: "dimensions"},
		{name: "dimensions not a number", body: `{"model":"m","input":"x","dimensions":"8"}`, wantParam: "dimensions", wantCode: "invalid_type"},
		{name: "bad input_type", body: `{"model":"m","input":"x","input_type":"query"}`, wantParam: "input_type"},
		{name: "duplicate field", body: `{"model":"m","input":"x","Model":"n","model":"o"}`, wantParam: "model", wantCode: "duplicate_field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := llm.DecodeEmbeddingsRequest([]byte(tc.body))
			if tc.wantParam != "" || tc.wantCode != "" {
				e := apierr.From(err)
				if err == nil || e.Kind != apierr.InvalidRequest || e.Param != tc.wantParam {
					t.Fatalf("got %v (param %q), want an InvalidRequest about %q", err, e.Param, tc.wantParam)
				}
				if tc.wantCode != "" && e.Code != tc.wantCode {
					t.Errorf("code: got %q, want %q", e.Code, tc.wantCode)
				}
				if e.Status() != 400 {
					t.Errorf("status: got %d, want 400", e.Status())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Input.Kind != tc.wantKind {
				t.Errorf("kind: got %d, want %d", r.Input.Kind, tc.wantKind)
			}
			if diff := cmp.Diff(tc.wantTexts, r.Input.Texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIDs, r.Input.Tokens); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			// The input marshals back in the shape it came in.
			var raw struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal([]byte(tc.body), &raw); err != nil {
				t.Fatal(err)
			}
			back, err := json.Marshal(r.Input)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != string(raw.Input) {
				t.Errorf("re-marshalled input: got %s, want %s", back, raw.Input)
			}
		})
	}
}

func TestEmbeddingsRequestFields(t *testing.T) {
	r, err := llm.DecodeEmbeddingsRequest([]byte(`{"model":"m","input":["a"],"encoding_format":"base64","dimensions":8,"input_type":"clustering","user":"u"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Base64() || r.Dimensions == nil || *r.Dimensions != 8 || r.InputType != llm.InputClustering || r.User != "u" {
		t.Errorf("got %+v, want base64, 8 dimensions, clustering and user u", r)
	}
}

func TestTextsFor(t *testing.T) {
	texts := llm.EmbeddingInput{Kind: llm.InputStrings, Texts: []string{"a", "b"}}
	got, err := texts.TextsFor("Gemini")
	if err != nil || len(got) != 2 {
		t.Errorf("texts: got %v, %v; want the two texts", got, err)
	}
	for _, k := range []llm.EmbeddingInputKind{llm.InputTokens, llm.InputTokenArrays} {
		in := llm.EmbeddingInput{Kind: k, Tokens: [][]int64{{1}}}
		_, err := in.TextsFor("Gemini")
		if e := apierr.From(err); err == nil || e.Status() != 400 || e.Param != "input" || !strings.Contains(e.Message, "Gemini") {
			t.Errorf("kind %d: got %v, want a 400 about input naming the provider", k, err)
		}
	}
}

// vectors are awkward floats: negative, tiny, large, exact and not.
var vectors = [][]float32{
	{0.1, -0.2, 1e-8, 3.4028235e38, 0, -0.0028842222},
	{1, -1, 0.5},
	{},
}

func TestEncodeEmbeddingsShape(t *testing.T) {
	got := string(llm.EncodeEmbeddings("text-embedding-3-small", [][]float32{{0.5, -0.25}}, 7, false))
	want := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":7,"total_tokens":7}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = string(llm.EncodeEmbeddings(`m"<x>`, [][]float32{{float32(math.NaN()), float32(math.Inf(1))}}, 0, false))
	if !json.Valid([]byte(got)) || !strings.Contains(got, `"embedding":[0,0]`) {
		t.Errorf("NaN and Inf: got %s, want valid JSON with zeros", got)
	}
	got = string(llm.EncodeEmbeddings("m", nil, 0, true))
	if want := `{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":0,"total_tokens":0}}`; got != want {
		t.Errorf("no vectors: got %s, want %s", got, want)
	}
}

// TestEncodeEmbeddingsSDK reads the encoder's answers with the official
// OpenAI Go SDK's types, which decode base64 embeddings themselves.
func TestEncodeEmbeddingsSDK(t *testing.T) {
	for _, b64 := range []bool{false, true} {
		out := llm.EncodeEmbeddings("text-embedding-3-small", vectors, 42, b64)
		var resp openai.CreateEmbeddingResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("base64=%v: %v\n%s", b64, err, out)
		}
		if resp.Object != "list" || resp.Model != "text-embedding-3-small" || resp.Usage.PromptTokens != 42 || resp.Usage.TotalTokens != 42 {
			t.Errorf("base64=%v: got object %q model %q usage %+v", b64, resp.Object, resp.Model, resp.Usage)
		}
		if len(resp.Data) != len(vectors) {
			t.Fatalf("base64=%v: got %d embeddings, want %d", b64, len(resp.Data), len(vectors))
		}
		for i, d := range resp.Data {
			if d.Index != int64(i) || d.Object != "embedding" {
				t.Errorf("base64=%v data[%d]: index %d object %q", b64, i, d.Index, d.Object)
			}
			got := make([]float32, len(d.Embedding))
			for j, f := range d.Embedding {
				got[j] = float32(f)
			}
			if diff := cmp.Diff(vectors[i], got); diff != "" {
				t.Errorf("base64=%v data[%d] (-want +got):\n%s", b64, i, diff)
			}
		}
	}
}

// TestEncodeEmbeddingsBase64Bytes checks the base64 strings themselves:
// little-endian float32s, standard alphabet with padding.
func TestEncodeEmbeddingsBase64Bytes(t *testing.T) {
	out := llm.EncodeEmbeddings("m", vectors[:2], 1, true)
	var resp struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	for i, d := range resp.Data {
		raw, err := base64.StdEncoding.DecodeString(d.Embedding)
		if err != nil {
			t.Fatalf("data[%d]: %v", i, err)
		}
		if len(raw) != 4*len(vectors[i]) {
			t.Fatalf("data[%d]: got %d bytes, want %d", i, len(raw), 4*len(vectors[i]))
		}
		for j, want := range vectors[i] {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])); got != want {
				t.Errorf("data[%d][%d]: got %v, want %v", i, j, got, want)
			}
		}
	}
}

func BenchmarkEncodeEmbeddings(b *testing.B) {
	vecs := make([][]float32, 16)
	for i := range vecs {
		vecs[i] = make([]float32, 1536)
		for j := range vecs[i] {
			vecs[i][j] = float32(math.Sin(float64(i*1536 + j)))
		}
	}
	for _, b64 := range []bool{false, true} {
		name := "float"
		if b64 {
			name = "base64"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = llm.EncodeEmbeddings("text-embedding-3-small", vecs, 100, b64)
			}
		})
	}
}
