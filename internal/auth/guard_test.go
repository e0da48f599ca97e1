package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
)

// TestGuardStatuses: the management API's guard tells a missing or wrong
// credential (401) from a valid one that is not an admin's (403) and from
// a failure to check it (503, never "your key is wrong").
func TestGuardStatuses(t *testing.T) {
	a := AuthenticatorFunc(func(_ context.Context, c Credentials) (*identity.Principal, error) {
		switch c.Token() {
		case "admin":
			return &identity.Principal{Kind: identity.Admin, ID: "admin"}, nil
		case "vk":
			return &identity.Principal{Kind: identity.VirtualKey, ID: "vk_1"}, nil
		case "store-down":
			return nil, apierr.New(apierr.Unavailable, "key_store_unavailable", "the key store is down")
		case "raw-failure":
			return nil, errors.New("dial tcp 10.0.0.9:5432: connection refused")
		}
		return nil, apierr.New(apierr.Unauthenticated, "invalid_api_key", "invalid key")
	})
	h := Guard(a, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, c := range []struct {
		token  string
		status int
		code   string
	}{
		{"admin", http.StatusNoContent, ""},
		{"", http.StatusUnauthorized, "invalid_admin_key"},
		{"wrong", http.StatusUnauthorized, "invalid_admin_key"},
		{"vk", http.StatusForbidden, "admin_required"},
		{"store-down", http.StatusServiceUnavailable, "key_store_unavailable"},
		{"raw-failure", http.StatusServiceUnavailable, "auth_unavailable"},
	} {
		r := httptest.NewRequest("GET", "/api/keys", nil)
		if c.token != "" {
			r.Header.Set("Authorization", "Bearer "+c.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Errorf("%q: %d, want %d", c.token, w.Code, c.status)
			continue
		}
		if c.code == "" {
			continue
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error.Code != c.code {
			t.Errorf("%q: body %s, want code %s", c.token, w.Body, c.code)
		}
		if c.token == "raw-failure" && (len(body.Error.Message) == 0 || strings.Contains(body.Error.Message, "10.0.0.9")) {
			t.Errorf("raw failure's message %q: want a generic one", body.Error.Message)
		}
	}
}
