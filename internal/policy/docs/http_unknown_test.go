package docs

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestUnknownRoutesAnswerJSON: a path or method the document routes do not
// serve answers an OpenAI-shaped 404, not Go's plain text.
func TestUnknownRoutesAnswerJSON(t *testing.T) {
	h := Handler(nil, 0)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/documents/job/x/unknown"},
		{"POST", "/api/documents/job/x/progress"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		var body struct {
			Error struct{ Type, Code string }
		}
		if rec.Code != http.StatusNotFound || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Code != "route_not_found" {
			t.Errorf("%s %s: %d %q, want 404 route_not_found JSON", tc.method, tc.path, rec.Code, rec.Body.String())
		}
	}
}
