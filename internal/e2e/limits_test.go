package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func limitedParams() openai.ChatCompletionNewParams {
	p := chatParams("gpt-4o-mini", "hi")
	p.MaxTokens = openai.Int(64)
	return p
}

func TestRateLimitAndSpendCap(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(map[string]any{"rpm_limit": 3})
	c := g.client(key)
	for i := 0; i < 3; i++ {
		var resp *http.Response
		if _, err := c.Chat.Completions.New(context.Background(), limitedParams(), option.WithResponseInto(&resp)); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if got := resp.Header.Get("x-ratelimit-remaining-requests"); got != strconv.Itoa(2-i) {
			t.Errorf("request %d: x-ratelimit-remaining-requests = %q, want %d", i+1, got, 2-i)
		}
	}
	_, err := c.Chat.Completions.New(context.Background(), limitedParams())
	var apiErr *openai.Error
	if statusOf(err) != 429 || !errors.As(err, &apiErr) || apiErr.Response.Header.Get("Retry-After") == "" ||
		apiErr.Response.Header.Get("x-ratelimit-limit-requests") != "3" {
		t.Fatalf("4th request: %v, want 429 with Retry-After and x-ratelimit headers", err)
	}

	// A spend cap: requests are admitted while their reservation fits; then 402.
	capped, id := g.newKey(map[string]any{"max_budget_usd": 0.0005, "budget_period": "daily"})
	cc := g.client(capped)
	admitted := 0
	for i := 0; i < 200; i++ {
		_, err := cc.Chat.Completions.New(context.Background(), limitedParams())
		if err != nil {
			if statusOf(err) != 402 {
				t.Fatalf("request %d: %v, want success or 402", i+1, err)
			}
			break
		}
		admitted++
	}
	if admitted == 0 || admitted == 200 {
		t.Fatalf("admitted %d requests, want some then 402", admitted)
	}
	var budget struct {
		SpendUSD float64 `json:"spend_usd"`
	}
	g.admin("GET", "/api/enterprise/vkeys/"+id+"/budget", nil, &budget)
	if budget.SpendUSD <= 0 || budget.SpendUSD > 0.0005 {
		t.Errorf("spend %v after %d requests, want > 0 and ≤ the 0.0005 cap", budget.SpendUSD, admitted)
	}
	// The spend gauge follows the settlements.
	resp, err := http.Get(g.proxy + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `key_id="`+id+`"}`) {
		t.Errorf("no svc_vkey_spend_usd for the capped key:\n%s", grepLines(string(metrics), "svc_vkey_spend"))
	}
}

// TestLimitsAcrossReplicas: three proxy processes on one Redis and one
// PostgreSQL, concurrent load through all three with one key: the rpm limit
// admits exactly its number, the tpm limit's admitted requests use no more
// than its tokens, and the spend cap holds to within one request's cost.
func TestLimitsAcrossReplicas(t *testing.T) {
	shared := sharedStores(t)
	fake := providertest.NewOpenAI(t, providertest.WithRecording(0))
	mg := start(t, fake, with(shared, "SERVICE_TYPE", "api-server"))
	var proxies []*gateway
	for i := 0; i < 3; i++ {
		proxies = append(proxies, start(t, fake, with(shared, "SERVICE_TYPE", "proxy")))
	}
	fire := func(key string, n int) (ok, limited, budget int64) {
		var other atomic.Int64
		var firstOther atomic.Value
		defer func() {
			if n := other.Load(); n > 0 {
				t.Errorf("%d requests ended otherwise, first: %v", n, firstOther.Load())
			}
		}()
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c := proxies[i%3].client(key)
				_, err := c.Chat.Completions.New(context.Background(), limitedParams())
				switch statusOf(err) {
				case 0:
					if err == nil {
						atomic.AddInt64(&ok, 1)
						return
					}
					other.Add(1)
					firstOther.CompareAndSwap(nil, err.Error())
				case 429:
					atomic.AddInt64(&limited, 1)
				case 402:
					atomic.AddInt64(&budget, 1)
				default:
					other.Add(1)
					firstOther.CompareAndSwap(nil, err.Error())
				}
			}(i)
		}
		wg.Wait()
		return
	}
	rpmKey, _ := mg.newKey(map[string]any{"rpm_limit": 25})
	ok, limited, _ := fire(rpmKey, 75)
	if ok != 25 || limited != 50 {
		t.Errorf("rpm 25 across 3 replicas: %d admitted, %d limited of 75; want exactly 25 and 50", ok, limited)
	}

	// tpm: each request reserves its estimate (prompt + max_tokens 64) and
	// is settled to its actual usage, which is smaller; the tokens the
	// admitted requests used within the minute stay within the limit.
	const tpm = 650
	tpmKey, tpmID := mg.newKey(map[string]any{"tpm_limit": tpm})
	ok, limited, _ = fire(tpmKey, 150)
	var used, each int64
	for _, e := range mg.logEntries("limit=1000", 75+int(ok+limited)) {
		if e["key_id"] != tpmID || e["status"] != 200.0 {
			continue
		}
		n := int64(e["metrics"].(map[string]any)["total_tokens"].(float64))
		used, each = used+n, max(each, n)
	}
	if ok == 0 || limited == 0 || used == 0 {
		t.Fatalf("tpm %d across 3 replicas: %d admitted, %d limited, %d tokens used; want some of each", tpm, ok, limited, used)
	}
	if used > tpm {
		t.Errorf("tpm %d across 3 replicas: the %d admitted requests used %d tokens", tpm, ok, used)
	}
	t.Logf("tpm across replicas: %d admitted, %d limited, %d of %d tokens used (%d at most per request, 65 reserved)", ok, limited, used, tpm, each)

	const capUSD = 0.001
	spendKey, id := mg.newKey(map[string]any{"max_budget_usd": capUSD, "budget_period": "daily"})
	ok, _, refused := fire(spendKey, 300)
	if ok == 0 || refused == 0 {
		t.Fatalf("spend cap: %d admitted, %d refused, want both", ok, refused)
	}
	var budget struct {
		SpendUSD float64 `json:"spend_usd"`
	}
	mg.admin("GET", "/api/enterprise/vkeys/"+id+"/budget", nil, &budget)
	// One request's cost: the most any admitted request cost.
	var one float64
	for _, e := range mg.logEntries("limit=1000", 300) {
		if e["status"] == 200.0 {
			one = max(one, e["cost"].(float64))
		}
	}
	if one == 0 {
		t.Fatal("no admitted request in the audit log")
	}
	if budget.SpendUSD > capUSD+one {
		t.Errorf("spend %v with a cap of %v: overshoot %v is more than one request's cost %v", budget.SpendUSD, capUSD, budget.SpendUSD-capUSD, one)
	}
	t.Logf("spend cap across replicas: %d admitted, %d refused, spend %.6f of %.6f (one request %.6f)", ok, refused, budget.SpendUSD, capUSD, one)
}
