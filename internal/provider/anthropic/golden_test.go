package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestGolden runs every case in testdata/. A case is a directory holding the
// caller's OpenAI chat body (request.json), the resolved target (target.json)
// and the Messages API request the adapter must build (want_request.json);
// then, to check the answer's way back, one of
//
//   - response.json, Anthropic's non-stream answer, with want_output.json;
//   - stream.sse, Anthropic's stream (and optionally stream_info.json, the
//     StreamInfo the caller sets before decoding), with want_events.json;
//   - native.sse, an Anthropic stream relayed by NativeStream, with
//     want_native.json;
//   - error.json and status (the HTTP status on the first line, response
//     headers on the next ones), with want_error.json.
//
// The request goes over the wire to an httptest server that replays the
// provider's answer. `go test ./internal/provider/anthropic/ -update`
// rewrites the want_* files; review the diff before committing.
func TestGolden(t *testing.T) { goldentest.Run(t, "request.json", runCase) }

// targetFile is target.json.
type targetFile struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	BaseURL    string `json:"base_url"`
	APIVersion string `json:"api_version,omitempty"`
}

// wireRequest is want_request.json: the upstream request as it went out.
type wireRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	// Header is every header the adapter set (credentials are added later,
	// by upstream/cred, so there must be none here).
	Header        map[string]string `json:"header"`
	ContentLength int64             `json:"content_length"`
	Body          json.RawMessage   `json:"body"`
}

// output is want_output.json: what DecodeChat returned.
type output struct {
	Model string               `json:"model"`
	Usage llm.Usage            `json:"usage"`
	Error *goldentest.ErrorOut `json:"error,omitempty"`
	Body  json.RawMessage      `json:"body,omitempty"`
}

func runCase(t *testing.T, c *goldentest.Case) {
	raw := c.Read("request.json")
	var tf targetFile
	c.ReadJSON("target.json", &tf, false)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, APIVersion: tf.APIVersion}

	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json: the caller's body must be a valid chat request: %v", err)
	}
	if err := req.FillExtra(raw); err != nil {
		t.Fatal(err)
	}
	a := anthropic.New()
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	if err != nil {
		t.Fatalf("NewChatRequest: %v", err)
	}

	answer, kind := loadAnswer(c)
	wantURL := hreq.URL.String()
	gotReq := wireRequest{Method: hreq.Method, URL: wantURL, Header: goldentest.Flatten(hreq.Header), ContentLength: hreq.ContentLength}
	rec, resp := goldentest.RoundTrip(t, hreq, answer)
	checkWire(t, rec, wantURL, gotReq)
	if int64(len(rec.Body)) != gotReq.ContentLength {
		t.Errorf("ContentLength: got %d, want %d (the body's length)", gotReq.ContentLength, len(rec.Body))
	}
	if !json.Valid(rec.Body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.Body)
	}
	checkMessagesRequest(t, rec.Body, target.Model, req.Stream)
	gotReq.Body = rec.Body
	c.Want("want_request.json", &gotReq)

	switch kind {
	case "response":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out, usage, model, err := a.DecodeChat(body)
		o := output{Model: model, Usage: usage, Error: goldentest.ErrorOf(err)}
		if err == nil && !json.Valid(out) {
			t.Fatalf("DecodeChat output is not valid JSON: %q", out)
		}
		if err == nil {
			checkCompletion(t, out)
			o.Body = out
		}
		c.Want("want_output.json", &o)
	case "stream":
		var si struct {
			HideUsage bool `json:"hide_usage"`
		}
		c.ReadJSON("stream_info.json", &si, true)
		ev := relay(t, a, resp.Body, si.HideUsage)
		c.Want("want_events.json", &ev)
	case "native":
		ev := relayNative(t, resp.Body, answer.Body)
		c.Want("want_native.json", &ev)
	case "error":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		e := a.DecodeError(target.Provider, resp.StatusCode, resp.Header, body)
		if e == nil {
			t.Fatal("DecodeError returned nil")
		}
		goldentest.CheckNoLeak(t, resp.StatusCode, body, e)
		c.Want("want_error.json", goldentest.ErrorOf(e))
	}
}

// checkMessagesRequest checks the Messages API's own demands on the body:
// the target's model, a positive max_tokens, non-empty messages whose roles
// alternate user/assistant, and stream set as the caller asked.
func checkMessagesRequest(t *testing.T, body []byte, model string, stream bool) {
	t.Helper()
	var v struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		Messages  []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	goldentest.MustUnmarshal(t, "upstream body", body, &v)
	if v.Model != model {
		t.Errorf("model: got %q, want %q", v.Model, model)
	}
	if v.MaxTokens < 1 {
		t.Errorf("max_tokens: got %d, want at least 1 (Anthropic requires it)", v.MaxTokens)
	}
	if v.Stream != stream {
		t.Errorf("stream: got %v, want %v", v.Stream, stream)
	}
	if len(v.Messages) == 0 {
		t.Error("messages: got none, want at least one")
	}
	for i, m := range v.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			t.Errorf("messages[%d].role: got %q, want user or assistant", i, m.Role)
		}
		if i > 0 && m.Role == v.Messages[i-1].Role {
			t.Errorf("messages[%d].role: got %q twice in a row, want them to alternate", i, m.Role)
		}
		if len(m.Content) == 0 {
			t.Errorf("messages[%d].content: got no blocks", i)
		}
	}
}

// checkCompletion checks that DecodeChat's output reads as a chat completion.
func checkCompletion(t *testing.T, out []byte) {
	t.Helper()
	var c llm.ChatResponse
	goldentest.MustUnmarshal(t, "DecodeChat output", out, &c)
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].Message.Role != "assistant" {
		t.Errorf("DecodeChat output: got object %q with %d choices, want one assistant chat.completion choice", c.Object, len(c.Choices))
	}
	for _, tc := range c.Choices[0].Message.ToolCalls {
		if !json.Valid([]byte(tc.Function.Arguments)) {
			t.Errorf("tool call %s: arguments %q are not valid JSON", tc.ID, tc.Function.Arguments)
		}
	}
}

func loadAnswer(c *goldentest.Case) (goldentest.Answer, string) {
	sseHeader := http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}
	switch {
	case c.Has("response.json"):
		return goldentest.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: c.Read("response.json")}, "response"
	case c.Has("stream.sse"):
		return goldentest.Answer{Status: http.StatusOK, Header: sseHeader, Body: c.Read("stream.sse"), Chunked: true}, "stream"
	case c.Has("native.sse"):
		return goldentest.Answer{Status: http.StatusOK, Header: sseHeader, Body: c.Read("native.sse"), Chunked: true}, "native"
	case c.Has("status"):
		status, h := c.Status(http.Header{"Content-Type": {"application/json"}})
		return goldentest.Answer{Status: status, Header: h, Body: c.Read("error.json")}, "error"
	}
	return goldentest.Answer{Status: http.StatusNoContent}, ""
}

func checkWire(t *testing.T, rec goldentest.Received, wantURL string, built wireRequest) {
	t.Helper()
	if rec.Method != built.Method {
		t.Errorf("method on the wire: got %s, want %s", rec.Method, built.Method)
	}
	if u, err := url.Parse(wantURL); err != nil || u.Host != rec.Host || u.RequestURI() != rec.URI {
		t.Errorf("URL on the wire: got host %s path %s, want %s", rec.Host, rec.URI, wantURL)
	}
	for k, v := range built.Header {
		if got := strings.Join(rec.Header.Values(k), ", "); got != v {
			t.Errorf("header %s on the wire: got %q, want %q", k, got, v)
		}
	}
	goldentest.NoCredentials(t, rec.Header, "Authorization", "X-Api-Key")
	if rec.Header.Get("Anthropic-Version") == "" {
		t.Error("header anthropic-version: got none, want one (Anthropic requires it)")
	}
}
