package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

// TestMetricsLabelsAndKeySpend: model names a caller invents are labelled
// "other" (they used to make a series each), and every key that spent has
// its svc_vkey_spend_usd series, capped or not.
func TestMetricsLabelsAndKeySpend(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, id := g.newKey(nil)
	for i := range 20 {
		body := fmt.Sprintf(`{"model":"openai/made-up-%d","messages":[{"role":"user","content":"hi"}]}`, i)
		if resp, b := g.post("/v1/chat/completions", key, []byte(body), nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	}
	if resp, b := g.post("/v1/chat/completions", key, []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`), nil); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	// Labelled by the masked key and the key's id, never the secret.
	series := `svc_vkey_spend_usd{key="` + key[:len("sk-svc-")+4] + `…",key_id="` + id + `"}`
	var text string
	// The spend of a key without limits reaches its counter within a
	// second (the meter's flush).
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(g.proxy + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text = string(b)
		if strings.Contains(text, series) && !strings.Contains(text, series+" 0\n") {
			break
		}
	}
	if strings.Contains(text, key) {
		t.Errorf("the key's secret is in the metrics")
	}
	if strings.Contains(text, "made-up-") || !strings.Contains(text, `model="other"`) {
		t.Errorf("invented model names in the metrics, or no \"other\" label")
	}
	if !strings.Contains(text, `model="gpt-4o-mini"`) {
		t.Errorf("a known model lost its label")
	}
	if !strings.Contains(text, series) || strings.Contains(text, series+" 0\n") {
		t.Errorf("want %s with the key's spend, got:\n%s", series, grep(text, "svc_vkey_spend_usd"))
	}
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
