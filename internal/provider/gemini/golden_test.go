package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// TestGolden runs every case in testdata/. A case is a directory holding the
// caller's body (request.json), the resolved target (target.json, with
// "vertex": true for the Vertex AI adapter) and the upstream request the
// adapter must build (want_request.json); then, for the way back, one of
//
//   - response.json, Gemini's GenerateContentResponse, with want_output.json
//     (what DecodeChat returned, "created" zeroed);
//   - stream.sse, Gemini's stream (and optionally stream_info.json, the
//     StreamInfo the caller sets before decoding), with want_events.json;
//   - error.json and status (the HTTP status on the first line, response
//     headers on the next ones), with want_error.json;
//   - nothing, for a case about the request only.
//
// A case whose request must be refused has want_request_error.json instead
// of want_request.json. `go test ./internal/provider/gemini/ -update`
// rewrites the want_* files; review the diff before committing.
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

// targetFile is target.json.
type targetFile struct {
	Vertex   bool   `json:"vertex,omitempty"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"`
}

// wireRequest is want_request.json.
type wireRequest struct {
	Method string            `json:"method"`
	URL    string            `json:"url"`
	Header map[string]string `json:"header"`
	Body   json.RawMessage   `json:"body"`
}

// output is want_output.json.
type output struct {
	Model string               `json:"model"`
	Usage llm.Usage            `json:"usage"`
	Error *goldentest.ErrorOut `json:"error,omitempty"`
	Body  json.RawMessage      `json:"body,omitempty"`
}

// events is want_events.json.
type events struct {
	Events []json.RawMessage `json:"events"`
	End    end               `json:"end"`
	Info   info              `json:"info"`
}

type end struct {
	EOF   bool                 `json:"eof,omitempty"`
	Error *goldentest.ErrorOut `json:"error,omitempty"`
}

type info struct {
	HideUsage bool      `json:"hide_usage"`
	Model     string    `json:"model"`
	Usage     llm.Usage `json:"usage"`
}

func adapterFor(tf targetFile) *gemini.Adapter {
	if tf.Vertex {
		return gemini.NewVertex()
	}
	return gemini.New()
}

func runCase(t *testing.T, dir string) {
	raw := goldentest.ReadFile(t, dir, "request.json")
	var tf targetFile
	goldentest.MustUnmarshal(t, "target.json", goldentest.ReadFile(t, dir, "target.json"), &tf)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, Project: tf.Project, Location: tf.Location}
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json must be a valid chat request: %v", err)
	}
	a := adapterFor(tf)
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	if exists(dir, "want_request_error.json") || err != nil {
		goldentest.Golden(t, dir, "want_request_error.json", goldentest.ErrorOf(err))
		return
	}
	body := replayBody(t, hreq)
	for _, k := range []string{"Authorization", "X-Goog-Api-Key"} {
		if hreq.Header.Get(k) != "" {
			t.Errorf("header %s is set: credentials are upstream/cred's business", k)
		}
	}
	goldentest.Golden(t, dir, "want_request.json", &wireRequest{Method: hreq.Method, URL: hreq.URL.String(), Header: goldentest.Flatten(hreq.Header), Body: body})

	switch {
	case exists(dir, "response.json"):
		out, usage, model, err := a.DecodeChat(goldentest.ReadFile(t, dir, "response.json"))
		o := output{Model: model, Usage: usage, Error: goldentest.ErrorOf(err)}
		if err == nil {
			o.Body = zeroCreated(t, out)
		}
		goldentest.Golden(t, dir, "want_output.json", &o)
	case exists(dir, "stream.sse"):
		var si struct {
			HideUsage bool `json:"hide_usage"`
		}
		if exists(dir, "stream_info.json") {
			goldentest.MustUnmarshal(t, "stream_info.json", goldentest.ReadFile(t, dir, "stream_info.json"), &si)
		}
		ev := relay(t, a, goldentest.ReadFile(t, dir, "stream.sse"), si.HideUsage)
		goldentest.Golden(t, dir, "want_events.json", &ev)
	case exists(dir, "status"):
		status, header := readStatus(t, dir)
		errBody := goldentest.ReadFile(t, dir, "error.json")
		e := a.DecodeError(target.Provider, status, header, errBody)
		if e == nil {
			t.Fatal("DecodeError returned nil")
		}
		checkNoLeak(t, status, errBody, e)
		goldentest.Golden(t, dir, "want_error.json", goldentest.ErrorOf(e))
	}
}

// relay decodes a stream as the proxy does, reading the body in odd-sized
// pieces, and checks every event is one chat.completion.chunk.
func relay(t *testing.T, a *gemini.Adapter, sseBytes []byte, hideUsage bool) events {
	t.Helper()
	si := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(io.NopCloser(&pieceReader{b: sseBytes, n: 37}), si)
	defer st.Close()
	var ev events
	ids := map[string]bool{}
	for {
		e, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				ev.End.EOF = true
				if _, err := st.Next(); !errors.Is(err, io.EOF) {
					t.Errorf("Next after the end: got %v, want io.EOF", err)
				}
			} else {
				ev.End.Error = goldentest.ErrorOf(err)
			}
			break
		}
		var c llm.ChatChunk
		goldentest.MustUnmarshal(t, "relayed chunk", e.Data, &c)
		if c.Object != "chat.completion.chunk" {
			t.Errorf("relayed object %q, want chat.completion.chunk", c.Object)
		}
		if c.Usage != nil && len(c.Choices) != 0 {
			t.Errorf("a chunk carries usage and choices: %s", e.Data)
		}
		if c.Usage != nil && hideUsage {
			t.Errorf("a usage chunk is relayed though HideUsage: %s", e.Data)
		}
		ids[c.ID] = true
		ev.Events = append(ev.Events, zeroCreated(t, e.Data))
	}
	if len(ids) > 1 {
		t.Errorf("chunks carry %d ids, want one", len(ids))
	}
	ev.Info = info{HideUsage: si.HideUsage, Model: si.Model, Usage: si.Usage}
	return ev
}

// pieceReader reads b n bytes at a time, splitting lines and events.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// zeroCreated returns the JSON object b with "created" set to 0: the adapter
// stamps the time of decoding.
func zeroCreated(t *testing.T, b []byte) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	goldentest.MustUnmarshal(t, "output", b, &m)
	if _, ok := m["created"]; !ok {
		t.Errorf("output has no created: %s", b)
	}
	m["created"] = json.RawMessage("0")
	out, _ := json.Marshal(m)
	return out
}

func readStatus(t *testing.T, dir string) (int, http.Header) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(goldentest.ReadFile(t, dir, "status"))), "\n")
	status, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		t.Fatalf("status: the first line must be the HTTP status: %v", err)
	}
	h := http.Header{"Content-Type": {"application/json; charset=UTF-8"}}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("status: header line %q is not Name: value", l)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return status, h
}

// checkNoLeak checks no credential in Google's answer reaches the caller, and
// that on 401 and 403 Google's message is not relayed at all.
func checkNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	sent := string(apierr.JSON(e)) + "\n" + e.Error()
	for _, k := range []string{"AIza", "ya29."} {
		if strings.Contains(sent, k) {
			t.Errorf("a credential (%s…) reaches the caller or the log: %s", k, sent)
		}
	}
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil && b.Error.Message != "" && strings.Contains(sent, b.Error.Message) {
		t.Errorf("HTTP %d: Google's message %q is relayed: %s", status, b.Error.Message, sent)
	}
}

// replayBody reads the request's body through GetBody (the transport's retry
// path) and checks its length.
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
		t.Errorf("ContentLength: got %d, want %d", r.ContentLength, len(b))
	}
	if !json.Valid(b) {
		t.Fatalf("upstream body is not JSON: %q", b)
	}
	return b
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}
