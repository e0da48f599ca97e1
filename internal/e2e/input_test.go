package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

// TestManagementRefusesNULAndInvalidUTF8 checks that a path or query the
// database cannot hold is a 400 naming the problem, on PostgreSQL too
// (which refuses NUL and invalid UTF-8 in text: it was an unlogged 500).
func TestManagementRefusesNULAndInvalidUTF8(t *testing.T) {
	g := start(t, nil, sharedStores(t))
	for _, path := range []string{
		"/api/enterprise/vkeys/%00",
		"/api/enterprise/vkeys/vk%ff/budget",
		"/api/vas/logs?model=gpt%00",
		"/api/vas/logs?provider=%ff",
		"/api/vas/logs?%00=1",
	} {
		var out struct {
			Error struct{ Type, Message string }
		}
		if code := g.admin("GET", path, nil, &out); code != http.StatusBadRequest || out.Error.Type != "invalid_request_error" {
			t.Errorf("GET %s: %d %+v, want 400 invalid_request_error", path, code, out)
		}
	}
	// The same request without the bad bytes still works.
	if code := g.admin("GET", "/api/vas/logs?model=gpt", nil, nil); code != http.StatusOK {
		t.Errorf("GET /api/vas/logs?model=gpt: %d, want 200", code)
	}
	if strings.Contains(g.logs.String(), `"level":"ERROR"`) {
		t.Errorf("refused requests logged errors:\n%s", g.logs.String())
	}
}

// TestOneBadRowCostsNoOtherEntries: a request whose model carries a NUL
// byte (which PostgreSQL text refuses) used to make its whole audit batch
// fail: 35 of 60 entries of other requests were lost. Every entry is kept
// now, the bad one with the byte escaped.
func TestOneBadRowCostsNoOtherEntries(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, with(sharedStores(t), "ADMIN_API_KEY", adminKey, "SVC_AUDIT_FLUSH_INTERVAL", "1s"))
	a, _ := g.newKey(nil)
	b, _ := g.newKey(nil)
	var wg sync.WaitGroup
	for i := range 60 {
		key, model := a, "gpt-4o-mini"
		if i%2 == 1 {
			key = b
		}
		if i == 30 {
			model = `gpt-4o-mini\u0000`
		}
		wg.Go(func() {
			g.post("/v1/chat/completions", key, []byte(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`), nil)
		})
	}
	wg.Wait()
	var page struct{ Total int }
	ok := eventually(5*time.Second, func() bool {
		g.admin("GET", "/api/vas/logs?limit=1", nil, &page)
		return page.Total == 60
	})
	if !ok {
		t.Fatalf("%d audit entries of 60 requests, want every one", page.Total)
	}
	// A model name cannot break the answer's headers either.
	resp, body := g.post("/v1/chat/completions", a, []byte(`{"model":"gpt-4o-mini\r\nX-Injected: yes\u0000","messages":[{"role":"user","content":"hi"}]}`), nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Injected") != "" || strings.ContainsAny(resp.Header.Get("X-Svc-Model"), "\r\n\x00") {
		t.Errorf("status %d, headers %v (%s): want 200 with the model's control bytes neutralised", resp.StatusCode, resp.Header, body)
	}
}

// TestNumbersBoundedAtDecode: a max_tokens past any model's output is a 400
// naming the field on every route that reads it (it used to overflow the
// token estimate and let requests past a key's rpm limit).
func TestNumbersBoundedAtDecode(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(map[string]any{"rpm_limit": 5})
	for _, c := range []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"model":"gpt-4o-mini","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"/v1/chat/completions", `{"model":"gpt-4o-mini","max_completion_tokens":100000001,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens"},
		{"/v1/chat/completions", `{"model":"gpt-4o-mini","presence_penalty":3,"messages":[{"role":"user","content":"hi"}]}`, "presence_penalty"},
		{"/v1/completions", `{"model":"gpt-3.5-turbo-instruct","prompt":"hi","max_tokens":9223372036854775807}`, "max_tokens"},
		{"/native/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
	} {
		var out struct{ Error struct{ Param string } }
		resp, body := g.post(c.path, key, []byte(c.body), nil)
		_ = json.Unmarshal(body, &out)
		named := out.Error.Param == c.param
		if strings.HasPrefix(c.path, "/native/") { // Anthropic's error shape has no param
			named = strings.Contains(string(body), c.param+" must be")
		}
		if resp.StatusCode != http.StatusBadRequest || !named {
			t.Errorf("%s %s: %d %s, want 400 naming %s", c.path, c.body, resp.StatusCode, body, c.param)
		}
	}
}
