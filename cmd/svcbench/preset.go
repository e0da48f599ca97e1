package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// benchPresetName is the preset the preset-five variant makes and names
// in SVC_DEFAULT_PRESET.
const benchPresetName = "bench-five"

// benchPolicies are the preset's policies: the four example
// sentences and a credentials policy.
var benchPolicies = []string{
	"Block any prompt or answer that contains a US Social Security number.",
	"Redact e-mail addresses and phone numbers from prompts.",
	"Flag answers that mention competitor products such as Acme or Globex.",
	"Do not discuss medical diagnoses.",
	"Block prompts and answers that contain API keys, passwords or other credentials.",
}

// makeBenchPreset creates the policies and the preset through the policy
// library of gw.
func makeBenchPreset(ctx context.Context, gw *gateway) error {
	var ids []string
	for i, content := range benchPolicies {
		var out struct{ ID string }
		if err := postJSON(ctx, gw, "/api/policies", map[string]any{"name": fmt.Sprintf("bench-%d", i), "policy_type": "compliance", "content": content}, &out); err != nil {
			return err
		}
		ids = append(ids, out.ID)
	}
	return postJSON(ctx, gw, "/api/presets", map[string]any{"name": benchPresetName, "policy_ids": ids}, nil)
}

func postJSON(ctx context.Context, gw *gateway, path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gw.policyURL+path, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+gw.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("policy library %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("policy library %s: status %d", path, resp.StatusCode)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// benchProse is ordinary text that no policy acts on.
const benchProse = "The quarterly planning meeting covered the roadmap for the data platform, the hiring plan for the second half, and the budget for cloud infrastructure. Teams agreed to review the migration timeline next week and to share a written summary with the steering group. "

// requestBodySized is requestBody with the user message padded with
// ordinary prose to about size bytes (0: unchanged).
func requestBodySized(model string, stream bool, size int) []byte {
	if size <= 0 {
		return requestBody(model, stream)
	}
	size = min(size, 1<<20)
	text := strings.Repeat(benchProse, size/len(benchProse)+1)[:size]
	req := map[string]any{"model": model, "temperature": 0.2, "max_tokens": 256, "messages": []map[string]string{
		{"role": "system", "content": "You are a concise assistant for an engineering team."},
		{"role": "user", "content": text}}}
	if stream {
		req["stream"] = true
		req["stream_options"] = map[string]bool{"include_usage": true}
	}
	b, _ := json.Marshal(req)
	return b
}
