package cohere_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// clock is the adapter's time in golden files.
var clock = time.Unix(1754489201, 0)

// TestGolden runs every case in testdata/. A case is a directory holding the
// caller's body — request.json (chat) or rerank_request.json (rerank) — the
// target (target.json) and the upstream request the adapter must build
// (want_request.json); then, for the way back, one of
//
//   - response.json, Cohere's answer, with want_output.json;
//   - stream.sse, Cohere's stream (optionally stream_info.json, the
//     StreamInfo the caller sets), with want_events.json;
//   - error.json and status (the HTTP status on the first line, response
//     headers on the next ones), with want_error.json.
//
// A request.json that svc accepts but Cohere cannot express has
// want_request_error.json instead. `go test ./internal/provider/cohere/
// -update` rewrites the want_* files; review the diff before committing.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "target.json"))
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

type targetFile struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	BaseURL    string `json:"base_url"`
	APIVersion string `json:"api_version,omitempty"`
}

// wireRequest is want_request.json: the upstream request as built.
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

func runCase(t *testing.T, dir string) {
	var tf targetFile
	goldentest.MustUnmarshal(t, "target.json", goldentest.ReadFile(t, dir, "target.json"), &tf)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, APIVersion: tf.APIVersion}
	a := cohere.NewAt(clock)

	var (
		hreq   *http.Request
		err    error
		rerank *llm.RerankRequest
	)
	if exists(dir, "rerank_request.json") {
		rerank, err = llm.DecodeRerankRequest(goldentest.ReadFile(t, dir, "rerank_request.json"))
		if err != nil {
			t.Fatalf("rerank_request.json: %v", err)
		}
		hreq, err = a.NewRerankRequest(context.Background(), target, rerank)
	} else {
		raw := goldentest.ReadFile(t, dir, "request.json")
		req, derr := llm.DecodeChatRequest(raw)
		if derr != nil {
			t.Fatalf("request.json: the caller's body must be a valid chat request: %v", derr)
		}
		hreq, err = a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	}
	if exists(dir, "want_request_error.json") || (err != nil && *goldentest.Update) {
		goldentest.Golden(t, dir, "want_request_error.json", goldentest.ErrorOf(err))
		return
	}
	if err != nil {
		t.Fatalf("building the request: %v", err)
	}
	body := requestBody(t, hreq)
	if !json.Valid(body) {
		t.Fatalf("upstream body is not JSON: %s", body)
	}
	for _, k := range []string{"Authorization", "Api-Key", "X-Api-Key"} {
		if v := hreq.Header.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
		}
	}
	goldentest.Golden(t, dir, "want_request.json", &wireRequest{Method: hreq.Method, URL: hreq.URL.String(), Header: goldentest.Flatten(hreq.Header), Body: body})

	switch {
	case exists(dir, "response.json"):
		resp := goldentest.ReadFile(t, dir, "response.json")
		var o output
		var out []byte
		if rerank != nil {
			out, o.Usage, err = a.DecodeRerank(rerank, resp)
		} else {
			out, o.Usage, o.Model, err = a.DecodeChat(resp)
		}
		o.Error = goldentest.ErrorOf(err)
		if err == nil {
			if !json.Valid(out) {
				t.Fatalf("output is not JSON: %s", out)
			}
			o.Body = out
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

func readStatus(t *testing.T, dir string) (int, http.Header) {
	t.Helper()
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
	return status, h
}

// requestBody reads the body through GetBody (which retries use) and checks
// it is the one the request carries.
func requestBody(t *testing.T, r *http.Request) []byte {
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

// checkNoLeak checks that on 401 and 403 Cohere's message is not relayed
// (it may echo the key), and that no key-like string reaches the caller.
func checkNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	sent := string(apierr.JSON(e)) + "\n" + e.Error()
	var b struct {
		Message string `json:"message"`
	}
	if (status == http.StatusUnauthorized || status == http.StatusForbidden) &&
		json.Unmarshal(body, &b) == nil && b.Message != "" && strings.Contains(sent, b.Message) {
		t.Errorf("HTTP %d: Cohere's message %q is relayed: %s", status, b.Message, sent)
	}
	if strings.Contains(sent, "Bearer ") {
		t.Errorf("a bearer token reaches the caller or the log: %s", sent)
	}
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}
