package gemini_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
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
func TestGolden(t *testing.T) { goldentest.Run(t, "request.json", runCase) }

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
	End    goldentest.End    `json:"end"`
	Info   goldentest.Info   `json:"info"`
}

func adapterFor(tf targetFile) *gemini.Adapter {
	if tf.Vertex {
		return gemini.NewVertex()
	}
	return gemini.New()
}

func runCase(t *testing.T, c *goldentest.Case) {
	raw := c.Read("request.json")
	var tf targetFile
	c.ReadJSON("target.json", &tf, false)
	target := provider.Deployment{Provider: tf.Provider, Model: tf.Model, BaseURL: tf.BaseURL, Project: tf.Project, Location: tf.Location}
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatalf("request.json must be a valid chat request: %v", err)
	}
	a := adapterFor(tf)
	hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: raw})
	if c.Has("want_request_error.json") || err != nil {
		c.Want("want_request_error.json", goldentest.ErrorOf(err))
		return
	}
	body := goldentest.ReplayBody(t, hreq)
	if !json.Valid(body) {
		t.Fatalf("upstream body is not JSON: %q", body)
	}
	goldentest.NoCredentials(t, hreq.Header, "Authorization", "X-Goog-Api-Key")
	c.Want("want_request.json", &wireRequest{Method: hreq.Method, URL: hreq.URL.String(), Header: goldentest.Flatten(hreq.Header), Body: body})

	switch {
	case c.Has("response.json"):
		out, usage, model, err := a.DecodeChat(c.Read("response.json"))
		o := output{Model: model, Usage: usage, Error: goldentest.ErrorOf(err)}
		if err == nil {
			o.Body = zeroCreated(t, out)
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
		status, header := c.Status(http.Header{"Content-Type": {"application/json; charset=UTF-8"}})
		errBody := c.Read("error.json")
		e := a.DecodeError(target.Provider, status, header, errBody)
		if e == nil {
			t.Fatal("DecodeError returned nil")
		}
		goldentest.CheckNoLeak(t, status, errBody, e)
		c.Want("want_error.json", goldentest.ErrorOf(e))
	}
}

// relay decodes a stream as the proxy does, reading the body in odd-sized
// pieces, and checks every event is one chat.completion.chunk.
func relay(t *testing.T, a *gemini.Adapter, sseBytes []byte, hideUsage bool) events {
	t.Helper()
	si := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(goldentest.Pieces(sseBytes), si)
	defer st.Close()
	var ev events
	ids := map[string]bool{}
	ev.End = goldentest.Drain(t, st, func(e sse.Event) {
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
	})
	if len(ids) > 1 {
		t.Errorf("chunks carry %d ids, want one", len(ids))
	}
	ev.Info = goldentest.InfoOf(si)
	goldentest.CheckToolCalls(t, ev.Info, ev.Events)
	return ev
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
