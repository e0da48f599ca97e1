package mgmt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

const adminKey = "admin-key-for-the-chain-tests"

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type chainEnv struct {
	srv *httptest.Server
	db  *sqlstore.DB
	log *syncBuffer
}

// newChainEnv serves the whole management API on SQLite with the chain;
// chain, when given, replaces the SQL chain.
func newChainEnv(t *testing.T, chain ...mgmt.Chain) *chainEnv {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	mk, err := secret.ParseMasterKey(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var c mgmt.Chain = auditchain.NewSQLStore(db, auditchain.Options{})
	if len(chain) > 0 {
		c = chain[0]
	}
	api := mgmt.New(mgmt.Deps{
		AdminKey: adminKey,
		Keys:     auth.NewKeys(auth.NewSQLKeyStore(db), kv, 0, log),
		Vault:    keyvault.New(keyvault.NewSQLStore(db), secret.NewSealer(mk), kv, nil),
		Logs:     audit.NewSQLStore(db),
		Routing:  route.NewLive(route.NewSQLConfigStore(db), kv, log),
		Cache:    cache.NewAdmin(kv),
		Chain:    c,
		Log:      log,
	})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &chainEnv{srv: srv, db: db, log: buf}
}

// call sends body ("" for none) as the admin and returns the status and
// the raw answer.
func (e *chainEnv) call(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// must sends the call and fails unless it answers want.
func (e *chainEnv) must(t *testing.T, want int, method, path, body string) map[string]any {
	t.Helper()
	code, b := e.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return out
}

type logsPage struct {
	Success    bool               `json:"success"`
	Data       []auditchain.Entry `json:"data"`
	NextBefore *int64             `json:"next_before"`
}

func (e *chainEnv) logs(t *testing.T, query string) (logsPage, []byte) {
	t.Helper()
	code, b := e.call(t, "GET", "/api/audit/logs"+query, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/audit/logs%s: %d %s", query, code, b)
	}
	var p logsPage
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// row is what an entry says of an action.
type row struct{ EventType, Actor, Subject string }

func TestChainRecordsAdminActions(t *testing.T) {
	e := newChainEnv(t)
	const providerKey = "sk-proj-THISISTHEPROVIDERSECRET0123456789"
	created := e.must(t, 201, "POST", "/api/enterprise/vkeys", `{"alias":"team-a","rpm_limit":10,"model_restrictions":["gpt-4o"]}`)
	id, vsecret := created["id"].(string), created["key"].(string)
	updated := e.must(t, 200, "PUT", "/api/enterprise/vkeys/"+id, `{"policy_set":"preset-hipaa","rpm_limit":20}`)
	if updated["policy_set"] != "preset-hipaa" || updated["rpm_limit"] != 20.0 || updated["alias"] != "team-a" {
		t.Errorf("PUT answered %v: want policy_set and rpm_limit changed, alias kept", updated)
	}
	e.must(t, 400, "PUT", "/api/enterprise/vkeys/"+id, `{"rpm_limit":-5}`)
	e.must(t, 400, "PUT", "/api/enterprise/vkeys/"+id, `{"unknown_field":1}`)
	e.must(t, 404, "PUT", "/api/enterprise/vkeys/no-such-key", `{"alias":"x"}`)
	e.must(t, 200, "DELETE", "/api/enterprise/vkeys/"+vsecret, "")
	e.must(t, 409, "PUT", "/api/enterprise/vkeys/"+id, `{"alias":"x"}`)
	e.must(t, 201, "POST", "/api/enterprise/keys", fmt.Sprintf(`{"provider":"openai","api_key":%q}`, providerKey))
	e.must(t, 200, "DELETE", "/api/enterprise/keys/openai", "")
	e.must(t, 201, "POST", "/api/routing/fallback-chains", `{"name":"fast","targets":[{"provider":"openai","model":"gpt-4o"}]}`)
	e.must(t, 200, "PUT", "/api/routing/strategy", `{"strategy":"cost"}`)
	e.must(t, 200, "PUT", "/api/routing/default-provider", `{"provider":"groq"}`)
	e.must(t, 201, "POST", "/api/routing/model-mapping", `{"alias":"smart","target":"openai/gpt-4o"}`)
	e.must(t, 200, "POST", "/api/routing/force-provider", `{"provider":"groq","duration_seconds":60}`)
	e.must(t, 200, "POST", "/api/routing/budgets", `{"provider":"openai","daily_budget_usd":5}`)
	e.must(t, 200, "DELETE", "/api/routing/fallback-chains/fast", "")
	e.must(t, 200, "POST", "/api/metacache/flush", `{"namespace":"docs"}`)
	// Refused or failed actions are not recorded; reads neither.
	e.must(t, 404, "DELETE", "/api/enterprise/vkeys/no-such-key", "")
	e.must(t, 400, "PUT", "/api/routing/strategy", `{"strategy":"nope"}`)
	e.must(t, 200, "GET", "/api/enterprise/vkeys", "")

	page, raw := e.logs(t, "?limit=1000")
	var got []row
	for i := len(page.Data) - 1; i >= 0; i-- {
		d := page.Data[i]
		got = append(got, row{d.EventType, d.Actor, d.Subject})
	}
	want := []row{
		{"vkey.create", "admin", id},
		{"vkey.update", "admin", id},
		{"vkey.revoke", "admin", id},
		{"provider_key.store", "admin", "openai"},
		{"provider_key.delete", "admin", "openai"},
		{"routing.fallback_chain.set", "admin", "fast"},
		{"routing.strategy.set", "admin", "cost"},
		{"routing.default_provider.set", "admin", "groq"},
		{"routing.model_mapping.set", "admin", "smart"},
		{"routing.force_provider.set", "admin", "groq"},
		{"routing.budget.set", "admin", "openai"},
		{"routing.fallback_chain.delete", "admin", "fast"},
		{"cache.flush", "admin", "docs"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chain entries (-want +got):\n%s", diff)
	}
	if !page.Success || page.NextBefore != nil {
		t.Errorf("page: success %v next_before %v, want true and null", page.Success, page.NextBefore)
	}
	var details map[string]any
	if err := json.Unmarshal(page.Data[len(page.Data)-1].Details, &details); err != nil || details["alias"] != "team-a" || details["rpm_limit"] != 10.0 {
		t.Errorf("vkey.create details %s (%v): want the alias and limits", page.Data[len(page.Data)-1].Details, err)
	}

	// No secret on the chain: not in the answer, not in any stored column.
	var stored strings.Builder
	rows, err := e.db.Query(t.Context(), `SELECT event_type, actor, subject, details, prev_hash, hash, alg FROM audit_chain`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var cols [7]string
		if err := rows.Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6]); err != nil {
			t.Fatal(err)
		}
		stored.WriteString(strings.Join(cols[:], "|"))
	}
	rows.Close()
	for _, s := range []string{providerKey, providerKey[:16], providerKey[len(providerKey)-12:], vsecret, vsecret[len(vsecret)-16:]} {
		if strings.Contains(string(raw), s) || strings.Contains(stored.String(), s) || strings.Contains(e.log.String(), s) {
			t.Errorf("a secret's text (%d characters) is on the chain or in the log", len(s))
		}
	}

	v := e.must(t, 200, "GET", "/api/audit/verify", "")
	if v["ok"] != true || v["entries"] != float64(len(want)) || v["first_broken_seq"] != nil {
		t.Errorf("verify = %v, want ok with %d entries and first_broken_seq null", v, len(want))
	}
	if _, err := e.db.Exec(t.Context(), `UPDATE audit_chain SET subject = 'someone-else' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	v = e.must(t, 200, "GET", "/api/audit/verify", "")
	if v["ok"] != false || v["first_broken_seq"] != 2.0 {
		t.Errorf("verify after tampering with seq 2 = %v, want not ok at 2", v)
	}
}

func TestAuditLogsQuery(t *testing.T) {
	e := newChainEnv(t)
	for i := range 5 {
		e.must(t, 200, "PUT", "/api/routing/default-provider", fmt.Sprintf(`{"provider":"p%d"}`, i))
		e.must(t, 200, "POST", "/api/metacache/flush", "")
	}
	seqs := func(p logsPage) []int64 {
		out := []int64{}
		for _, d := range p.Data {
			out = append(out, d.Seq)
		}
		return out
	}
	p, _ := e.logs(t, "?event_type=cache.flush&limit=2")
	if diff := cmp.Diff([]int64{10, 8}, seqs(p)); diff != "" || p.NextBefore == nil || *p.NextBefore != 8 {
		t.Fatalf("first page (-want +got):\n%s next_before %v", diff, p.NextBefore)
	}
	p, _ = e.logs(t, fmt.Sprintf("?event_type=cache.flush&limit=2&before=%d", *p.NextBefore))
	if diff := cmp.Diff([]int64{6, 4}, seqs(p)); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
	}
	p, _ = e.logs(t, "?actor=admin&before=3")
	if diff := cmp.Diff([]int64{2, 1}, seqs(p)); diff != "" || p.NextBefore != nil {
		t.Errorf("actor admin before 3 (-want +got):\n%s next_before %v", diff, p.NextBefore)
	}
	p, _ = e.logs(t, "?actor=someone")
	if len(p.Data) != 0 || p.Data == nil {
		t.Errorf("unknown actor: %v, want an empty list", p.Data)
	}
	if p, _ := e.logs(t, ""); len(p.Data) != 10 {
		t.Errorf("default query: %d entries, want 10", len(p.Data))
	}

	for _, c := range []struct{ query, param string }{
		{"?limit=0", "limit"},
		{"?limit=1001", "limit"},
		{"?limit=ten", "limit"},
		{"?limit=-1", "limit"},
		{"?before=0", "before"},
		{"?before=-5", "before"},
		{"?before=abc", "before"},
		{"?before=99999999999999999999", "before"},
		{"?event_type=" + strings.Repeat("x", auditchain.MaxEventType+1), "event_type"},
		{"?actor=" + strings.Repeat("x", auditchain.MaxActor+1), "actor"},
		{"?actor=%00", "actor"},
	} {
		code, b := e.call(t, "GET", "/api/audit/logs"+c.query, "")
		var out struct {
			Error struct{ Param string } `json:"error"`
		}
		_ = json.Unmarshal(b, &out)
		if code != http.StatusBadRequest || out.Error.Param != c.param {
			t.Errorf("GET /api/audit/logs%s: %d %s, want 400 naming %s", c.query, code, b, c.param)
		}
	}
	if code, _ := e.call(t, "POST", "/api/audit/verify", ""); code != http.StatusNotFound {
		t.Errorf("POST /api/audit/verify: %d, want 404 (no such route)", code)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.srv.URL+"/api/audit/verify", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("verify without the admin key: %d, want 401", resp.StatusCode)
	}
}

// failingChain refuses every append.
type failingChain struct{ mgmt.Chain }

func (failingChain) Append(context.Context, auditchain.Event) (auditchain.Entry, error) {
	return auditchain.Entry{}, errors.New("database down")
}

// TestChainFailureKeepsTheAnswer: the action succeeded, so its answer
// stays a success; the lost entry is logged at error level.
func TestChainFailureKeepsTheAnswer(t *testing.T) {
	e := newChainEnv(t, failingChain{})
	out := e.must(t, 201, "POST", "/api/enterprise/vkeys", `{"alias":"x"}`)
	if out["key"] == nil {
		t.Errorf("create answer %v has no key", out)
	}
	if l := e.log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "vkey.create") || !strings.Contains(l, "database down") {
		t.Errorf("log %q: want an error naming the event and the cause", l)
	}
}
