package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// errorBody is the OpenAI error shape.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func TestCallerErrors(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, config.Map{"SVC_MAX_BODY_BYTES": "4096"})
	key, _ := g.newKey(map[string]any{"model_restrictions": []string{"gpt-4o-mini"}})
	revoked, revokedID := g.newKey(nil)
	if code := g.admin("POST", "/api/enterprise/vkeys/"+revokedID+"/revoke", nil, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	ok := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name   string
		key    string
		body   string
		status int
		param  string
	}{
		{"no key", "", ok, 401, ""},
		{"unknown key", "sk-svc-000000000000000000000000000000000000000000000000", ok, 401, ""},
		{"not an svc key", "sk-proj-abc", ok, 401, ""},
		{"revoked key", revoked, ok, 401, ""},
		{"malformed JSON", key, `{"model":`, 400, ""},
		{"not an object", key, `["x"]`, 400, ""},
		{"missing model", key, `{"messages":[{"role":"user","content":"hi"}]}`, 400, "model"},
		{"missing messages", key, `{"model":"gpt-4o-mini"}`, 400, "messages"},
		{"wrong type", key, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":"ten"}`, 400, "max_tokens"},
		{"model not allowed", key, `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, 403, ""},
		{"too large", key, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, 413, ""},
	}
	before := chatCount(fake)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, b := g.post("/v1/chat/completions", c.key, []byte(c.body), nil)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, b)
			}
			var e errorBody
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("body %s is not an OpenAI error", b)
			}
			if c.param != "" && (e.Error.Param == nil || *e.Error.Param != c.param) {
				t.Errorf("param = %v, want %s", e.Error.Param, c.param)
			}
			if resp.Header.Get("x-svc-request-id") == "" {
				t.Error("no x-svc-request-id on an error")
			}
		})
	}
	if n := chatCount(fake) - before; n != 0 {
		t.Errorf("the provider received %d of the rejected requests", n)
	}
	// Every rejected request has its audit entry.
	entries := g.logEntries("", len(cases))
	if len(entries) != len(cases) {
		t.Fatalf("got %d audit entries, want %d (one per rejected request)", len(entries), len(cases))
	}
	statuses := map[float64]int{}
	for _, e := range entries {
		statuses[e["status"].(float64)]++
		if e["metrics"].(map[string]any)["success"] != false {
			t.Errorf("rejected entry marked success: %v", e)
		}
	}
	if statuses[401] != 4 || statuses[400] != 5 || statuses[403] != 1 || statuses[413] != 1 {
		t.Errorf("audit statuses = %v", statuses)
	}
}

func TestUpstreamErrorsMapped(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	cases := []struct {
		upstream string
		want     int
	}{
		{"400", 400}, {"404", 404}, {"401", 502}, {"403", 502}, {"429", 429}, {"500", 502}, {"503", 502},
	}
	for _, tc := range cases {
		t.Run(tc.upstream, func(t *testing.T) {
			status, _ := strconv.Atoi(tc.upstream)
			fake.Set(providertest.WithStatus(status))
			var resp *http.Response
			_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"), option.WithResponseInto(&resp))
			if got := statusOf(err); got != tc.want {
				t.Fatalf("status %d (%v), want %d", got, err, tc.want)
			}
			if tc.want == 429 && resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			var apiErr *openai.Error
			if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, upstreamKey) {
				t.Error("the provider key leaked into the error")
			}
		})
	}
	// Streams: an error before the first byte is an HTTP error, not a stream.
	fake.Set(providertest.WithStatus(500))
	s := c.Chat.Completions.NewStreaming(context.Background(), chatParams("gpt-4o-mini", "hi"))
	for s.Next() {
	}
	if statusOf(s.Err()) != 502 {
		t.Errorf("stream with upstream 500: %v, want 502", s.Err())
	}
}

func TestUpstreamUnreachableAndTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	slow := providertest.NewOpenAI(t, providertest.WithDelay(2*time.Second))
	g := start(t, nil, config.Map{
		"OPENAI_API_BASE":      dead,
		"SLOWAI_API_BASE":      slow.URL(),
		"SLOWAI_API_KEY":       "sk-slow",
		"SVC_UPSTREAM_TIMEOUT": "200ms",
	})
	key, _ := g.newKey(nil)
	c := g.client(key)
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); statusOf(err) != 502 {
		t.Errorf("unreachable provider: %v, want 502", err)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("slowai/gpt-4o-mini", "hi")); statusOf(err) != 504 {
		t.Errorf("slow provider: %v, want 504", err)
	}
	// A provider with no key answers 503 and names the setting.
	_, err = c.Chat.Completions.New(context.Background(), chatParams("groq/llama-3.3-70b-versatile", "hi"))
	var apiErr *openai.Error
	if statusOf(err) != 503 || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "GROQ_API_KEY") {
		t.Errorf("provider without a key: %v, want 503 naming GROQ_API_KEY", err)
	}
}

func TestMidStreamFailureEndsWithErrorEvent(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithChunks(6), providertest.WithCutAfter(2))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	resp, b := g.post("/v1/chat/completions", key, []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	endsWithErrorEvent(t, b)
	entries := g.logEntries("", 1)
	if len(entries) != 1 || entries[0]["error"] == nil || entries[0]["metrics"].(map[string]any)["success"] != false {
		t.Errorf("entry = %v, want the stream failure recorded", entries)
	}
}

// endsWithErrorEvent checks that a stream the provider cut ends with an
// OpenAI-shaped error event, not with [DONE].
func endsWithErrorEvent(t *testing.T, body []byte) {
	t.Helper()
	if strings.Contains(string(body), "[DONE]") {
		t.Errorf("a cut stream ended with [DONE]:\n%s", body)
	}
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	last := events[len(events)-1]
	var e errorBody
	if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "data: ")), &e); err != nil || e.Error.Type != "upstream_error" {
		t.Errorf("last event %q, want an OpenAI-shaped error event", last)
	}
}

// chatCount is how many chat requests the fake received.
func chatCount(fake *providertest.OpenAI) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Path == "/v1/chat/completions" {
			n++
		}
	}
	return n
}
