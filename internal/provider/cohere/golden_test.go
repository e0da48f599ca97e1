package cohere_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

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
func TestGolden(t *testing.T) { goldentest.Run(t, "target.json", runCase) }

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

func runCase(t *testing.T, c *goldentest.Case) {
	var tf targetFile
	c.ReadJSON("target.json", &tf, false)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, APIVersion: tf.APIVersion}
	a := cohere.NewAt(clock)

	var (
		hreq   *http.Request
		err    error
		rerank *llm.RerankRequest
	)
	if c.Has("rerank_request.json") {
		rerank, err = llm.DecodeRerankRequest(c.Read("rerank_request.json"))
		if err != nil {
			t.Fatalf("rerank_request.json: %v", err)
		}
		hreq, err = a.NewRerankRequest(context.Background(), target, rerank)
	} else {
		raw := c.Read("request.json")
		req, derr := llm.DecodeChatRequest(raw)
		if derr != nil {
			t.Fatalf("request.json: the caller's body must be a valid chat request: %v", derr)
		}
		hreq, err = a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	}
	if c.Has("want_request_error.json") || err != nil {
		c.Want("want_request_error.json", goldentest.ErrorOf(err))
		return
	}
	body := goldentest.ReplayBody(t, hreq)
	if !json.Valid(body) {
		t.Fatalf("upstream body is not JSON: %s", body)
	}
	goldentest.NoCredentials(t, hreq.Header, "Authorization", "Api-Key", "X-Api-Key")
	c.Want("want_request.json", &wireRequest{Method: hreq.Method, URL: hreq.URL.String(), Header: goldentest.Flatten(hreq.Header), Body: body})

	switch {
	case c.Has("response.json"):
		resp := c.Read("response.json")
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
		c.Want("want_output.json", &o)
	case c.Has("stream.sse"):
		var si struct {
			HideUsage bool `json:"hide_usage"`
		}
		c.ReadJSON("stream_info.json", &si, true)
		ev := relay(t, a, c.Read("stream.sse"), si.HideUsage)
		c.Want("want_events.json", &ev)
	case c.Has("status"):
		status, header := c.Status(http.Header{"Content-Type": {"application/json"}})
		errBody := c.Read("error.json")
		e := a.DecodeError(target.Provider, status, header, errBody)
		if e == nil {
			t.Fatal("DecodeError returned nil")
		}
		goldentest.CheckNoLeak(t, status, errBody, e)
		c.Want("want_error.json", goldentest.ErrorOf(e))
	}
}
