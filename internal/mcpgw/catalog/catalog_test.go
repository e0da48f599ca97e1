package catalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestRefreshAll(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	n := loadTestdata(t, reg, up)
	c := newCatalog(t, reg, up, Options{})
	if err := c.RefreshAll(context.Background()); err != nil {
		t.Fatalf("RefreshAll: %v", err)
	}
	l := c.List(nil)
	if len(l.Servers) != 10 || l.Count != n {
		t.Fatalf("catalog: %d servers, %d tools; want 10, %d", len(l.Servers), l.Count, n)
	}
	gh := l.Servers[slices.IndexFunc(l.Servers, func(s ServerTools) bool { return s.ServerID == "github" })]
	if gh.Name != "GitHub" || gh.ToolCount != 8 || gh.RefreshedAt == nil || gh.Error != "" || gh.ErrorAt != nil {
		t.Errorf("github: %+v", gh)
	}
	if !slices.IsSortedFunc(gh.Tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("tools not sorted by name")
	}
	if gh.Tools[0].InputSchema == nil {
		t.Errorf("a tool lost its input schema")
	}

	idx := c.Index(nil)
	if idx.Model != embed.LocalName || idx.Dimensions != embed.LocalDim || idx.Count != n {
		t.Fatalf("index: model %q, %d dimensions, %d tools; want %q, %d, %d", idx.Model, idx.Dimensions, idx.Count, embed.LocalName, embed.LocalDim, n)
	}
	for _, it := range idx.Tools {
		if it.Model != embed.LocalName || it.Dimensions != embed.LocalDim || it.IndexedAt.IsZero() {
			t.Errorf("index entry %+v: want the model, its dimensions and a time", it)
		}
	}

	// A server deregistered meanwhile is dropped by the next RefreshAll.
	reg.remove("weather")
	if err := c.RefreshAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.List(nil).Count; got != n-3 {
		t.Errorf("after weather was deregistered: %d tools, want %d", got, n-3)
	}
	reg.fail = errors.New("database down")
	if err := c.RefreshAll(context.Background()); err == nil {
		t.Errorf("RefreshAll with the registrations unreadable: nil error")
	}
}

func TestListChanged(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	c := newCatalog(t, reg, up, Options{})
	ctx := context.Background()
	up.onListChanged = func(id string) {
		// As the gateway does: never call back into the session from its
		// notification handler.
		go c.Refresh(context.Background(), id)
	}
	reg.put(&mcpgw.Server{ID: "docs", Name: "Docs"})
	srv := up.add(t, "docs", tool("get_page", "Get a documentation page by its path.", map[string]string{"path": ""}))
	if err := c.Refresh(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	type searchIn struct {
		Query string `json:"query" jsonschema:"words to look for in the documentation"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "search_docs", Description: "Search the documentation for a phrase."},
		func(context.Context, *mcp.CallToolRequest, searchIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	storetest.Until(t, 5*time.Second, "the added tool in the catalog", func() bool {
		return slices.Contains(toolNames(c.List(nil)), "docs/search_docs")
	})
	res, err := c.Search(ctx, "search the documentation", 1, nil)
	if err != nil || len(res) != 1 || res[0].Name != "search_docs" {
		t.Errorf("search after list_changed: %+v, %v; want docs/search_docs first", res, err)
	}
	srv.RemoveTools("get_page")
	storetest.Until(t, 5*time.Second, "the removed tool gone from the catalog", func() bool {
		return !slices.Contains(toolNames(c.List(nil)), "docs/get_page")
	})
}

func TestFailingListerKeepsTools(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	c := newCatalog(t, reg, up, Options{})
	ctx := context.Background()
	const token = "tok_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
	reg.put(&mcpgw.Server{ID: "crm", Name: "CRM", AuthType: mcpgw.AuthBearer, AuthToken: token})
	up.add(t, "crm", tool("find_contact", "Find a contact by name.", nil), tool("get_deal", "Get a deal.", nil))
	if err := c.Refresh(ctx, "crm"); err != nil {
		t.Fatal(err)
	}
	good := c.List(nil).Servers[0]

	up.setFail("crm", errors.New("upstream answered 401 for token "+token))
	err := c.Refresh(ctx, "crm")
	if err == nil {
		t.Fatalf("Refresh with a failing lister: nil error")
	}
	got := c.List(nil).Servers[0]
	if d := cmp.Diff(toolNames(Listing{Servers: []ServerTools{good}}), toolNames(Listing{Servers: []ServerTools{got}})); d != "" {
		t.Errorf("tools after a failed listing (-last good +got):\n%s", d)
	}
	if got.Error == "" || got.ErrorAt == nil || got.RefreshedAt == nil || !got.RefreshedAt.Equal(*good.RefreshedAt) {
		t.Errorf("failed listing not recorded: error %q at %v, refreshed %v (was %v)", got.Error, got.ErrorAt, got.RefreshedAt, good.RefreshedAt)
	}
	if strings.Contains(got.Error, token) || !strings.Contains(got.Error, "401") {
		t.Errorf("error shown: %q; want the cause without the server's token", got.Error)
	}
	if res, _ := c.Search(ctx, "find a contact", 1, nil); len(res) != 1 || res[0].Name != "find_contact" {
		t.Errorf("search while the server fails to list: %+v; want its last good tools", res)
	}

	up.setFail("crm", nil)
	if err := c.Refresh(ctx, "crm"); err != nil {
		t.Fatal(err)
	}
	if s := c.List(nil).Servers[0]; s.Error != "" || s.ErrorAt != nil {
		t.Errorf("error kept after a good listing: %q", s.Error)
	}

	// A server that never listed is shown with its error and no tools.
	reg.put(&mcpgw.Server{ID: "down", Name: "Down"})
	up.setFail("down", errors.New("connection refused"))
	if err := c.Refresh(ctx, "down"); err == nil {
		t.Errorf("Refresh of a server that never listed: nil error")
	}
	l := c.List(nil)
	down := l.Servers[slices.IndexFunc(l.Servers, func(s ServerTools) bool { return s.ServerID == "down" })]
	if down.ToolCount != 0 || down.RefreshedAt != nil || !strings.Contains(down.Error, "connection refused") {
		t.Errorf("a server that never listed: %+v", down)
	}
}

func TestRefreshCoalesces(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	c := newCatalog(t, reg, up, Options{})
	reg.put(&mcpgw.Server{ID: "s"})
	srv := up.add(t, "s", tool("one", "The first tool.", nil))
	gate := make(chan struct{})
	up.gate = gate

	ctx := context.Background()
	first := make(chan error, 1)
	go func() { first <- c.Refresh(ctx, "s") }()
	storetest.Until(t, 5*time.Second, "the first listing to start", func() bool { return up.calls.Load() == 1 })
	// A tool added while the first listing runs: the follow-up must see it.
	srv.AddTool(tool("two", "The second tool.", nil), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Refresh(ctx, "s") }()
	}
	storetest.Until(t, 5*time.Second, "the follow-up to be requested", func() bool {
		c.fmu.Lock()
		defer c.fmu.Unlock()
		return c.flights["s"] != nil && c.flights["s"].next != nil
	})
	time.Sleep(50 * time.Millisecond) // let every caller join
	close(gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := up.calls.Load(); n != 2 {
		t.Errorf("11 concurrent refreshes listed %d times, want 2 (the running one and one follow-up)", n)
	}
	if got := toolNames(c.List(nil)); !slices.Equal(got, []string{"s/one", "s/two"}) {
		t.Errorf("after the follow-up: %v, want both tools", got)
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if len(c.flights) != 0 {
		t.Errorf("%d flights left after every refresh ended", len(c.flights))
	}
}

func TestRemove(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	c := newCatalog(t, reg, up, Options{})
	ctx := context.Background()
	reg.put(&mcpgw.Server{ID: "s"})
	up.add(t, "s", tool("one", "The first tool.", nil))
	if err := c.Refresh(ctx, "s"); err != nil {
		t.Fatal(err)
	}

	// A refresh running when the server is removed does not bring it back.
	gate := make(chan struct{})
	up.gate = gate
	done := make(chan error, 1)
	go func() { done <- c.Refresh(ctx, "s") }()
	storetest.Until(t, 5*time.Second, "the listing to start", func() bool { return up.calls.Load() == 2 })
	c.Remove("s")
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l := c.List(nil); len(l.Servers) != 0 {
		t.Errorf("a removed server came back: %v", toolNames(l))
	}
	// A later refresh (registered again) adds it.
	if err := c.Refresh(ctx, "s"); err != nil || c.List(nil).Count != 1 {
		t.Errorf("refresh after Remove: %v, %d tools; want the tool back", err, c.List(nil).Count)
	}
	// Refreshing a server no longer registered removes it.
	reg.remove("s")
	if err := c.Refresh(ctx, "s"); err != nil || len(c.List(nil).Servers) != 0 {
		t.Errorf("refresh of a deregistered server: %v, catalog %v", err, toolNames(c.List(nil)))
	}
}

func TestRefreshWaitsAtMostForItsContext(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	c := newCatalog(t, reg, up, Options{})
	reg.put(&mcpgw.Server{ID: "s"})
	up.add(t, "s", tool("one", "The first tool.", nil))
	gate := make(chan struct{})
	up.gate = gate
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Refresh(ctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Refresh past its context: %v, want the deadline", err)
	}
	close(gate) // the refresh itself goes on and lands
	storetest.Until(t, 5*time.Second, "the detached refresh to land", func() bool { return c.List(nil).Count == 1 })
}

func TestEmbedOnlyWhatChanged(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	emb := &countingEmbedder{inner: embed.NewLocal()}
	c := newCatalog(t, reg, up, Options{Embedder: emb})
	ctx := context.Background()
	reg.put(&mcpgw.Server{ID: "s"})
	srv := up.add(t, "s", tool("a", "Alpha.", nil), tool("b", "Beta.", nil), tool("c", "Gamma.", nil))
	if err := c.Refresh(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if n := emb.texts.Swap(0); n != 3 {
		t.Errorf("first refresh embedded %d texts, want 3", n)
	}
	before := c.Index(nil).Tools
	if err := c.Refresh(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if n := emb.texts.Swap(0); n != 0 {
		t.Errorf("refresh with no change embedded %d texts, want 0", n)
	}
	srv.AddTool(tool("b", "Beta, now with a new description.", nil), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err := c.Refresh(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if n := emb.texts.Swap(0); n != 1 {
		t.Errorf("refresh with one changed tool embedded %d texts, want 1", n)
	}
	if after := c.Index(nil).Tools; !after[0].IndexedAt.Equal(before[0].IndexedAt) {
		t.Errorf("an unchanged tool was re-indexed")
	}

	// An embedder that fails: the server keeps its last good index.
	emb.fail.Store(true)
	srv.RemoveTools("c")
	srv.AddTool(tool("a", "Alpha, changed.", nil), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err := c.Refresh(ctx, "s"); err == nil {
		t.Fatalf("Refresh with the embedder down: nil error")
	}
	s := c.List(nil).Servers[0]
	if s.ToolCount != 3 || !strings.Contains(s.Error, "embed") {
		t.Errorf("after an embedding failure: %d tools, error %q; want the last good 3 and the error", s.ToolCount, s.Error)
	}
}

func TestSearch(t *testing.T) {
	reg, up := newRegistry(), newUpstream()
	loadTestdata(t, reg, up)
	c := newCatalog(t, reg, up, Options{})
	ctx := context.Background()
	if err := c.RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.Search(ctx, "create an issue in a GitHub repository", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 5 || res[0].ServerID != "github" || res[0].Name != "create_issue" {
		t.Fatalf("search: %+v; want 5 results, github/create_issue first", res)
	}
	if res[0].Description == "" || res[0].Score <= 0 || res[0].Score > 1 {
		t.Errorf("first result: %+v", res[0])
	}
	if !slices.IsSortedFunc(res, func(a, b Result) int { return -cmpFloat(a.Score, b.Score) }) {
		t.Errorf("results not best first: %+v", res)
	}

	// The filter hides tools: never returned, the next best instead.
	hide := func(server, name string) bool { return server != "github" || name != "create_issue" }
	res, _ = c.Search(ctx, "create an issue in a GitHub repository", 50, hide)
	for _, r := range res {
		if r.ServerID == "github" && r.Name == "create_issue" {
			t.Errorf("a hidden tool was returned")
		}
	}
	if len(res) == 0 {
		t.Errorf("no results with one tool hidden")
	}
	// k is bounded; a query sharing nothing with any tool finds nothing.
	if res, _ := c.Search(ctx, "file", 500, nil); len(res) > MaxK {
		t.Errorf("k=500 gave %d results, want at most %d", len(res), MaxK)
	}
	if res, _ := c.Search(ctx, "?!", 5, nil); len(res) != 0 {
		t.Errorf("a query of punctuation: %+v, want none", res)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestToolText(t *testing.T) {
	words := map[string]string{
		"list_issues":         "list issues",
		"getPullRequest":      "get Pull Request",
		"HTTPServerStatus":    "HTTP Server Status",
		"k8s-get-pod.logs":    "k8s get pod logs",
		"__x__":               "x",
		"sendSMS2User":        "send SMS2 User",
		"résumé_lookup":       "résumé lookup",
		"":                    "",
		"ALLCAPS":             "ALLCAPS",
		"already spaced name": "already spaced name",
	}
	for in, want := range words {
		if got := splitWords(in); got != want {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
	typed := &struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
	}{"object", map[string]any{"zeta": 1, "alpha": 2}}
	schemas := map[string]any{
		"map":   map[string]any{"type": "object", "properties": map[string]any{"zeta": map[string]any{}, "alpha": map[string]any{}}},
		"raw":   schema(map[string]string{"zeta": "", "alpha": ""}),
		"typed": typed,
	}
	for name, s := range schemas {
		if got := paramNames(s); !slices.Equal(got, []string{"alpha", "zeta"}) {
			t.Errorf("paramNames(%s) = %v, want [alpha zeta]", name, got)
		}
	}
	if got := paramNames("not a schema"); got != nil {
		t.Errorf("paramNames of a string: %v", got)
	}
	got := toolText(&mcp.Tool{Name: "getPullRequest", Title: "Get PR", Description: "Fetch one PR.", InputSchema: schema(map[string]string{"repoOwner": "", "number": ""})})
	if want := "get pull request. get pr. fetch one pr.. number, repo owner"; got != want {
		t.Errorf("toolText = %q, want %q", got, want)
	}
}
