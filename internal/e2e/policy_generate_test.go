package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// refiningModel is an OpenAI-compatible chat model that refines policy
// drafts as POLICY_GENERATION_MODEL's model would: it reads the drafts the
// refiner sent (a JSON array in the user message) and answers each id with
// a new name and a priority of 77. It counts the chat calls it answered.
func refiningModel(t *testing.T) (url string, calls *atomic.Int64) {
	calls = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
			return
		}
		var drafts []struct{ ID, Name string }
		if err := json.Unmarshal([]byte(req.Messages[1].Content), &drafts); err != nil {
			http.Error(w, `{"error":{"message":"the user message is not the drafts"}}`, http.StatusBadRequest)
			return
		}
		out := make([]map[string]any, len(drafts))
		for i, d := range drafts {
			out[i] = map[string]any{"id": d.ID, "name": "Refined: " + d.Name, "priority": 77, "confidence": 0.9}
		}
		answer, _ := json.Marshal(out)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-refine", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "```json\n" + string(answer) + "\n```"}}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": 300, "total_tokens": 1200},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// generate uploads a text document to the policy library and waits for its
// job; it returns the job's final status and its suggestions.
func generate(t *testing.T, g *gateway, name, text string) (status string, suggestions []map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	io.WriteString(fw, text)
	mw.Close()
	req, _ := http.NewRequest("POST", g.policy+"/api/policies/generate-from-document", &body)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		Success bool
		JobID   string `json:"job_id"`
	}
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK || started.JobID == "" {
		t.Fatalf("upload: status %d, job %q", resp.StatusCode, started.JobID)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var progress struct {
			Job struct{ Status, Error string }
		}
		g.request(g.policy, "GET", "/api/documents/job/"+started.JobID+"/progress", nil, &progress)
		if s := progress.Job.Status; s == "completed" || s == "failed" {
			status = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %q after 20 s", started.JobID, progress.Job.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var results struct {
		Suggested []map[string]any `json:"suggested_policies"`
	}
	if status == "completed" {
		if code := g.request(g.policy, "GET", "/api/documents/job/"+started.JobID+"/results", nil, &results); code != 200 {
			t.Fatalf("results: status %d", code)
		}
	}
	return status, results.Suggested
}

const dataPolicyDoc = `Data Handling Policy

1. Customer data
Employees must not share customer Social Security numbers with any external party.
Payment card numbers shall not be stored in chat tools.
`

// TestPolicyGenerationThroughTheProxy: with POLICY_GENERATION_MODEL, the
// drafts of an uploaded document are refined by that model called through
// svc's own proxy with the refiner's virtual key — so the call is in the
// audit log under that key with its cost — on the embedded default
// (SQLite), the proxy address taken from the process's own settings. With
// the key revoked the refinement is refused by the proxy and the
// rule-based drafts stand.
func TestPolicyGenerationThroughTheProxy(t *testing.T) {
	modelURL, calls := refiningModel(t)
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(freePort(t))
	base := map[string]string{"SVC_DATA_DIR": dir, "PROXY_PORT": port, "OPENAI_API_BASE": modelURL + "/v1"}
	first := start(t, nil, base)
	refinerKey, refinerID := first.newKey(map[string]any{"alias": "policy-refiner"})
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	base["POLICY_GENERATION_MODEL"], base["POLICY_GENERATION_KEY"] = "gpt-4o-mini", refinerKey
	g := start(t, nil, base)

	status, got := generate(t, g, "policy.txt", dataPolicyDoc)
	if status != "completed" || len(got) == 0 {
		t.Fatalf("job %s with %d suggestions", status, len(got))
	}
	for _, s := range got {
		if name, _ := s["name"].(string); !strings.HasPrefix(name, "Refined: ") || s["priority"] != float64(77) {
			t.Errorf("suggestion %v was not refined by the model", s)
		}
	}
	if calls.Load() == 0 {
		t.Fatal("the model was never called")
	}
	entries := g.entriesAtLeast("key_id="+refinerID, 1)
	if len(entries) == 0 {
		t.Fatal("no audit entry under the refiner's key: the call did not go through the proxy")
	}
	if e := entries[0]; e["model"] != "gpt-4o-mini" || !(e["cost"].(float64) > 0) {
		t.Errorf("refiner's entry %v: want model gpt-4o-mini with a cost", e)
	}

	if code := g.admin("DELETE", "/api/enterprise/vkeys/"+refinerID, nil, nil); code/100 != 2 {
		t.Fatalf("revoke: %d", code)
	}
	before := calls.Load()
	status, got = generate(t, g, "policy2.txt", dataPolicyDoc)
	if status != "completed" || len(got) == 0 {
		t.Fatalf("job with a revoked refiner key: %s with %d suggestions, want the rule-based drafts", status, len(got))
	}
	for _, s := range got {
		if name, _ := s["name"].(string); strings.HasPrefix(name, "Refined: ") {
			t.Errorf("suggestion %v refined with a revoked key", s)
		}
	}
	if calls.Load() != before {
		t.Errorf("the model was called %d more times with a revoked key", calls.Load()-before)
	}
}
