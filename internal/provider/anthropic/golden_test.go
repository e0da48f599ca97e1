package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/")
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, dir) })
	}
}

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

type upstreamAnswer struct {
	status  int
	header  http.Header
	body    []byte
	chunked bool
}

type received struct {
	method, host, uri string
	header            http.Header
	body              []byte
}

func runCase(t *testing.T, dir string) {
	raw := goldentest.ReadFile(t, dir, "request.json")
	var tf targetFile
	goldentest.MustUnmarshal(t, "target.json", goldentest.ReadFile(t, dir, "target.json"), &tf)
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

	answer, kind := loadAnswer(t, dir)
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method, host: r.Host, uri: r.URL.RequestURI(), header: r.Header.Clone(), body: body}
		for k, v := range answer.header {
			w.Header()[k] = v
		}
		w.WriteHeader(answer.status)
		writeBody(w, answer)
	}))
	defer srv.Close()

	wantURL := hreq.URL.String()
	gotReq := wireRequest{Method: hreq.Method, URL: wantURL, Header: goldentest.Flatten(hreq.Header), ContentLength: hreq.ContentLength}
	hreq.URL.Scheme, hreq.URL.Host = "http", srv.Listener.Addr().String()
	resp, err := srv.Client().Do(hreq)
	if err != nil {
		t.Fatalf("sending the upstream request: %v", err)
	}
	defer resp.Body.Close()
	rec := <-got
	checkWire(t, rec, wantURL, gotReq)
	if int64(len(rec.body)) != gotReq.ContentLength {
		t.Errorf("ContentLength: got %d, want %d (the body's length)", gotReq.ContentLength, len(rec.body))
	}
	if !json.Valid(rec.body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.body)
	}
	checkMessagesRequest(t, rec.body, target.Model, req.Stream)
	gotReq.Body = rec.body
	goldentest.Golden(t, dir, "want_request.json", &gotReq)

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
		goldentest.Golden(t, dir, "want_output.json", &o)
	case "stream":
		var si struct {
			HideUsage bool `json:"hide_usage"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "stream_info.json")); err == nil {
			goldentest.MustUnmarshal(t, "stream_info.json", b, &si)
		}
		ev := relay(t, a, resp.Body, si.HideUsage)
		goldentest.Golden(t, dir, "want_events.json", &ev)
	case "native":
		ev := relayNative(t, resp.Body, answer.body)
		goldentest.Golden(t, dir, "want_native.json", &ev)
	case "error":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		e := a.DecodeError(target.Provider, resp.StatusCode, resp.Header, body)
		if e == nil {
			t.Fatal("DecodeError returned nil")
		}
		checkNoLeak(t, resp.StatusCode, body, e)
		goldentest.Golden(t, dir, "want_error.json", goldentest.ErrorOf(e))
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

func loadAnswer(t *testing.T, dir string) (upstreamAnswer, string) {
	t.Helper()
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	sseHeader := http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}
	switch {
	case exists("response.json"):
		return upstreamAnswer{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}},
			body: goldentest.ReadFile(t, dir, "response.json")}, "response"
	case exists("stream.sse"):
		return upstreamAnswer{status: http.StatusOK, header: sseHeader, body: goldentest.ReadFile(t, dir, "stream.sse"), chunked: true}, "stream"
	case exists("native.sse"):
		return upstreamAnswer{status: http.StatusOK, header: sseHeader, body: goldentest.ReadFile(t, dir, "native.sse"), chunked: true}, "native"
	case exists("status"):
		lines := strings.Split(strings.TrimSpace(string(goldentest.ReadFile(t, dir, "status"))), "\n")
		status, err := strconv.Atoi(strings.TrimSpace(lines[0]))
		if err != nil {
			t.Fatalf("status: first line must be the HTTP status: %v", err)
		}
		h := http.Header{"Content-Type": {"application/json"}}
		for _, l := range lines[1:] {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				t.Fatalf("status: header line %q is not Name: value", l)
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		return upstreamAnswer{status: status, header: h, body: goldentest.ReadFile(t, dir, "error.json")}, "error"
	}
	return upstreamAnswer{status: http.StatusNoContent}, ""
}

func writeBody(w http.ResponseWriter, a upstreamAnswer) {
	if !a.chunked {
		_, _ = w.Write(a.body)
		return
	}
	// Odd-sized pieces split lines, events and UTF-8 sequences.
	const piece = 37
	f, _ := w.(http.Flusher)
	for b := a.body; len(b) > 0; {
		n := min(piece, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		b = b[n:]
	}
}

func checkWire(t *testing.T, rec received, wantURL string, built wireRequest) {
	t.Helper()
	if rec.method != built.Method {
		t.Errorf("method on the wire: got %s, want %s", rec.method, built.Method)
	}
	if u, err := url.Parse(wantURL); err != nil || u.Host != rec.host || u.RequestURI() != rec.uri {
		t.Errorf("URL on the wire: got host %s path %s, want %s", rec.host, rec.uri, wantURL)
	}
	for k, v := range built.Header {
		if got := strings.Join(rec.header.Values(k), ", "); got != v {
			t.Errorf("header %s on the wire: got %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"Authorization", "X-Api-Key"} {
		if v := rec.header.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
		}
	}
	if rec.header.Get("Anthropic-Version") == "" {
		t.Error("header anthropic-version: got none, want one (Anthropic requires it)")
	}
}
