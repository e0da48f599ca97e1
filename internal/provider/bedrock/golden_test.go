package bedrock_test

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
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestGolden runs every case in testdata/. A case is a directory holding the
// caller's body (request.json) and the resolved target (target.json), then
// either want_request_error.json (the adapter refuses the request) or
// want_request.json (the Converse request it builds) and, to check the way
// back, one of
//
//   - response.json, Bedrock's Converse answer, with want_output.json;
//   - stream.json, Bedrock's ConverseStream answer as a readable list of
//     events that the test encodes into real event stream frames (and
//     optionally stream_info.json), with want_events.json;
//   - error.json and status (the HTTP status on the first line, response
//     headers on the next ones), with want_error.json.
//
// The request goes over the wire to an httptest server that replays the
// answer. `go test ./internal/provider/bedrock/ -update` rewrites the want_*
// files; review the diff before committing.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/")
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, dir) })
	}
}

type targetFile struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url,omitempty"`
	Region   string `json:"region,omitempty"`
}

// wireRequest is want_request.json: the upstream request as it went out.
type wireRequest struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Header        map[string]string `json:"header"`
	ContentLength int64             `json:"content_length"`
	Body          json.RawMessage   `json:"body"`
}

// output is want_output.json: what DecodeChatFor returned. The completion's
// id and created, fresh on every call, are replaced by placeholders.
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
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, Region: tf.Region}
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json must be a valid chat request: %v", err)
	}
	a := bedrock.New()
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	if err != nil {
		goldentest.Golden(t, dir, "want_request_error.json", goldentest.ErrorOf(err))
		return
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
	sent := replayBody(t, hreq)
	gotReq := wireRequest{Method: hreq.Method, URL: wantURL, Header: goldentest.Flatten(hreq.Header), ContentLength: hreq.ContentLength}
	hreq.URL.Scheme, hreq.URL.Host = "http", srv.Listener.Addr().String()
	resp, err := srv.Client().Do(hreq)
	if err != nil {
		t.Fatalf("sending the upstream request: %v", err)
	}
	defer resp.Body.Close()
	rec := <-got
	if u, err := url.Parse(wantURL); err != nil || rec.method != gotReq.Method || rec.host != u.Host {
		t.Errorf("on the wire: got %s host %s, want %s %s", rec.method, rec.host, gotReq.Method, wantURL)
	}
	if want := hreq.URL.RequestURI(); rec.uri != want {
		t.Errorf("path on the wire: got %s, want %s (the model id stays escaped)", rec.uri, want)
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := rec.header.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
		}
	}
	if !bytes.Equal(rec.body, sent) {
		t.Errorf("body on the wire differs from GetBody's")
	}
	if !json.Valid(rec.body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.body)
	}
	gotReq.Body = rec.body
	goldentest.Golden(t, dir, "want_request.json", &gotReq)

	switch kind {
	case "response":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out, usage, model, err := a.DecodeChatFor(target.Model, body)
		o := output{Model: model, Usage: usage, Error: goldentest.ErrorOf(err)}
		if err == nil {
			o.Body = normalizeCompletion(t, out, "chat.completion")
		}
		goldentest.Golden(t, dir, "want_output.json", &o)
	case "stream":
		var si struct {
			HideUsage bool   `json:"hide_usage"`
			Model     string `json:"model"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "stream_info.json")); err == nil {
			goldentest.MustUnmarshal(t, "stream_info.json", b, &si)
		}
		ev := relay(t, a, resp.Body, provider.StreamInfo{HideUsage: si.HideUsage, Model: si.Model})
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

// normalizeCompletion checks the completion's id and created and replaces
// them with placeholders.
func normalizeCompletion(t *testing.T, out []byte, object string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	goldentest.MustUnmarshal(t, "completion", out, &m)
	var id string
	var created int64
	_ = json.Unmarshal(m["id"], &id)
	_ = json.Unmarshal(m["created"], &created)
	if !strings.HasPrefix(id, "chatcmpl-") || created <= 0 {
		t.Errorf("completion id %q created %d: want a chatcmpl- id and a time", id, created)
	}
	if string(m["object"]) != strconv.Quote(object) {
		t.Errorf("object: got %s, want %q", m["object"], object)
	}
	m["id"], m["created"] = json.RawMessage(`"chatcmpl-ID"`), json.RawMessage(`0`)
	b, _ := json.Marshal(m)
	return b
}

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
	case exists("stream.json"):
		return upstreamAnswer{status: http.StatusOK, header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
			body: encodeStream(t, goldentest.ReadFile(t, dir, "stream.json")), chunked: true}, "stream"
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
	// Odd-sized pieces split frames, headers and payloads.
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

func replayBody(t *testing.T, r *http.Request) []byte {
	t.Helper()
	if r.GetBody == nil {
		t.Fatal("the upstream request has no GetBody: it cannot be retried or signed")
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

// checkNoLeak checks that on 401 and 403 the provider's message reaches
// neither the caller nor the log.
func checkNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	var b struct {
		Message string `json:"message"`
	}
	sent := string(apierr.JSON(e)) + "\n" + e.Error()
	if json.Unmarshal(body, &b) == nil && b.Message != "" && strings.Contains(sent, b.Message) {
		t.Errorf("HTTP %d: the provider's message %q is relayed: %s", status, b.Message, sent)
	}
}
