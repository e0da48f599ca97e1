package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/openai"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/upstream"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// testKey is the only virtual key the test proxies accept.
const testKey = "sk-svc-test"

// recorder keeps the audit entries the proxy records.
type recorder struct {
	mu      sync.Mutex
	entries []*audit.Entry
}

func (r *recorder) Record(e *audit.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
}

func (r *recorder) all() []*audit.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*audit.Entry(nil), r.entries...)
}

// keys is the vault of the tests: every provider's key is "key-<name>".
type keys struct{}

func (keys) Key(_ context.Context, provider string) (string, error) { return "key-" + provider, nil }

// env is a proxy under test, served by httptest, with its providers.
type env struct {
	p     *Proxy
	url   string
	rec   *recorder
	mu    sync.Mutex
	trace []string
}

func (e *env) stages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.trace
	e.trace = nil
	return out
}

// providerAt is a provider of the tests: OpenAI's or Anthropic's wire format
// at base.
func providerAt(name, format, base string) *provider.Provider {
	p := &provider.Provider{Name: name, BaseURL: base, Signer: cred.Bearer{}}
	switch format {
	case "anthropic":
		p.Adapter, p.Signer = anthropic.New(), cred.Header{Name: "x-api-key"}
	default:
		p.Adapter = openai.New()
	}
	return p
}

// newEnv starts a proxy over providers with routing config rc; limits, when
// set, are every principal's.
func newEnv(t testing.TB, rc *route.Config, lim limit.Limits, providers ...*provider.Provider) *env {
	t.Helper()
	return newEnvWith(t, rc, lim, nil, providers...)
}

// newEnvWith is newEnv with mod applied to the proxy's dependencies.
func newEnvWith(t testing.TB, rc *route.Config, lim limit.Limits, mod func(*Deps), providers ...*provider.Provider) *env {
	t.Helper()
	reg := provider.NewRegistry(providers[0].Name, providers...)
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	prices, err := pricing.Load(strings.NewReader(`{"openai/gpt-4o-mini":{"input":1,"output":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{rec: &recorder{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d := Deps{
		Auth: auth.Chain{auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*identity.Principal, error) {
			if c.Token() != testKey {
				return nil, auth.ErrNotMine
			}
			return &identity.Principal{Kind: identity.VirtualKey, ID: "vk_test", MaskedKey: "sk-svc-te…"}, nil
		})},
		LimitSource: limit.SourceFunc(func(context.Context, *identity.Principal) (limit.Limits, error) { return lim, nil }),
		Limits:      limit.New(kv, prices, limit.Options{Log: quiet}),
		Trace: func(stage string) {
			e.mu.Lock()
			e.trace = append(e.trace, stage)
			e.mu.Unlock()
		},
		Vault:    keys{},
		Registry: reg,
		Resolver: route.NewResolver(reg).WithSources(route.Sources{Config: func() *route.Config { return rc }}),
		Client:   upstream.New(upstream.Options{HeaderTimeout: 5 * time.Second}),
		Prices:   prices,
		Audit:    e.rec,
		Metrics:  metrics.New(nil),
		Log:      quiet,
	}
	if mod != nil {
		mod(&d)
	}
	p := New(d)
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	e.p, e.url = p, srv.URL
	return e
}

// post sends body to path on the proxy with the test key.
func (e *env) post(t testing.TB, path, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// scripted is an OpenAI-style upstream that answers each call with the
// next status of its script (the last one repeats), a chat completion for
// 200 and an OpenAI error body otherwise.
type scripted struct {
	mu     sync.Mutex
	script []int
	calls  int
	srv    *httptest.Server
}

func newScripted(t *testing.T, script ...int) *scripted {
	s := &scripted{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) base() string { return s.srv.URL + "/v1" }

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status := s.script[min(s.calls, len(s.script)-1)]
	s.calls++
	s.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status != http.StatusOK {
		_, _ = io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error","code":null,"param":null}}`)
		return
	}
	_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
}

// chatBody is a minimal chat request for model.
func chatBody(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hello"}]}`
}

// streamingUpstream is the fake OpenAI upstream streaming chunks content
// chunks delay apart; it returns its root URL.
func streamingUpstream(t *testing.T, chunks int, delay time.Duration) string {
	f := providertest.NewOpenAI(t, providertest.WithAPIKey("key-openai"), providertest.WithChunks(chunks), providertest.WithChunkDelay(delay))
	return strings.TrimSuffix(f.URL(), "/v1")
}

// newAnthropicUpstream is the fake Anthropic upstream; it returns its URL.
func newAnthropicUpstream(t *testing.T) string {
	return providertest.NewAnthropic(t, providertest.AnthAPIKey("key-anthropic")).URL()
}
