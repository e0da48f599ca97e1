package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

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
func TestGolden(t *testing.T) { goldentest.Run(t, "request.json", runCase) }

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

func runCase(t *testing.T, c *goldentest.Case) {
	raw := c.Read("request.json")
	var tf targetFile
	c.ReadJSON("target.json", &tf, false)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, Region: tf.Region}
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json must be a valid chat request: %v", err)
	}
	a := bedrock.New()
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	if err != nil {
		c.Want("want_request_error.json", goldentest.ErrorOf(err))
		return
	}
	answer, kind := loadAnswer(t, c)
	wantURL := hreq.URL.String()
	wantURI := hreq.URL.RequestURI()
	sent := goldentest.ReplayBody(t, hreq)
	gotReq := wireRequest{Method: hreq.Method, URL: wantURL, Header: goldentest.Flatten(hreq.Header), ContentLength: hreq.ContentLength}
	rec, resp := goldentest.RoundTrip(t, hreq, answer)
	if u, err := url.Parse(wantURL); err != nil || rec.Method != gotReq.Method || rec.Host != u.Host {
		t.Errorf("on the wire: got %s host %s, want %s %s", rec.Method, rec.Host, gotReq.Method, wantURL)
	}
	if rec.URI != wantURI {
		t.Errorf("path on the wire: got %s, want %s (the model id stays escaped)", rec.URI, wantURI)
	}
	goldentest.NoCredentials(t, rec.Header, "Authorization", "X-Amz-Date", "X-Amz-Security-Token")
	if !bytes.Equal(rec.Body, sent) {
		t.Errorf("body on the wire differs from GetBody's")
	}
	if !json.Valid(rec.Body) {
		t.Fatalf("upstream body is not valid JSON: %q", rec.Body)
	}
	gotReq.Body = rec.Body
	c.Want("want_request.json", &gotReq)

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
		c.Want("want_output.json", &o)
	case "stream":
		var si struct {
			HideUsage bool   `json:"hide_usage"`
			Model     string `json:"model"`
		}
		c.ReadJSON("stream_info.json", &si, true)
		ev := relay(t, a, resp.Body, provider.StreamInfo{HideUsage: si.HideUsage, Model: si.Model})
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

func loadAnswer(t *testing.T, c *goldentest.Case) (goldentest.Answer, string) {
	switch {
	case c.Has("response.json"):
		return goldentest.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: c.Read("response.json")}, "response"
	case c.Has("stream.json"):
		return goldentest.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
			Body: encodeStream(t, c.Read("stream.json")), Chunked: true}, "stream"
	case c.Has("status"):
		status, h := c.Status(http.Header{"Content-Type": {"application/json"}})
		return goldentest.Answer{Status: status, Header: h, Body: c.Read("error.json")}, "error"
	}
	return goldentest.Answer{Status: http.StatusNoContent}, ""
}
