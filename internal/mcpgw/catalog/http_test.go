package catalog

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// serve runs h on GET target and decodes the JSON answer.
func serve(t *testing.T, h http.HandlerFunc, target string, header http.Header) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h(w, r)
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", target, ct)
	}
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("GET %s: body %q: %v", target, w.Body.String(), err)
	}
	return w.Code, body
}

func TestSearchHandlerBounds(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	loadTestdata(t, reg, up)
	c := newCatalog(t, reg, up, Options{})
	if err := c.RefreshAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := c.SearchHandler()
	bad := map[string]struct{ query, param string }{
		"no q":           {"", "q"},
		"blank q":        {"q=%20%20", "q"},
		"q over 1 KiB":   {"q=" + strings.Repeat("a", MaxQueryBytes+1), "q"},
		"q not UTF-8":    {"q=%ff%fe", "q"},
		"q with NUL":     {"q=a%00b", "q"},
		"k zero":         {"q=issues&k=0", "k"},
		"k over 50":      {"q=issues&k=51", "k"},
		"k negative":     {"q=issues&k=-1", "k"},
		"k not a number": {"q=issues&k=five", "k"},
		"k huge":         {"q=issues&k=99999999999999999999", "k"},
	}
	for name, tc := range bad {
		code, body := serve(t, h, "/api/mcp/tools/search?"+tc.query, nil)
		e, _ := body["error"].(map[string]any)
		if code != http.StatusBadRequest || e == nil || e["param"] != tc.param {
			t.Errorf("%s: %d %v, want 400 naming %q", name, code, body, tc.param)
		}
	}
	for _, tc := range []struct {
		query string
		max   int
	}{
		{"q=issues", DefaultK},
		{"q=issues&k=1", 1},
		{"q=file&k=50", 50},
		{"q=" + url.QueryEscape(strings.Repeat("a", MaxQueryBytes)), DefaultK},
	} {
		code, body := serve(t, h, "/api/mcp/tools/search?"+tc.query, nil)
		results, ok := body["results"].([]any)
		if code != http.StatusOK || !ok || len(results) > tc.max {
			t.Errorf("%.40s: %d, %d results; want 200 and at most %d", tc.query, code, len(results), tc.max)
		}
	}
	code, body := serve(t, h, "/api/mcp/tools/search?q="+url.QueryEscape("create an issue in a GitHub repository"), nil)
	results := body["results"].([]any)
	if code != http.StatusOK || len(results) != DefaultK {
		t.Fatalf("search: %d, %v", code, body)
	}
	first := results[0].(map[string]any)
	if first["server_id"] != "github" || first["name"] != "create_issue" || first["description"] == "" || first["score"] == nil {
		t.Errorf("first result: %v; want github/create_issue with description and score", first)
	}
}

func TestHandlersApplyVisibility(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	loadTestdata(t, reg, up)
	// The caller's filter, as the gateway derives it from the request: here
	// a header names the one server the caller may use.
	visible := func(r *http.Request) Filter {
		only := r.Header.Get("X-Only")
		if only == "" {
			return nil
		}
		return func(serverID, tool string) bool { return serverID == only && tool != "delete_file" }
	}
	c := newCatalog(t, reg, up, Options{Visible: visible})
	if err := c.RefreshAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := http.Header{"X-Only": {"filesystem"}}

	code, body := serve(t, c.CatalogHandler(), "/api/mcp/catalog", h)
	servers := body["servers"].([]any)
	if code != http.StatusOK || len(servers) != 1 || body["count"].(float64) != 6 {
		t.Fatalf("catalog for a filesystem-only caller: %d, %d servers, count %v; want 1 server, 6 tools", code, len(servers), body["count"])
	}
	fs := servers[0].(map[string]any)
	for _, tl := range fs["tools"].([]any) {
		if tl.(map[string]any)["name"] == "delete_file" {
			t.Errorf("catalog shows a hidden tool")
		}
	}
	if fs["server_id"] != "filesystem" || fs["refreshed_at"] == nil || fs["tool_count"].(float64) != 6 {
		t.Errorf("server entry: %v", fs)
	}

	code, body = serve(t, c.IndexHandler(), "/api/mcp/tools/index", h)
	tools := body["tools"].([]any)
	if code != http.StatusOK || len(tools) != 6 || body["model"] != embed.LocalName || body["dimensions"].(float64) != embed.LocalDim {
		t.Fatalf("index: %d, %d tools, %v %v", code, len(tools), body["model"], body["dimensions"])
	}
	it := tools[0].(map[string]any)
	if it["server_id"] != "filesystem" || it["model"] != embed.LocalName || it["dimensions"].(float64) != embed.LocalDim {
		t.Errorf("index entry: %v", it)
	}
	if _, err := time.Parse(time.RFC3339Nano, it["indexed_at"].(string)); err != nil {
		t.Errorf("indexed_at: %v", err)
	}

	_, body = serve(t, c.SearchHandler(), "/api/mcp/tools/search?k=50&q="+url.QueryEscape("delete a file or open a github issue"), h)
	for _, r := range body["results"].([]any) {
		m := r.(map[string]any)
		if m["server_id"] != "filesystem" || m["name"] == "delete_file" {
			t.Errorf("search returned a hidden tool: %v", m)
		}
	}

	// Without a filter (an administrator): everything.
	_, body = serve(t, c.CatalogHandler(), "/api/mcp/catalog", nil)
	if n := len(body["servers"].([]any)); n != 10 {
		t.Errorf("unfiltered catalog: %d servers, want 10", n)
	}
}

func TestSearchHandlerEmbedderDown(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	emb := &countingEmbedder{inner: embed.NewLocal()}
	c := newCatalog(t, reg, up, Options{Embedder: emb})
	reg.put(&mcpgw.Server{ID: "s"})
	up.add(t, "s", tool("one", "The first tool.", nil))
	if err := c.RefreshAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb.fail.Store(true)
	code, body := serve(t, c.SearchHandler(), "/api/mcp/tools/search?q=first", nil)
	e, _ := body["error"].(map[string]any)
	if code != http.StatusServiceUnavailable || e == nil || strings.Contains(e["message"].(string), "503 service unavailable") {
		t.Errorf("embedder down: %d %v; want 503 without the cause", code, body)
	}
}

func TestEmptyCatalogAnswers(t *testing.T) {
	c := newCatalog(t, newRegistry(), newUpstream(), Options{})
	_, body := serve(t, c.CatalogHandler(), "/api/mcp/catalog", nil)
	if s, ok := body["servers"].([]any); !ok || len(s) != 0 || body["count"].(float64) != 0 {
		t.Errorf("empty catalog: %v; want servers [] and count 0", body)
	}
	_, body = serve(t, c.IndexHandler(), "/api/mcp/tools/index", nil)
	if s, ok := body["tools"].([]any); !ok || len(s) != 0 {
		t.Errorf("empty index: %v; want tools []", body)
	}
	_, body = serve(t, c.SearchHandler(), "/api/mcp/tools/search?q=anything", nil)
	if s, ok := body["results"].([]any); !ok || len(s) != 0 {
		t.Errorf("search of an empty catalog: %v; want results []", body)
	}
}
