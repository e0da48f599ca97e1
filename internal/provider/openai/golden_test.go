package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
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

func runCase(t *testing.T, c *goldentest.Case) {
	raw := c.Read("request.json")
	var tf targetFile
	c.ReadJSON("target.json", &tf, false)
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

	answer, kind := loadAnswer(t, c)
	wantURL := hreq.URL.String()
	sentBody := goldentest.ReplayBody(t, hreq)
	gotReq := wireRequest{
		Method:        hreq.Method,
		URL:           wantURL,
		Header:        goldentest.Flatten(hreq.Header),
		ContentLength: hreq.ContentLength,
	}
	// Send it to the fake provider, keeping the Host the adapter chose.
	rec, resp := goldentest.RoundTrip(t, hreq, answer)
	checkWire(t, rec, wantURL, gotReq, sentBody)
	gotReq.BodyBytes = bodyBytes(raw, rec.Body)
	gotReq.Body = rec.Body
	if !json.Valid(rec.Body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.Body)
	}
	checkProviderView(t, rec.Body, target.Model, req.Stream)
	c.Want("want_request.json", &gotReq)

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
		c.Want("want_output.json", &o)
	case "stream":
		var si struct {
			HideUsage bool `json:"hide_usage"`
		}
		c.ReadJSON("stream_info.json", &si, true)
		ev := relay(t, a, resp.Body, si.HideUsage, answer.Body)
		c.Want("want_events.json", &ev)
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
func loadAnswer(t *testing.T, c *goldentest.Case) (goldentest.Answer, string) {
	switch {
	case c.Has("response.json"):
		return goldentest.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: c.Read("response.json")}, "response"
	case c.Has("stream.sse"):
		return goldentest.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}},
			Body: c.Read("stream.sse"), Chunked: true}, "stream"
	case c.Has("status"):
		status, h := c.Status(nil)
		for _, name := range []string{"error.json", "error.html"} {
			if c.Has(name) {
				if h.Get("Content-Type") == "" {
					h.Set("Content-Type", "application/json")
					if strings.HasSuffix(name, ".html") {
						h.Set("Content-Type", "text/html")
					}
				}
				return goldentest.Answer{Status: status, Header: h, Body: c.Read(name)}, "error"
			}
		}
		t.Fatal("a case with a status file needs error.json or error.html")
	}
	// A request-only case: answer something, check nothing more.
	return goldentest.Answer{Status: http.StatusNoContent}, ""
}

// checkWire checks that what arrived is what the adapter built.
func checkWire(t *testing.T, rec goldentest.Received, wantURL string, built wireRequest, sent []byte) {
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
	goldentest.NoCredentials(t, rec.Header, "Authorization", "Api-Key", "X-Api-Key")
	if !bytes.Equal(rec.Body, sent) {
		t.Errorf("body on the wire differs from GetBody's:\ngot  %s\nwant %s", rec.Body, sent)
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
