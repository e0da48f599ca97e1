package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolGatewayLiveSession: a session held open on one proxy while a
// grant is approved and the registration changed through another sees
// both within a second: notifications/tools/list_changed, then the new
// tools/list. (The proxies refresh a session's tool list on changes, not
// on every call.)
func TestToolGatewayLiveSession(t *testing.T) {
	mg, p1, p2, up, _ := crmOnTwoProxies(t)
	key, _ := mg.newKey(nil)
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	var cs *mcp.ClientSession
	if !eventuallyFor(5*time.Second, func() bool {
		var err error
		cs, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: p2.proxy + "/crm/mcp/",
			HTTPClient: &http.Client{Transport: keyed{key}}, MaxRetries: -1}, nil)
		return err == nil
	}) {
		t.Fatal("the second proxy does not serve the server registered through the first")
	}
	t.Cleanup(func() { cs.Close() })
	names := func() []string {
		t.Helper()
		l, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range l.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"lookup"}) {
		t.Fatalf("tools/list = %v, want [lookup]", got)
	}
	drain(changed)
	awaitChange := func(what string, want []string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(5 * time.Second): // a second is the aim; the margin is for -race under load
			t.Fatalf("%s: the live session got no notifications/tools/list_changed within 5 s", what)
		}
		if got := names(); !slices.Equal(got, want) {
			t.Errorf("%s: tools/list = %v, want %v", what, got, want)
		}
		drain(changed)
	}

	resp, body := p1.post("/api/mcp/catalog/requests", key, []byte(`{"server_id":"crm","tools_requested":["write"],"justification":"notes"}`), nil)
	var req struct{ ID string }
	if resp.StatusCode != 201 || json.Unmarshal(body, &req) != nil {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	if st := p1.request(p1.proxy, "POST", "/api/mcp/catalog/requests/"+req.ID+"/approve", nil, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	awaitChange("grant approved on the other proxy", []string{"lookup", "write"})

	if st := p1.request(p1.proxy, "PUT", "/api/mcp/servers/crm", map[string]any{"base_url": up + "/mcp",
		"auth_type": "bearer", "auth_token": "upstream-token", "allowed_tools": []string{"write"}, "disallowed_tools": []string{"lookup"}}, nil); st != 200 {
		t.Fatalf("update: %d", st)
	}
	awaitChange("registration changed on the other proxy", []string{"write"})
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
