package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/providertest"
)

// The fake Cohere is tested through the Cohere adapter: what the adapter
// sends, the fake understands, and what the fake answers, the adapter reads.

const cohKey = "co-test-key"

func cohTarget(s *providertest.Cohere, model string) provider.Deployment {
	return provider.Deployment{Provider: "cohere", Model: model, BaseURL: s.URL()}
}

// cohDo sends req with the key and extra headers, and returns status, header
// and body.
func cohDo(t *testing.T, req *http.Request, header map[string]string) (int, http.Header, io.ReadCloser) {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+cohKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.StatusCode, resp.Header, resp.Body
}

func cohChat(t *testing.T, s *providertest.Cohere, body string, header map[string]string) (int, http.Header, io.ReadCloser) {
	t.Helper()
	req, err := llm.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	hreq, err := cohere.New().NewChatRequest(context.Background(), cohTarget(s, req.Model), provider.ChatCall{Req: req, Raw: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return cohDo(t, hreq, header)
}

const cohTools = `,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}]`

func TestCohereChat(t *testing.T) {
	s := providertest.NewCohere(t, providertest.CohWithAPIKey(cohKey), providertest.CohWithReply("Bonjour, ça va?"))
	status, _, body := cohChat(t, s, `{"model":"command-a-03-2025","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"}]}`, nil)
	raw, _ := io.ReadAll(body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	out, usage, _, err := cohere.New().DecodeChat(raw)
	if err != nil {
		t.Fatal(err)
	}
	var resp llm.ChatResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content.String(); got != "Bonjour, ça va?" || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("got %q finish %q, want the reply and stop", got, resp.Choices[0].FinishReason)
	}
	wantUsage := llm.Usage{PromptTokens: int64(len("Be brief.Hello there") / 4), CompletionTokens: int64(len("Bonjour, ça va?") / 4)}
	wantUsage.TotalTokens = wantUsage.PromptTokens + wantUsage.CompletionTokens
	if diff := cmp.Diff(wantUsage, usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	rec := s.LastRequest()
	if rec.Path != "/v2/chat" || !strings.Contains(string(rec.Body), `"role":"system"`) {
		t.Errorf("recorded %s %s, want POST /v2/chat with the system message", rec.Path, rec.Body)
	}
}

// cohStreamAll decodes a stream with the adapter and assembles it.
func cohStreamAll(t *testing.T, body io.ReadCloser, hide bool) (content string, calls []llm.ToolCall, finish string, info *provider.StreamInfo, end error) {
	t.Helper()
	info = &provider.StreamInfo{HideUsage: hide}
	st := cohere.New().DecodeChatStream(body, info)
	defer st.Close()
	for {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return content, calls, finish, info, err
		}
		var c llm.ChatChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				content += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				if *d.Index == len(calls) {
					calls = append(calls, llm.ToolCall{ID: d.ID, Type: d.Type, Function: llm.FunctionCall{Name: d.Function.Name}})
				}
				calls[*d.Index].Function.Arguments += d.Function.Arguments
			}
		}
	}
}

func TestCohereStream(t *testing.T) {
	s := providertest.NewCohere(t, providertest.CohWithChunks(7))
	_, _, body := cohChat(t, s, `{"model":"command-a-03-2025","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, nil)
	content, calls, finish, info, err := cohStreamAll(t, body, false)
	if err != nil || content != providertest.CohDefaultReply || finish != "stop" || len(calls) != 0 {
		t.Errorf("got %q, finish %q, calls %v, err %v; want the reply, stop", content, finish, calls, err)
	}
	if info.Usage.PromptTokens != 1 || info.Usage.CompletionTokens != int64(len(providertest.CohDefaultReply)/4) {
		t.Errorf("usage: got %+v", info.Usage)
	}
}

func TestCohereToolCall(t *testing.T) {
	s := providertest.NewCohere(t)
	const msgs = `"messages":[{"role":"user","content":"Toronto"}]`
	_, _, body := cohChat(t, s, `{"model":"command-a-03-2025","stream":true,`+msgs+cohTools+`}`, nil)
	_, calls, finish, _, err := cohStreamAll(t, body, true)
	if err != nil || finish != "tool_calls" || len(calls) != 1 {
		t.Fatalf("got calls %v finish %q err %v, want one call and tool_calls", calls, finish, err)
	}
	if calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"location":"Toronto"}` {
		t.Errorf("stream call: got %+v", calls[0])
	}
	_, _, body = cohChat(t, s, `{"model":"command-a-03-2025",`+msgs+cohTools+`}`, nil)
	raw, _ := io.ReadAll(body)
	out, _, _, err := cohere.New().DecodeChat(raw)
	if err != nil {
		t.Fatal(err)
	}
	var resp llm.ChatResponse
	_ = json.Unmarshal(out, &resp)
	if tc := resp.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Arguments != calls[0].Function.Arguments || tc[0].Function.Name != "get_weather" {
		t.Errorf("non-stream call: got %+v, want the stream's arguments", tc)
	}
	// After the tool's answer the model replies with text.
	_, _, body = cohChat(t, s, `{"model":"command-a-03-2025","messages":[{"role":"user","content":"Toronto"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"20C"}]`+cohTools+`}`, nil)
	raw, _ = io.ReadAll(body)
	if !strings.Contains(string(raw), `"finish_reason":"COMPLETE"`) {
		t.Errorf("after the tool result: got %s, want a text answer", raw)
	}
}

func TestCohereCutStream(t *testing.T) {
	s := providertest.NewCohere(t)
	_, _, body := cohChat(t, s, `{"model":"command-a-03-2025","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, map[string]string{providertest.HeaderCutAfter: "2"})
	_, _, _, _, err := cohStreamAll(t, body, false)
	if apierr.KindOf(err) != apierr.UpstreamError {
		t.Errorf("got %v, want an UpstreamError", err)
	}
}

func TestCohereRerank(t *testing.T) {
	s := providertest.NewCohere(t)
	r, err := llm.DecodeRerankRequest([]byte(`{"model":"rerank-v3.5","query":"capital of the United States","top_n":2,"return_documents":true,
		"documents":["Carson City is the capital of Nevada.",{"text":"Washington, D.C. is the capital of the United States.","id":"dc"},"Bees make honey."]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := cohere.New()
	hreq, err := a.NewRerankRequest(context.Background(), cohTarget(s, "rerank-v3.5"), r)
	if err != nil {
		t.Fatal(err)
	}
	status, _, body := cohDo(t, hreq, nil)
	raw, _ := io.ReadAll(body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	out, _, err := a.DecodeRerank(r, raw)
	if err != nil {
		t.Fatal(err)
	}
	var resp llm.RerankResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range resp.Results {
		got = append(got, strconv.Itoa(res.Index)+":"+strconv.FormatFloat(res.RelevanceScore, 'f', 2, 64)+":"+res.Document.Text)
	}
	want := []string{"1:1.00:Washington, D.C. is the capital of the United States.", "0:0.60:Carson City is the capital of Nevada."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestCohereModels(t *testing.T) {
	s := providertest.NewCohere(t, providertest.CohWithModels("command-a-03-2025", "rerank-v3.5"))
	a := cohere.New()
	hreq, err := a.NewModelsRequest(context.Background(), cohTarget(s, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := cohDo(t, hreq, nil)
	raw, _ := io.ReadAll(body)
	names, err := a.DecodeModels(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"command-a-03-2025", "rerank-v3.5"}, names); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

func TestCohereErrors(t *testing.T) {
	s := providertest.NewCohere(t, providertest.CohWithAPIKey(cohKey), providertest.CohWithRecording(2))
	a := cohere.New()
	for _, tc := range []struct {
		header   map[string]string
		wantKind apierr.Kind
	}{
		{map[string]string{providertest.HeaderStatus: "400"}, apierr.InvalidRequest},
		{map[string]string{providertest.HeaderStatus: "404"}, apierr.NotFound},
		{map[string]string{providertest.HeaderStatus: "429"}, apierr.RateLimited},
		{map[string]string{providertest.HeaderStatus: "500"}, apierr.UpstreamError},
		{map[string]string{"Authorization": "Bearer wrong"}, apierr.UpstreamError},
	} {
		status, h, body := cohChat(t, s, `{"model":"command-a-03-2025","messages":[{"role":"user","content":"Hi"}]}`, tc.header)
		raw, _ := io.ReadAll(body)
		var shape struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(raw, &shape); err != nil || shape.Message == "" {
			t.Errorf("%v: body %s is not Cohere's error shape", tc.header, raw)
		}
		e := a.DecodeError("cohere", status, h, raw)
		if e.Kind != tc.wantKind {
			t.Errorf("%v: got kind %v (status %d), want %v", tc.header, e.Kind, status, tc.wantKind)
		}
		if e.Kind == apierr.RateLimited && e.RetryAfter <= 0 {
			t.Errorf("429: no Retry-After")
		}
	}
	if n := len(s.Requests()); n != 2 || s.Count() != 5 {
		t.Errorf("recorded %d of %d requests, want the last 2 of 5", n, s.Count())
	}
}
