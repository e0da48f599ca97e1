package oauth_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
)

// TestTokenCached: the token is read from the store once per second at
// most, never served past the time it is due for a refresh, and a new
// authorization or a revocation through the same process replaces or
// removes it at once.
func TestTokenCached(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.authorize(t, "docs")
	ctx := t.Context()
	token := func() string {
		t.Helper()
		tok, err := h.flow.Token(ctx, "docs")
		if err != nil {
			t.Fatalf("Token: %v", err)
		}
		return tok
	}
	before := h.reads.Load()
	first := token()
	for range 4 {
		if tok := token(); tok != first {
			t.Fatalf("Token = %q, then %q within a second", first, tok)
		}
	}
	if n := h.reads.Load() - before; n != 1 {
		t.Errorf("5 Token calls within a second read the store %d times, want 1", n)
	}
	h.clock.advance(1001 * time.Millisecond)
	if token() != first || h.reads.Load()-before != 2 {
		t.Errorf("after a second: %d reads, want 2 (read again)", h.reads.Load()-before)
	}

	// A new authorization replaces the cached token at once.
	h.authorize(t, "docs")
	second := token()
	if second == first {
		t.Errorf("Token after a new authorization = the old %q", first)
	}

	// Read just before it is due for a refresh (a minute before expiry):
	// not served past that time.
	h.clock.advance(time.Hour - time.Minute - 500*time.Millisecond)
	if token() != second {
		t.Fatal("the token changed before it was due")
	}
	h.clock.advance(600 * time.Millisecond)
	if tok := token(); tok == second {
		t.Errorf("Token due for a refresh = the cached %q, want a refreshed one", tok)
	}

	// A revocation removes it at once.
	third := token()
	if token() != third {
		t.Fatal("the refreshed token is not the one read next")
	}
	if a := do(t, http.MethodDelete, h.svc.URL+"/api/mcp/auth/tokens/docs"); a.status != http.StatusOK {
		t.Fatalf("revoke: got %d %s", a.status, a.body)
	}
	if _, err := h.flow.Token(ctx, "docs"); !errors.Is(err, oauth.ErrNoToken) {
		t.Errorf("Token after revoke: got %v, want ErrNoToken", err)
	}
}
