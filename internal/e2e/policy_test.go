package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// policyCall sends a request to the policy library with the admin key.
func (g *gateway) policyCall(method, path string, body any, out any) int {
	g.t.Helper()
	return g.request(g.policy, method, path, body, out)
}

// hipaaLikePreset creates three policies (block SSNs, redact e-mail
// addresses, flag phone numbers) and a preset of them; it returns the
// preset's id.
func hipaaLikePreset(t testing.TB, g *gateway) string {
	t.Helper()
	var ids []string
	for _, p := range []map[string]any{
		{"name": "no-ssn", "policy_type": "compliance", "severity": "critical", "content": "Block any prompt or answer that contains a US Social Security number."},
		{"name": "mask-email", "policy_type": "compliance", "severity": "medium", "content": "Redact e-mail addresses from prompts."},
		{"name": "watch-phones", "policy_type": "compliance", "severity": "low", "content": "Flag prompts that contain phone numbers."},
	} {
		var out struct{ ID string }
		if code := g.policyCall("POST", "/api/policies", p, &out); code != 201 {
			t.Fatalf("create policy %v: %d", p["name"], code)
		}
		ids = append(ids, out.ID)
	}
	var preset struct{ ID string }
	if code := g.policyCall("POST", "/api/presets", map[string]any{"name": "hipaa-like", "policy_ids": ids}, &preset); code != 201 {
		t.Fatalf("create preset: %d", code)
	}
	return preset.ID
}

// TestPoliciesOnThePromptPath: a key with a HIPAA-like preset is blocked for
// a prompt with an SSN (403 policy_violation naming the policy), redacted
// for an e-mail address (the provider sees the placeholder, the client is
// told), flagged for a phone number; a key without a preset is untouched;
// the audit entries say what happened.
func TestPoliciesOnThePromptPath(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	preset := hipaaLikePreset(t, g)
	guarded, guardedID := g.newKey(map[string]any{"alias": "clinic", "policy_set": preset})
	free, _ := g.newKey(map[string]any{"alias": "free"})
	c := g.client(guarded)
	ctx := context.Background()

	_, err := c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "My SSN is 536-22-1234, file my claim."))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || apiErr.Code != "policy_violation" || !strings.Contains(apiErr.Message, "no-ssn") {
		t.Fatalf("SSN prompt: %v, want 403 policy_violation naming no-ssn", err)
	}
	before := posts(fake.Requests())

	var resp *http.Response
	_, err = c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "Please email jane.doe@example.com the summary."), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("x-svc-redacted"); got != "EMAIL" {
		t.Errorf("x-svc-redacted = %q, want EMAIL", got)
	}
	sent := string(lastChat(t, fake).Body)
	if strings.Contains(sent, "jane.doe@example.com") || !strings.Contains(sent, "[EMAIL]") {
		t.Errorf("the provider received %s, want the address replaced by [EMAIL]", sent)
	}
	if posts(fake.Requests()) == before {
		t.Error("the blocked prompt's successor did not reach the provider")
	}
	var flaggedResp *http.Response
	if _, err := c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "Call me at +1 415 555 0100 tomorrow."), option.WithResponseInto(&flaggedResp)); err != nil {
		t.Fatalf("phone prompt: %v (flag passes)", err)
	}
	if flaggedResp.Header.Get("x-svc-compliance-score") == "" {
		t.Error("no x-svc-compliance-score on a scanned request")
	}
	if !strings.Contains(string(lastChat(t, fake).Body), "415 555 0100") {
		t.Error("a flagged prompt was changed")
	}
	// A key without a preset: nothing scanned, nothing changed.
	var freeResp *http.Response
	fc := g.client(free)
	if _, err := fc.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "SSN 536-22-1234, mail jane.doe@example.com"), option.WithResponseInto(&freeResp)); err != nil {
		t.Fatalf("key without a preset: %v", err)
	}
	if freeResp.Header.Get("x-svc-compliance-score") != "" || !strings.Contains(string(lastChat(t, fake).Body), "jane.doe@example.com") {
		t.Error("a key without a preset was scanned or changed")
	}
	// The audit entries of the guarded key say blocked, redacted, flagged.
	statuses := map[string]int{}
	var page struct{ Data []map[string]any }
	for i := 0; i < 100; i++ {
		g.admin("GET", "/api/vas/logs?key_id="+guardedID, nil, &page)
		if len(page.Data) >= 3 {
			break
		}
		waitABit()
	}
	for _, e := range page.Data {
		statuses[e["compliance_status"].(string)]++
	}
	if statuses["blocked"] != 1 || statuses["redacted"] != 1 || statuses["flagged"] != 1 {
		t.Errorf("compliance statuses of the guarded key's entries: %v, want one each of blocked, redacted, flagged", statuses)
	}
}

// TestPolicyFailMode: the caller's policies cannot be read (a default
// preset that does not exist): 503 policy_unavailable by default; with
// POLICY_FAIL_OPEN=true the request passes and its entry says so.
func TestPolicyFailMode(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	for _, tc := range []struct {
		open string
		want int
	}{{"false", 503}, {"true", 200}} {
		t.Run("POLICY_FAIL_OPEN="+tc.open, func(t *testing.T) {
			g := start(t, fake, config.Map{"SVC_DEFAULT_PRESET": "no-such-preset", "POLICY_FAIL_OPEN": tc.open})
			key, keyID := g.newKey(nil)
			kc := g.client(key)
			_, err := kc.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hello"))
			if got := statusOf(err); got != tc.want && !(tc.want == 200 && err == nil) {
				t.Fatalf("status %d (%v), want %d", got, err, tc.want)
			}
			if tc.want != 200 {
				return
			}
			var page struct{ Data []map[string]any }
			for i := 0; i < 100 && len(page.Data) == 0; i++ {
				g.admin("GET", "/api/vas/logs?key_id="+keyID, nil, &page)
				waitABit()
			}
			if len(page.Data) != 1 || page.Data[0]["compliance_status"] != "unchecked_fail_open" {
				t.Errorf("entries %v, want one with compliance_status unchecked_fail_open", page.Data)
			}
		})
	}
}

func waitABit() { time.Sleep(20 * time.Millisecond) }

// TestPoliciesOnTheAnswer: a non-streamed answer that leaks an SSN is
// blocked before it is sent (403 naming the policy), and its entry says so.
func TestPoliciesOnTheAnswer(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("The SSN on file is 536-22-1234."))
	g := start(t, fake, nil)
	preset := hipaaLikePreset(t, g)
	key, keyID := g.newKey(map[string]any{"alias": "clinic", "policy_set": preset})
	c := g.client(key)
	_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "What is on file for me?"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || apiErr.Code != "policy_violation" || !strings.Contains(apiErr.Message, "answer") {
		t.Fatalf("leaking answer: %v, want 403 policy_violation for the answer", err)
	}
	var page struct{ Data []map[string]any }
	for i := 0; i < 100 && len(page.Data) == 0; i++ {
		g.admin("GET", "/api/vas/logs?key_id="+keyID, nil, &page)
		waitABit()
	}
	if len(page.Data) != 1 || page.Data[0]["compliance_status"] != "blocked" {
		t.Errorf("entries %v, want one blocked", page.Data)
	}
}

// TestKeyNamesAComplianceFamily: a key whose policy_set names a built-in
// compliance family (no preset of that name) is scanned under it.
func TestKeyNamesAComplianceFamily(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(map[string]any{"policy_set": "pci_dss"})
	c := g.client(key)
	_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "Charge card 4111 1111 1111 1111 please."))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || !strings.Contains(apiErr.Message, "pci_dss") {
		t.Fatalf("card under pci_dss: %v, want 403 naming pci_dss", err)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "What is PCI DSS?")); err != nil {
		t.Fatalf("clean prompt under pci_dss: %v", err)
	}
}

// TestStreamedAnswerLeakIsCut: a streamed answer that leaks a card number
// ends with an error event before the chunk that completes it; the client
// never receives the whole number.
func TestStreamedAnswerLeakIsCut(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("Sure. The card on file is 4111 1111 1111 1111, expiring soon."))
	g := start(t, fake, nil)
	var pol struct{ ID string }
	if code := g.policyCall("POST", "/api/policies", map[string]any{"name": "no-cards", "policy_type": "compliance", "content": "Block any answer that contains a credit card number."}, &pol); code != 201 {
		t.Fatalf("create policy: %d", code)
	}
	var preset struct{ ID string }
	if code := g.policyCall("POST", "/api/presets", map[string]any{"name": "pci", "policy_ids": []string{pol.ID}}, &preset); code != 201 {
		t.Fatalf("create preset: %d", code)
	}
	key, _ := g.newKey(map[string]any{"policy_set": preset.ID})
	c := g.client(key)
	s := c.Chat.Completions.NewStreaming(context.Background(), chatParams("gpt-4o-mini", "What card do you have on file?"))
	var got strings.Builder
	for s.Next() {
		for _, ch := range s.Current().Choices {
			got.WriteString(ch.Delta.Content)
		}
	}
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "policy") {
		t.Fatalf("stream ended with %v after %q, want a policy error", err, got.String())
	}
	if strings.Contains(strings.ReplaceAll(got.String(), " ", ""), "4111111111111111") {
		t.Errorf("the whole card number reached the client: %q", got.String())
	}
	t.Logf("received before the cut: %q", got.String())
}

// TestCachedAnswerIsChecked: an answer cached before the key had a preset
// is checked when the cache serves it later under the preset.
func TestCachedAnswerIsChecked(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("The SSN on file is 536-22-1234."))
	g := start(t, fake, config.Map{"SEMANTIC_CACHE_ENABLED": "true"})
	preset := hipaaLikePreset(t, g)
	key, keyID := g.newKey(nil)
	c := g.client(key)
	ask := chatParams("gpt-4o-mini", "Which SSN is on file for the account?")
	if _, err := c.Chat.Completions.New(context.Background(), ask); err != nil {
		t.Fatalf("without a preset: %v", err)
	}
	if code := g.admin("PUT", "/api/enterprise/vkeys/"+keyID, map[string]any{"policy_set": preset}, nil); code != 200 {
		t.Fatalf("PUT policy_set: %d", code)
	}
	time.Sleep(2100 * time.Millisecond) // the proxy reuses a resolved preset for 2 s
	posts := chatPosts(fake)
	var resp *http.Response
	_, err := c.Chat.Completions.New(context.Background(), ask, option.WithResponseInto(&resp))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || !strings.Contains(apiErr.Message, "answer") {
		t.Fatalf("cached answer under the preset: %v, want 403 for the answer", err)
	}
	if chatPosts(fake) != posts {
		t.Error("the second ask reached the provider: it should have been a cache hit")
	}
}

// TestPoliciesAcrossProcesses: the policy library, the management API and
// the proxy in separate processes on PostgreSQL and Redis: a preset made
// in the policy process and a key made in the management process are
// enforced by the proxy process.
func TestPoliciesAcrossProcesses(t *testing.T) {
	shared := sharedStores(t)
	fake := providertest.NewOpenAI(t)
	pol := start(t, nil, with(shared, "SERVICE_TYPE", "policy-perfect"))
	mg := start(t, nil, with(shared, "SERVICE_TYPE", "api-server"))
	px := start(t, fake, with(shared, "SERVICE_TYPE", "proxy"))
	preset := hipaaLikePreset(t, pol)
	key, _ := mg.newKey(map[string]any{"policy_set": preset})
	c := px.client(key)
	_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "My SSN is 536-22-1234."))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || apiErr.Code != "policy_violation" {
		t.Fatalf("SSN prompt through the proxy process: %v, want 403 policy_violation", err)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "Mail jane.doe@example.com")); err != nil {
		t.Fatal(err)
	}
	if sent := string(lastChat(t, fake).Body); strings.Contains(sent, "jane.doe@example.com") {
		t.Errorf("the provider received the address: %s", sent)
	}
}
