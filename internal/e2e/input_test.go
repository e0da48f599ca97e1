package e2e

import (
	"net/http"
	"strings"
	"testing"
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
