package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// gemDo sends body through adapter a to the fake, signed with signer, and
// returns the response.
func gemDo(t *testing.T, a *gemini.Adapter, target provider.Deployment, body string, signer cred.Signer, key string, header http.Header) (*http.Response, *llm.ChatRequest) {
	t.Helper()
	req, err := llm.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		hreq.Header[k] = v
	}
	if err := signer.Sign(hreq, key); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, req
}

const gemHello = `{"model":"gemini-2.5-flash","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"}]}`

func TestGeminiChat(t *testing.T) {
	s := providertest.NewGemini(t, providertest.GemAPIKey("AIza-test-key"), providertest.GemReply("Hi! Nice to meet you."))
	a := gemini.New()
	target := provider.Deployment{Provider: "gemini", Model: "gemini-2.5-flash", BaseURL: s.URL()}
	resp, _ := gemDo(t, a, target, gemHello, cred.Header{Name: "x-goog-api-key"}, "AIza-test-key", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	out, usage, model, err := a.DecodeChat(body)
	if err != nil {
		t.Fatal(err)
	}
	var c llm.ChatResponse
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content.Text; got != "Hi! Nice to meet you." {
		t.Errorf("content: got %q, want the reply", got)
	}
	if model != "gemini-2.5-flash" || usage.PromptTokens == 0 || usage.CompletionTokens == 0 {
		t.Errorf("model %q usage %+v: want the model and non-zero usage", model, usage)
	}
	rec := s.LastRequest()
	if rec.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || !strings.Contains(string(rec.Body), `"systemInstruction"`) {
		t.Errorf("recorded %s %s, want the generateContent path and a systemInstruction", rec.Path, rec.Body)
	}
	if s.Count() != 1 {
		t.Errorf("Count: got %d, want 1", s.Count())
	}
}

func TestGeminiStreamVertex(t *testing.T) {
	s := providertest.NewGemini(t, providertest.GemBearer("ya29.fake"), providertest.GemChunks(4), providertest.GemReply("one two three four five six"))
	a := gemini.NewVertex()
	target := provider.Deployment{Provider: "vertex", Model: "gemini-2.5-pro", BaseURL: s.URL(), Project: "p1", Location: "us-central1"}
	body := `{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"count"}],"stream":true}`
	resp, _ := gemDo(t, a, target, body, cred.Bearer{}, "ya29.fake", nil)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	info := &provider.StreamInfo{}
	st := a.DecodeChatStream(resp.Body, info)
	defer st.Close()
	var text strings.Builder
	n := 0
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		var c llm.ChatChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
		}
	}
	if text.String() != "one two three four five six" || n != 5 {
		t.Errorf("got %q in %d chunks, want the reply in 4 chunks and a usage chunk", text.String(), n)
	}
	if info.Usage.PromptTokens == 0 || info.Model != "gemini-2.5-pro" {
		t.Errorf("info: got %+v, want usage and model", info)
	}
	if got := s.LastRequest().Path; got != "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent" {
		t.Errorf("path: got %s", got)
	}
}

func TestGeminiFunctionCall(t *testing.T) {
	s := providertest.NewGemini(t)
	a := gemini.New()
	target := provider.Deployment{Provider: "gemini", Model: "gemini-2.5-flash", BaseURL: s.URL()}
	body := `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`
	resp, _ := gemDo(t, a, target, body, cred.Bearer{}, "", nil)
	b, _ := io.ReadAll(resp.Body)
	out, _, _, err := a.DecodeChat(b)
	if err != nil {
		t.Fatal(err)
	}
	var c llm.ChatResponse
	_ = json.Unmarshal(out, &c)
	if len(c.Choices) != 1 || len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].Message.ToolCalls[0].Function.Name != "get_weather" || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("got %s, want one get_weather tool call", out)
	}
}

func TestGeminiErrors(t *testing.T) {
	s := providertest.NewGemini(t, providertest.GemAPIKey("right"))
	a := gemini.New()
	target := provider.Deployment{Provider: "gemini", Model: "gemini-2.5-flash", BaseURL: s.URL()}
	for _, tc := range []struct {
		name   string
		key    string
		status string
		want   apierr.Kind
	}{
		{"wrong key", "wrong", "", apierr.UpstreamError},
		{"no key", "", "", apierr.UpstreamError},
		{"404", "right", "404", apierr.NotFound},
		{"429", "right", "429", apierr.RateLimited},
		{"500", "right", "500", apierr.UpstreamError},
		{"504", "right", "504", apierr.UpstreamTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.status != "" {
				h.Set(providertest.HeaderStatus, tc.status)
			}
			resp, _ := gemDo(t, a, target, gemHello, cred.Header{Name: "x-goog-api-key"}, tc.key, h)
			b, _ := io.ReadAll(resp.Body)
			e := a.DecodeError("gemini", resp.StatusCode, resp.Header, b)
			if e.Kind != tc.want {
				t.Errorf("HTTP %d %s: got kind %v (%s), want %v", resp.StatusCode, b, e.Kind, e.Message, tc.want)
			}
			if tc.want == apierr.RateLimited && e.RetryAfter == 0 {
				t.Error("429 without Retry-After")
			}
		})
	}
}

func TestGeminiModelsAndRecording(t *testing.T) {
	s := providertest.NewGemini(t, providertest.GemModels("gemini-x", "gemini-y"), providertest.GemRecording(2))
	a := gemini.New()
	target := provider.Deployment{BaseURL: s.URL()}
	for range 3 {
		req, err := a.NewModelsRequest(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ids, err := a.DecodeModels(b)
		if err != nil || len(ids) != 2 || ids[0] != "gemini-x" {
			t.Fatalf("models: got %v %v, want [gemini-x gemini-y]", ids, err)
		}
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("recorded: got %d, want 2 (bounded)", n)
	}
	if s.Count() != 3 {
		t.Errorf("Count: got %d, want 3", s.Count())
	}
}
