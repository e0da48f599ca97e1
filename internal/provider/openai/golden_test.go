package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// TestGolden runs every case in testdata/. A case is a directory holding the
// caller's body (request.json), the resolved target (target.json) and the
// upstream request the adapter must build (want_request.json); then, to check
// the answer's way back, one of
//
//   - response.json, the provider's non-stream answer, with want_output.json;
//   - stream.sse, the provider's stream (and optionally stream_info.json, the
//     StreamInfo the caller sets before decoding), with want_events.json;
//   - error.json or error.html, the provider's error answer, and status (the
//     HTTP status on the first line, response headers on the next ones), with
//     want_error.json.
//
// The request goes over the wire to an httptest server that replays the
// provider's answer. `go test ./internal/provider/openai/ -update` rewrites
// the want_* files from the current output; review the diff before committing.
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
	// BodyBytes says how the body's bytes relate to the caller's: "verbatim"
	// (the same bytes), "include_usage_inserted" (the same bytes with
	// "stream_options":{"include_usage":true} inserted after the opening
	// brace) or "rewritten" (re-encoded: Body is compared as JSON only).
	BodyBytes string          `json:"body_bytes"`
	Body      json.RawMessage `json:"body"`
}

// output is want_output.json: what DecodeChat returned.
type output struct {
	// BodyVerbatim is true when the body out is the provider's bytes.
	BodyVerbatim bool                 `json:"body_verbatim"`
	Model        string               `json:"model"`
	Usage        llm.Usage            `json:"usage"`
	Error        *goldentest.ErrorOut `json:"error,omitempty"`
	Body         json.RawMessage      `json:"body,omitempty"`
}

// upstreamAnswer is what the fake provider replies.
type upstreamAnswer struct {
	status int
	header http.Header
	body   []byte
	// chunked writes the body in small flushed pieces, as a stream arrives.
	chunked bool
}

// received is the request as the fake provider saw it.
type received struct {
	method, host, uri string
	header            http.Header
	body              []byte
}

func runCase(t *testing.T, dir string) {
	raw := goldentest.ReadFile(t, dir, "request.json")
	var tf targetFile
	goldentest.MustUnmarshal(t, filepath.Join(dir, "target.json"), goldentest.ReadFile(t, dir, "target.json"), &tf)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, APIVersion: tf.APIVersion}

	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json: the caller's body must be a valid chat request: %v", err)
	}
	a := openai.New()
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
	sentBody := replayBody(t, hreq)
	gotReq := wireRequest{
		Method:        hreq.Method,
		URL:           wantURL,
		Header:        goldentest.Flatten(hreq.Header),
		ContentLength: hreq.ContentLength,
	}

	// Send it to the fake provider, keeping the Host the adapter chose.
	hreq.URL.Scheme, hreq.URL.Host = "http", srv.Listener.Addr().String()
	resp, err := srv.Client().Do(hreq)
	if err != nil {
		t.Fatalf("sending the upstream request: %v", err)
	}
	defer resp.Body.Close()
	rec := <-got
	checkWire(t, rec, wantURL, gotReq, sentBody)
	gotReq.BodyBytes = bodyBytes(raw, rec.body)
	gotReq.Body = rec.body
	if !json.Valid(rec.body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.body)
	}
	checkProviderView(t, rec.body, target.Model, req.Stream)
	goldentest.Golden(t, dir, "want_request.json", &gotReq)

	switch kind {
	case "response":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out, usage, model, err := a.DecodeChat(body)
		o := output{BodyVerbatim: bytes.Equal(out, body), Model: model, Usage: usage, Error: goldentest.ErrorOf(err)}
		if json.Valid(out) {
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
		ev := relay(t, a, resp.Body, si.HideUsage, answer.body)
		goldentest.Golden(t, dir, "want_events.json", &ev)
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

// checkProviderView checks the upstream body as a provider reads it (escapes
// decoded; of duplicate keys, the last wins, as in Python's json and Go's):
// the model is the target's and a stream asks for usage.
func checkProviderView(t *testing.T, body []byte, model string, stream bool) {
	t.Helper()
	var v struct {
		Model         string `json:"model"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("upstream body: %v", err)
	}
	// Only the exact keys count: a provider ignores "Model" or rejects it.
	exact, _ := json.Marshal(map[string]json.RawMessage{"model": fields["model"], "stream_options": fields["stream_options"]})
	goldentest.MustUnmarshal(t, "upstream body", exact, &v)
	if v.Model != model {
		t.Errorf("the provider reads model %q, want %q", v.Model, model)
	}
	if stream && (v.StreamOptions == nil || !v.StreamOptions.IncludeUsage) {
		t.Errorf("the provider reads stream_options %s, want include_usage true (svc bills from it)", fields["stream_options"])
	}
}

// loadAnswer reads what the fake provider replies and which golden file
// checks the adapter's decoding of it.
func loadAnswer(t *testing.T, dir string) (upstreamAnswer, string) {
	t.Helper()
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case exists("response.json"):
		return upstreamAnswer{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}},
			body: goldentest.ReadFile(t, dir, "response.json")}, "response"
	case exists("stream.sse"):
		return upstreamAnswer{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}},
			body: goldentest.ReadFile(t, dir, "stream.sse"), chunked: true}, "stream"
	case exists("status"):
		lines := strings.Split(strings.TrimSpace(string(goldentest.ReadFile(t, dir, "status"))), "\n")
		status, err := strconv.Atoi(strings.TrimSpace(lines[0]))
		if err != nil {
			t.Fatalf("status: first line must be the HTTP status: %v", err)
		}
		h := http.Header{}
		for _, l := range lines[1:] {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				t.Fatalf("status: header line %q is not Name: value", l)
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		for _, name := range []string{"error.json", "error.html"} {
			if exists(name) {
				if h.Get("Content-Type") == "" {
					h.Set("Content-Type", "application/json")
					if strings.HasSuffix(name, ".html") {
						h.Set("Content-Type", "text/html")
					}
				}
				return upstreamAnswer{status: status, header: h, body: goldentest.ReadFile(t, dir, name)}, "error"
			}
		}
		t.Fatal("a case with a status file needs error.json or error.html")
	}
	// A request-only case: answer something, check nothing more.
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

// replayBody reads the request's body through GetBody, which the transport
// uses to retry, and checks it is the body the request carries.
func replayBody(t *testing.T, r *http.Request) []byte {
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
		t.Errorf("ContentLength: got %d, want %d (the body's length)", r.ContentLength, len(b))
	}
	return b
}

// checkWire checks that what arrived is what the adapter built.
func checkWire(t *testing.T, rec received, wantURL string, built wireRequest, sent []byte) {
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
	for _, k := range []string{"Authorization", "Api-Key", "X-Api-Key"} {
		if v := rec.header.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
		}
	}
	if !bytes.Equal(rec.body, sent) {
		t.Errorf("body on the wire differs from GetBody's:\ngot  %s\nwant %s", rec.body, sent)
	}
}

var includeUsage = []byte(`"stream_options":{"include_usage":true},`)

// bodyBytes classifies the upstream body's bytes against the caller's.
func bodyBytes(raw, sent []byte) string {
	if bytes.Equal(raw, sent) {
		return "verbatim"
	}
	if i := bytes.IndexByte(raw, '{'); i >= 0 {
		ins := slices.Concat(raw[:i+1], includeUsage, raw[i+1:])
		if bytes.Equal(ins, sent) {
			return "include_usage_inserted"
		}
		// An empty object gets no trailing comma.
		ins = slices.Concat(raw[:i+1], includeUsage[:len(includeUsage)-1], raw[i+1:])
		if bytes.Equal(ins, sent) {
			return "include_usage_inserted"
		}
	}
	return "rewritten"
}
