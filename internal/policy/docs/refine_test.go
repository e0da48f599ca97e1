package docs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/policy"
)

// fakeModel answers chat completions with reply, recording the key.
func fakeModel(t *testing.T, status int, reply string) (*httptest.Server, *string) {
	t.Helper()
	var key string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key = r.Header.Get("Authorization")
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": reply}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &key
}

func TestModelRefiner(t *testing.T) {
	drafts := []policy.Suggestion{
		{ID: "sug_1", Name: "Data handling 1", Content: "Staff must not share SSNs.\nDetectors: SSN\nAction: block\nApplies to: both", Priority: 50, Confidence: 0.8},
		{ID: "sug_2", Name: "Data handling 2", Content: "Mask e-mail addresses.\nDetectors: EMAIL\nAction: redact\nApplies to: prompt", Priority: 40, Confidence: 0.7},
	}
	good := `[{"id":"sug_1","name":"No SSNs","content":"Never share a Social Security number.\nDetectors: SSN\nAction: block\nApplies to: both","priority":90,"confidence":0.95},
	{"id":"sug_2","name":"Mask e-mail","content":"Mask e-mail addresses.\nAction: flag","priority":30},
	{"id":"sug_9","name":"invented","content":"x"}]`
	srv, key := fakeModel(t, 200, "```json\n"+good+"\n```")
	r := &ModelRefiner{BaseURL: srv.URL + "/v1", Key: "sk-svc-refiner", Model: "openai/gpt-4o-mini"}
	out, err := r.Refine(context.Background(), drafts, Document{})
	if err != nil {
		t.Fatal(err)
	}
	if *key != "Bearer sk-svc-refiner" {
		t.Errorf("key sent %q", *key)
	}
	if len(out) != 2 || out[0].Name != "No SSNs" || out[0].Priority != 90 || !strings.HasPrefix(out[0].Content, "Never share") {
		t.Errorf("first draft %+v, want refined", out[0])
	}
	// A content that drops the draft's compiler lines is refused; the
	// rest of the item still applies; an invented id adds nothing.
	if out[1].Content != drafts[1].Content || out[1].Name != "Mask e-mail" || out[1].Priority != 30 {
		t.Errorf("second draft %+v, want the name and priority, not the content", out[1])
	}
	for _, tc := range []struct {
		name   string
		status int
		reply  string
	}{{"not JSON", 200, "Here are your policies!"}, {"model error", 500, "[]"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeModel(t, tc.status, tc.reply)
			r := &ModelRefiner{BaseURL: srv.URL + "/v1", Key: "k", Model: "m"}
			if _, err := r.Refine(context.Background(), drafts, Document{}); err == nil {
				t.Error("want an error (the drafts then stand)")
			}
		})
	}
}
