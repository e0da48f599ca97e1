package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/config"
)

// complianceProcess is `svc serve` with SERVICE_TYPE=compliance.
type complianceProcess struct {
	url  string
	logs *syncWriter
}

func startCompliance(t *testing.T, shared config.Map) *complianceProcess {
	t.Helper()
	_, port, _ := net.SplitHostPort(freePort(t))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SERVICE_TYPE=compliance",
		"SVC_HOST=127.0.0.1", "COMPLIANCE_PORT=" + port, "SVC_DATA_DIR=" + t.TempDir(), "ADMIN_API_KEY=" + adminKey}
	keys := make([]string, 0, len(shared))
	for k := range shared {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+shared[k])
	}
	cmd := exec.Command(svcBinary(t), "serve")
	cmd.Env = env
	p := &complianceProcess{url: "http://127.0.0.1:" + port, logs: &syncWriter{}}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("compliance process not ready: %v\n%s", err, p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends body to path with the bearer key and decodes the answer.
func (p *complianceProcess) post(t *testing.T, path, key string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", p.url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (p *complianceProcess) risk(t *testing.T, key, text string) (float64, string) {
	t.Helper()
	status, res := p.post(t, "/v1/compliance/intelligent-scan", key, map[string]any{"content": text, "org_id": "acme"})
	if status != 200 {
		t.Fatalf("intelligent-scan: %d %v", status, res)
	}
	id, _ := res["scan_id"].(string)
	return res["risk_score"].(float64), id
}

// TestComplianceReplicasShareTheModel runs two compliance processes on one
// PostgreSQL: a virtual key made by the management process scans on
// either; feedback given to one moves the other's score within a second;
// a scan made on one can be corrected through the other.
func TestComplianceReplicasShareTheModel(t *testing.T) {
	shared := sharedStores(t)
	mg := start(t, nil, with(shared, "SERVICE_TYPE", "api-server"))
	vkey, _ := mg.newKey(map[string]any{"alias": "compliance-e2e"})
	a, b := startCompliance(t, shared), startCompliance(t, shared)

	status, res := a.post(t, "/v1/compliance/scan", vkey, map[string]any{
		"content": "Card 4111 1111 1111 1111, SSN 123-45-6789, key AKIAZ7QWERTYUIOPASDF", "policy": "pci_dss"})
	if status != 200 || res["recommended_action"] != "Block" {
		t.Fatalf("scan with a virtual key: %d %v", status, res)
	}
	if status, res := b.post(t, "/v1/compliance/feedback", vkey, map[string]any{"scan_id": "x", "is_false_positive": true}); status != 403 {
		t.Errorf("feedback with a virtual key: %d %v, want 403", status, res)
	}

	// A text the model scores low; reviewers say it must be blocked (an
	// organisation's own rule), so its score rises.
	text := "Summarise the attached quarterly numbers for the board in three bullet points."
	ra, _ := a.risk(t, vkey, text)
	rb, _ := b.risk(t, vkey, text)
	if ra != rb {
		t.Fatalf("replicas disagree before feedback: %.3f vs %.3f", ra, rb)
	}
	// Feedback to A on one of A's scans (a holdout scan teaches nothing:
	// take the next one), then watch B's score of the same text.
	var applied time.Time
	for i := 0; i < 20 && applied.IsZero(); i++ {
		_, id := a.risk(t, vkey, text)
		status, ack := a.post(t, "/v1/compliance/feedback", adminKey, map[string]any{
			"scan_id": id, "correct_action": "Block", "correct_risk_level": "high", "user_id": "reviewer-a", "notes": "board material stays in-house"})
		if status != 200 {
			t.Fatalf("feedback: %d %v", status, ack)
		}
		if ack["holdout"] == false && ack["influence"].(float64) > 0 {
			applied = time.Now()
		}
	}
	if applied.IsZero() {
		t.Fatal("no feedback was applied in 20 tries")
	}
	for {
		r, _ := b.risk(t, vkey, text)
		if r > rb {
			t.Logf("B's score %.3f -> %.3f %v after A applied the feedback", rb, r, time.Since(applied).Round(time.Millisecond))
			break
		}
		if time.Since(applied) > time.Second {
			t.Fatalf("B's score still %.3f a second after feedback to A", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A scan made on B is corrected through A once B wrote its record.
	_, idB := b.risk(t, vkey, "What is the capital of France?")
	deadline := time.Now().Add(3 * time.Second)
	for {
		status, ack := a.post(t, "/v1/compliance/feedback", adminKey, map[string]any{
			"scan_id": idB, "correct_action": "Allow", "correct_risk_level": "low", "notes": "fine", "user_id": "reviewer-b"})
		if status == 200 {
			break
		}
		if status != 404 || time.Now().After(deadline) {
			t.Fatalf("feedback through A on B's scan: %d %v", status, ack)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
