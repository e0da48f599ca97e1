package providertest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/providertest"
)

const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello to the gateway tests."}]}`

// promptTokens is the usage the fake computes for chatBody: bytes of message
// text / 4.
var promptTokens = (len("You are terse.") + len("Say hello to the gateway tests.")) / 4

func post(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func streamBody(includeUsage bool) string {
	b := strings.TrimSuffix(chatBody, "}") + `,"stream":true`
	if includeUsage {
		b += `,"stream_options":{"include_usage":true}`
	}
	return b + "}"
}

// Wire shapes of the OpenAI API reference.
type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func wantUsage(prompt, completion, cached, reasoning int) *usageJSON {
	u := &usageJSON{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	u.PromptTokensDetails.CachedTokens = cached
	u.CompletionTokensDetails.ReasoningTokens = reasoning
	return u
}

type completionJSON struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string  `json:"role"`
			Content string  `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

type chunkJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

type errorJSON struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func TestChatCompletion(t *testing.T) {
	s := providertest.NewOpenAI(t)
	before := time.Now().Unix()
	resp := post(t, s.URL()+"/chat/completions", chatBody, map[string]string{
		providertest.HeaderCachedTokens:    "4",
		providertest.HeaderReasoningTokens: "7",
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status: got %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(raw)) {
		t.Errorf("Content-Length: got %s, want %d", cl, len(raw))
	}

	// Every field the API reference shows is there.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
	for _, k := range []string{"id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"} {
		if _, ok := top[k]; !ok {
			t.Errorf("body has no %q: %s", k, raw)
		}
	}

	var got completionJSON
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.ID, "chatcmpl-") {
		t.Errorf("id: got %q, want chatcmpl-…", got.ID)
	}
	if got.Created < before || got.Created > time.Now().Unix() {
		t.Errorf("created: got %d, want about now (%d)", got.Created, before)
	}
	if got.Object != "chat.completion" || got.Model != "gpt-4o-mini" {
		t.Errorf("object, model: got %q, %q, want chat.completion, gpt-4o-mini", got.Object, got.Model)
	}
	if len(got.Choices) != 1 {
		t.Fatalf("choices: got %d, want 1", len(got.Choices))
	}
	c := got.Choices[0]
	if c.Index != 0 || c.Message.Role != "assistant" || c.Message.Content != providertest.DefaultReply || c.Message.Refusal != nil || c.FinishReason != "stop" {
		t.Errorf("choice: got %+v", c)
	}
	want := wantUsage(promptTokens, len(providertest.DefaultReply)/4+7, 4, 7)
	if diff := cmp.Diff(want, got.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestChatCompletionEchoesModelAndReply(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithReply("default"))
	tests := []struct {
		name, model, header, want string
	}{
		{"option", "gpt-4o", "", "default"},
		{"header", "my-model", "from the header", "from the header"},
		{"escaping", `we"ird\model`, "tab\tä \"q\" \\ ✓", "tab\tä \"q\" \\ ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{
				"model":    tt.model,
				"messages": []map[string]string{{"role": "user", "content": "hi"}},
			})
			h := map[string]string{}
			if tt.header != "" {
				h[providertest.HeaderReply] = tt.header
			}
			var got completionJSON
			if err := json.NewDecoder(post(t, s.URL()+"/chat/completions", string(body), h).Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got.Model != tt.model {
				t.Errorf("model: got %q, want %q", got.Model, tt.model)
			}
			if got.Choices[0].Message.Content != tt.want {
				t.Errorf("content: got %q, want %q", got.Choices[0].Message.Content, tt.want)
			}
		})
	}
}

func TestPromptTokensCountContentParts(t *testing.T) {
	s := providertest.NewOpenAI(t)
	text := strings.Repeat("abcd", 10) // 40 bytes: 10 tokens
	body := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"` + text + `"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[]},{"role":"user","content":"esc\"aped"}]}`
	var got completionJSON
	if err := json.NewDecoder(post(t, s.URL()+"/chat/completions", body, nil).Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want := (40 + len(`esc"aped`)) / 4; got.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens: got %d, want %d", got.Usage.PromptTokens, want)
	}
}

// event is one server-sent event's data.
func readEvents(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if blank {
				t.Errorf("two blank lines in a row after event %d", len(events))
			}
			blank = true
			continue
		}
		if !blank {
			t.Errorf("event %d has more than one line: %q", len(events), line)
		}
		blank = false
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Errorf("line %q is not a data line", line)
		}
		events = append(events, data)
	}
	return events, sc.Err()
}

func TestChatStream(t *testing.T) {
	s := providertest.NewOpenAI(t)
	for _, includeUsage := range []bool{false, true} {
		t.Run("include_usage="+strconv.FormatBool(includeUsage), func(t *testing.T) {
			resp := post(t, s.URL()+"/chat/completions", streamBody(includeUsage), map[string]string{
				providertest.HeaderChunks:       "3",
				providertest.HeaderCachedTokens: "2",
			})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status: got %d, want 200", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type: got %q, want text/event-stream", ct)
			}
			events, err := readEvents(t, resp.Body)
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			// role, 3 content, finish, [usage], [DONE]
			want := 1 + 3 + 1 + 1
			if includeUsage {
				want++
			}
			if len(events) != want {
				t.Fatalf("events: got %d, want %d:\n%s", len(events), want, strings.Join(events, "\n"))
			}
			if last := events[len(events)-1]; last != "[DONE]" {
				t.Fatalf("last event: got %q, want [DONE]", last)
			}
			chunks := make([]chunkJSON, len(events)-1)
			for i, e := range events[:len(events)-1] {
				if err := json.Unmarshal([]byte(e), &chunks[i]); err != nil {
					t.Fatalf("event %d %q: %v", i, e, err)
				}
				c := chunks[i]
				if c.Object != "chat.completion.chunk" || c.Model != "gpt-4o-mini" || c.ID != chunks[0].ID || c.Created != chunks[0].Created {
					t.Errorf("chunk %d: object, model, id, created: got %q, %q, %q, %d", i, c.Object, c.Model, c.ID, c.Created)
				}
				var fields map[string]json.RawMessage
				_ = json.Unmarshal([]byte(e), &fields)
				u, hasUsage := fields["usage"]
				if includeUsage && i < len(chunks)-1 && (!hasUsage || string(u) != "null") {
					t.Errorf(`chunk %d: usage: got %s, want null`, i, u)
				}
				if !includeUsage && hasUsage {
					t.Errorf("chunk %d has usage without include_usage", i)
				}
			}

			if d := chunks[0].Choices[0].Delta; d.Role != "assistant" || d.Content == nil || *d.Content != "" {
				t.Errorf("first chunk: got delta %+v, want the assistant role and empty content", d)
			}
			var text strings.Builder
			for i, c := range chunks[1:4] {
				ch := c.Choices[0]
				if ch.Delta.Content == nil || ch.FinishReason != nil || ch.Delta.Role != "" {
					t.Fatalf("content chunk %d: got %+v", i, ch)
				}
				text.WriteString(*ch.Delta.Content)
			}
			if text.String() != providertest.DefaultReply {
				t.Errorf("streamed text: got %q, want %q", text.String(), providertest.DefaultReply)
			}
			fin := chunks[4].Choices[0]
			if fin.FinishReason == nil || *fin.FinishReason != "stop" || fin.Delta.Content != nil {
				t.Errorf("finish chunk: got %+v, want finish_reason stop and an empty delta", fin)
			}
			if includeUsage {
				u := chunks[5]
				if u.Choices == nil || len(u.Choices) != 0 {
					t.Errorf("usage chunk: choices: got %v, want []", u.Choices)
				}
				if diff := cmp.Diff(wantUsage(promptTokens, len(providertest.DefaultReply)/4, 2, 0), u.Usage); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestChatStreamSplitsUTF8(t *testing.T) {
	s := providertest.NewOpenAI(t)
	reply := "héllo wörld — ünïcode ✓"
	for _, n := range []int{1, 2, 7, 40} {
		resp := post(t, s.URL()+"/chat/completions", streamBody(false), map[string]string{
			providertest.HeaderChunks: strconv.Itoa(n),
			providertest.HeaderReply:  reply,
		})
		events, err := readEvents(t, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != n+3 {
			t.Fatalf("chunks %d: got %d events, want %d", n, len(events), n+3)
		}
		var text strings.Builder
		for _, e := range events[1 : n+1] {
			var c chunkJSON
			if err := json.Unmarshal([]byte(e), &c); err != nil {
				t.Fatal(err)
			}
			text.WriteString(*c.Choices[0].Delta.Content)
		}
		if text.String() != reply {
			t.Errorf("chunks %d: got %q, want %q", n, text.String(), reply)
		}
	}
}

func TestErrors(t *testing.T) {
	s := providertest.NewOpenAI(t)
	str := func(s string) *string { return &s }
	tests := []struct {
		status   int
		typ      string
		code     *string
		endpoint string
		body     string
	}{
		{400, "invalid_request_error", nil, "/chat/completions", chatBody},
		{401, "invalid_request_error", str("invalid_api_key"), "/chat/completions", chatBody},
		{404, "invalid_request_error", str("model_not_found"), "/chat/completions", chatBody},
		{429, "requests", str("rate_limit_exceeded"), "/chat/completions", chatBody},
		{429, "requests", str("rate_limit_exceeded"), "/chat/completions", streamBody(true)},
		{500, "server_error", nil, "/chat/completions", chatBody},
		{500, "server_error", nil, "/chat/completions", streamBody(false)},
		{502, "server_error", nil, "/chat/completions", chatBody},
		{503, "server_error", nil, "/chat/completions", chatBody},
		{418, "invalid_request_error", nil, "/chat/completions", chatBody},
		{500, "server_error", nil, "/embeddings", `{"model":"text-embedding-3-small","input":"x"}`},
		{429, "requests", str("rate_limit_exceeded"), "/chat/completions", `not json`},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status)+tt.endpoint, func(t *testing.T) {
			resp := post(t, s.URL()+tt.endpoint, tt.body, map[string]string{providertest.HeaderStatus: strconv.Itoa(tt.status)})
			checkError(t, resp, tt.status, tt.typ, tt.code)
			if ra := resp.Header.Get("Retry-After"); (tt.status == 429) != (ra == "1") {
				t.Errorf("Retry-After: got %q with status %d", ra, tt.status)
			}
		})
	}

	t.Run("option", func(t *testing.T) {
		s := providertest.NewOpenAI(t, providertest.WithStatus(503))
		checkError(t, post(t, s.URL()+"/chat/completions", chatBody, nil), 503, "server_error", nil)
		// A header wins over the option.
		resp := post(t, s.URL()+"/chat/completions", chatBody, map[string]string{providertest.HeaderStatus: "200"})
		if resp.StatusCode != 200 {
			t.Errorf("X-Fake-Status 200 over WithStatus(503): got %d, want 200", resp.StatusCode)
		}
	})
}

func checkError(t *testing.T, resp *http.Response, status int, typ string, code *string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status: got %d, want %d", resp.StatusCode, status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	raw, _ := io.ReadAll(resp.Body)
	var keys map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("error body %s: %v", raw, err)
	}
	var got []string
	for k := range keys["error"] {
		got = append(got, k)
	}
	if len(keys) != 1 || len(got) != 4 {
		t.Errorf("error body: got %s, want exactly {\"error\":{message,type,param,code}}", raw)
	}
	var e errorJSON
	_ = json.Unmarshal(raw, &e)
	if e.Error.Message == "" || e.Error.Type != typ {
		t.Errorf("error: got message %q type %q, want a message and type %q", e.Error.Message, e.Error.Type, typ)
	}
	if diff := cmp.Diff(code, e.Error.Code); diff != "" {
		t.Errorf("error code (-want +got):\n%s", diff)
	}
}

func TestInvalidRequests(t *testing.T) {
	s := providertest.NewOpenAI(t)
	str := func(s string) *string { return &s }
	tests := []struct {
		name, path, body string
		header           map[string]string
		status           int
		code             *string
	}{
		{"not json", "/chat/completions", `{"model":`, nil, 400, nil},
		{"no model", "/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil, 400, nil},
		{"no messages", "/chat/completions", `{"model":"m"}`, nil, 400, str("missing_required_parameter")},
		{"empty messages", "/chat/completions", `{"model":"m","messages":[]}`, nil, 400, str("empty_array")},
		{"bad chunks header", "/chat/completions", chatBody, map[string]string{providertest.HeaderChunks: "0"}, 400, nil},
		{"bad delay header", "/chat/completions", chatBody, map[string]string{providertest.HeaderDelay: "soon"}, 400, nil},
		{"embeddings without input", "/embeddings", `{"model":"e"}`, nil, 400, str("missing_required_parameter")},
		{"embeddings bad input", "/embeddings", `{"model":"e","input":{"a":1}}`, nil, 400, str("invalid_type")},
		{"embeddings bad dimensions", "/embeddings", `{"model":"e","input":"x","dimensions":-3}`, nil, 400, str("invalid_value")},
		{"unknown path", "/completions/nope", `{}`, nil, 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, post(t, s.URL()+tt.path, tt.body, tt.header), tt.status, "invalid_request_error", tt.code)
		})
	}
}

func TestAPIKey(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-right"))
	str := func(s string) *string { return &s }
	tests := []struct {
		name, auth string
		status     int
		code       *string
	}{
		{"missing", "", 401, nil},
		{"wrong", "Bearer sk-wrong", 401, str("invalid_api_key")},
		{"not bearer", "Basic sk-right", 401, nil},
		{"right", "Bearer sk-right", 200, nil},
		{"right, lower-case scheme", "bearer sk-right", 200, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.auth != "" {
				h["Authorization"] = tt.auth
			}
			resp := post(t, s.URL()+"/chat/completions", chatBody, h)
			if tt.status == 200 {
				if resp.StatusCode != 200 {
					t.Fatalf("status: got %d, want 200", resp.StatusCode)
				}
				return
			}
			checkError(t, resp, tt.status, "invalid_request_error", tt.code)
		})
	}
}

func TestCutAfter(t *testing.T) {
	s := providertest.NewOpenAI(t)
	for _, cut := range []int{0, 2, 5} {
		t.Run("stream after "+strconv.Itoa(cut), func(t *testing.T) {
			resp := post(t, s.URL()+"/chat/completions", streamBody(true), map[string]string{
				providertest.HeaderChunks:   "5",
				providertest.HeaderCutAfter: strconv.Itoa(cut),
			})
			if resp.StatusCode != 200 {
				t.Fatalf("status: got %d, want 200", resp.StatusCode)
			}
			events, err := readEvents(t, resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("reading: got error %v, want unexpected EOF", err)
			}
			if len(events) != 1+cut {
				t.Errorf("events: got %d, want the role chunk and %d content chunks", len(events), cut)
			}
			for _, e := range events {
				if e == "[DONE]" {
					t.Error("got [DONE] in a cut stream")
				}
			}
		})
	}
	t.Run("non-stream", func(t *testing.T) {
		resp := post(t, s.URL()+"/chat/completions", chatBody, map[string]string{providertest.HeaderCutAfter: "0"})
		if resp.StatusCode != 200 {
			t.Fatalf("status: got %d, want 200", resp.StatusCode)
		}
		b, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reading: got error %v after %d bytes, want unexpected EOF", err, len(b))
		}
		if json.Valid(b) {
			t.Errorf("got a complete body %s", b)
		}
	})
	t.Run("server still serves", func(t *testing.T) {
		if resp := post(t, s.URL()+"/chat/completions", chatBody, nil); resp.StatusCode != 200 {
			t.Errorf("status: got %d, want 200", resp.StatusCode)
		}
	})
}

// Delays are lower bounds only: a slow machine makes them longer, never shorter.
func TestDelays(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithChunkDelay(15*time.Millisecond))
	start := time.Now()
	resp := post(t, s.URL()+"/chat/completions", streamBody(false), map[string]string{
		providertest.HeaderDelay:  "60ms",
		providertest.HeaderChunks: "4",
	})
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("headers after %v, want at least 60ms", d)
	}
	start = time.Now()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 4*15*time.Millisecond {
		t.Errorf("4 chunks 15ms apart took %v", d)
	}
	// A bare number is milliseconds.
	start = time.Now()
	post(t, s.URL()+"/chat/completions", chatBody, map[string]string{providertest.HeaderDelay: "30"})
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("X-Fake-Delay 30: headers after %v, want at least 30ms", d)
	}
}

func TestCloseCutsPendingRequests(t *testing.T) {
	s, err := providertest.StartOpenAI("127.0.0.1:0", providertest.WithDelay(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(chatBody))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for s.Count() == 0 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on a delayed request")
	}
	if err := <-errc; err == nil {
		t.Error("the pending request succeeded, want an error")
	}
}

func TestRecording(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithRecording(3))
	if got := s.LastRequest(); got.Method != "" {
		t.Errorf("LastRequest before any: got %+v, want zero", got)
	}
	for i := range 5 {
		post(t, s.URL()+"/chat/completions?n="+strconv.Itoa(i), chatBody, map[string]string{"X-Seq": strconv.Itoa(i)})
	}
	got := s.Requests()
	if len(got) != 3 {
		t.Fatalf("Requests: got %d, want the last 3", len(got))
	}
	for i, r := range got {
		seq := strconv.Itoa(i + 2)
		if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.RawQuery != "n="+seq || r.Header.Get("X-Seq") != seq || string(r.Body) != chatBody {
			t.Errorf("request %d: got %s %s?%s X-Seq %s body %q", i, r.Method, r.Path, r.RawQuery, r.Header.Get("X-Seq"), r.Body)
		}
	}
	if last := s.LastRequest(); last.Header.Get("X-Seq") != "4" {
		t.Errorf("LastRequest: got X-Seq %q, want 4", last.Header.Get("X-Seq"))
	}
	if s.Count() != 5 {
		t.Errorf("Count: got %d, want 5", s.Count())
	}

	// Copies: changing them changes nothing recorded.
	got[2].Header.Set("X-Seq", "changed")
	got[2].Body[0] = 'X'
	if last := s.LastRequest(); last.Header.Get("X-Seq") != "4" || last.Body[0] != '{' {
		t.Error("changing a returned Recorded changed the record")
	}

	s.Set(providertest.WithRecording(2))
	if got := s.Requests(); len(got) != 2 || got[1].Header.Get("X-Seq") != "4" || got[0].Header.Get("X-Seq") != "3" {
		t.Errorf("after shrinking to 2: got %d requests", len(got))
	}
	s.Set(providertest.WithRecording(10))
	post(t, s.URL()+"/models", "", nil)
	if got := s.Requests(); len(got) != 3 || got[2].Path != "/v1/models" {
		t.Errorf("after growing to 10 and one more request: got %d requests", len(got))
	}

	s.Reset()
	if len(s.Requests()) != 0 || s.Count() != 0 || s.LastRequest().Method != "" {
		t.Error("Reset kept requests")
	}

	off := providertest.NewOpenAI(t, providertest.WithRecording(0))
	post(t, off.URL()+"/chat/completions", chatBody, nil)
	if len(off.Requests()) != 0 || off.Count() != 1 {
		t.Errorf("WithRecording(0): got %d recorded, count %d; want 0, 1", len(off.Requests()), off.Count())
	}
}

func TestRecordingBoundUnderConcurrency(t *testing.T) {
	s := providertest.NewOpenAI(t)
	const workers, each = 8, 150
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				body := streamBody(i%2 == 0)
				if i%3 == 0 {
					body = chatBody
				}
				req, _ := http.NewRequest("POST", s.URL()+"/chat/completions", strings.NewReader(body))
				req.Header.Set("X-Worker", strconv.Itoa(w))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if i%50 == 0 {
					_ = s.Requests()
					_ = s.LastRequest()
				}
			}
		})
	}
	wg.Wait()
	if got := len(s.Requests()); got != providertest.DefaultRecordLimit {
		t.Errorf("Requests after %d: got %d, want the bound %d", workers*each, got, providertest.DefaultRecordLimit)
	}
	if s.Count() != workers*each {
		t.Errorf("Count: got %d, want %d", s.Count(), workers*each)
	}
}

func TestSetChangesDefaults(t *testing.T) {
	s := providertest.NewOpenAI(t)
	s.Set(providertest.WithStatus(429))
	checkError(t, post(t, s.URL()+"/chat/completions", chatBody, nil), 429, "requests", func() *string { c := "rate_limit_exceeded"; return &c }())
	s.Set(providertest.WithStatus(0), providertest.WithReply("changed\n\"line\""))
	var got completionJSON
	if err := json.NewDecoder(post(t, s.URL()+"/chat/completions", chatBody, nil).Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != "changed\n\"line\"" {
		t.Errorf("reply after Set: got %q, want changed", got.Choices[0].Message.Content)
	}
}

func TestModels(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithModels("a", "b/c"))
	resp, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b/c" || list.Data[0].Object != "model" || list.Data[0].OwnedBy == "" || list.Data[0].Created == 0 {
		t.Errorf("models: got %+v", list)
	}

	resp, err = http.Get(s.URL() + "/models/a")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /models/a: got %d, want 200", resp.StatusCode)
	}
	resp, err = http.Get(s.URL() + "/models/nope")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	code := "model_not_found"
	checkError(t, resp, 404, "invalid_request_error", &code)
}

func TestEmbeddings(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithEmbeddingDimensions(8))
	type embeddingsJSON struct {
		Object string `json:"object"`
		Data   []struct {
			Object    string          `json:"object"`
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	embed := func(body string) embeddingsJSON {
		t.Helper()
		resp := post(t, s.URL()+"/embeddings", body, nil)
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var e embeddingsJSON
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	vec := func(raw json.RawMessage) []float32 {
		var v []float32
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	one := embed(`{"model":"text-embedding-3-small","input":"hello world, hello"}`)
	if one.Object != "list" || one.Model != "text-embedding-3-small" || len(one.Data) != 1 || one.Data[0].Object != "embedding" {
		t.Fatalf("got %+v", one)
	}
	if one.Usage.PromptTokens != len("hello world, hello")/4 || one.Usage.TotalTokens != one.Usage.PromptTokens {
		t.Errorf("usage: got %+v", one.Usage)
	}
	v := vec(one.Data[0].Embedding)
	if diff := cmp.Diff(providertest.Embedding("hello world, hello", 8), v); diff != "" {
		t.Errorf("vector (-want +got):\n%s", diff)
	}
	var norm float64
	for _, f := range v {
		norm += float64(f) * float64(f)
	}
	if norm < 0.999 || norm > 1.001 {
		t.Errorf("|v|² = %v, want 1", norm)
	}

	many := embed(`{"model":"e","input":["hello world, hello","other"],"dimensions":4}`)
	if len(many.Data) != 2 || many.Data[1].Index != 1 {
		t.Fatalf("got %+v", many)
	}
	if diff := cmp.Diff(providertest.Embedding("other", 4), vec(many.Data[1].Embedding)); diff != "" {
		t.Errorf("second vector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(providertest.Embedding("hello world, hello", 4), vec(many.Data[0].Embedding)); diff != "" {
		t.Errorf("equal inputs gave different vectors (-want +got):\n%s", diff)
	}

	tokens := embed(`{"model":"e","input":[[1,2,3],[4]]}`)
	if len(tokens.Data) != 2 || tokens.Usage.PromptTokens != 4 {
		t.Errorf("token arrays: got %d vectors, %d tokens; want 2, 4", len(tokens.Data), tokens.Usage.PromptTokens)
	}

	b64 := embed(`{"model":"e","input":"other","encoding_format":"base64","dimensions":4}`)
	var s64 string
	if err := json.Unmarshal(b64.Data[0].Embedding, &s64); err != nil {
		t.Fatalf("base64 embedding: %v", err)
	}
	if want := base64LE(providertest.Embedding("other", 4)); s64 != want {
		t.Errorf("base64: got %q, want %q", s64, want)
	}
}

func TestStartOpenAI(t *testing.T) {
	s, err := providertest.StartOpenAI("127.0.0.1:0", providertest.WithRecording(0), providertest.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasSuffix(s.URL(), "/v1") || !strings.Contains(s.URL(), s.Addr()) {
		t.Errorf("URL %q, Addr %q", s.URL(), s.Addr())
	}
	resp := post(t, s.URL()+"/chat/completions", streamBody(true), map[string]string{"Authorization": "Bearer k"})
	b, _ := io.ReadAll(resp.Body)
	if !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
		t.Errorf("stream does not end with [DONE]: %q", b)
	}
	if _, err := providertest.StartOpenAI(s.Addr()); err == nil {
		t.Error("StartOpenAI on a used address: got no error")
	}
}

func TestRequestCanceledDuringChunkDelay(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithChunkDelay(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", strings.NewReader(streamBody(false)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("first line: got %q, %v", line, err)
	}
	cancel()
	// The cleanup's Close must not hang on the handler waiting an hour.
}
