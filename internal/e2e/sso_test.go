package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/openai/openai-go/v3"

	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// signIn posts to /api/auth/sso/signin on the management port with hdr.
func signIn(t *testing.T, g *gateway, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	st, _, out := signInHeaders(t, g, hdr)
	return st, out
}

// signInHeaders is signIn with the answer's headers.
func signInHeaders(t *testing.T, g *gateway, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", g.mgmt+"/api/auth/sso/signin", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, resp.Header, out
}

// TestSignInTrustedHeaders signs users in through an authenticating proxy
// (trusted headers from 127.0.0.1), then uses their tokens with the OpenAI
// SDK on the proxy and on the management API: attribution in the audit
// entry, the admin role, revocation; identity headers are never sent
// upstream.
func TestSignInTrustedHeaders(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32"})
	st, out := signIn(t, g, map[string]string{"X-Remote-User": "alice@corp.example", "X-User-Groups": "svc-Admins,eng",
		"X-User-Department": "R&D", "X-User-Email": "alice@corp.example"})
	tok, _ := out["token"].(string)
	user, _ := out["user"].(map[string]any)
	if st != 200 || tok == "" || out["token_type"] != "Bearer" || user["username"] != "alice" || user["auth_method"] != "proxy_headers" {
		t.Fatalf("sign-in: %d %v", st, out)
	}
	// The token on the proxy, with the OpenAI SDK; the caller's identity
	// headers stop at svc.
	c := g.client(tok)
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"),
		option.WithHeader("X-Remote-User", "mallory")); err != nil {
		t.Fatalf("chat with the sign-in token: %v", err)
	}
	if h := lastChat(t, fake).Header; h.Get("X-Remote-User") != "" || strings.Contains(h.Get("Authorization"), tok) {
		t.Errorf("the upstream saw the caller's identity header or token: %v", h)
	}
	entries := g.entriesAtLeast("user_id=alice", 1)
	if e := entries[0]; e["key_id"] != nil && e["key_id"] != "" {
		t.Errorf("a user's entry names a key: %v", e["key_id"])
	} else if u, _ := e["user"].(map[string]any); u == nil || u["department"] != "R&D" || !slices.Contains(anyStrings(u["groups"]), "svc-Admins") {
		t.Errorf("the entry's user: %v", e["user"])
	}
	// An admin-role token works on the management API; a user's does not.
	if st := adminAs(t, g, tok, "/api/enterprise/vkeys"); st != 200 {
		t.Errorf("an admin-role token on management: %d", st)
	}
	_, out = signIn(t, g, map[string]string{"X-Remote-User": "bob", "X-User-Groups": "eng"})
	bob, _ := out["token"].(string)
	if st := adminAs(t, g, bob, "/api/enterprise/vkeys"); st != 403 {
		t.Errorf("a user-role token on management: %d, want 403 (a valid credential, not an admin's)", st)
	}
	// Revocation: refused at once.
	if st := g.admin("POST", "/api/auth/sso/revoke", map[string]any{"username": "alice"}, nil); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); statusOf(err) != 401 {
		t.Errorf("a revoked user's token: %v, want 401", err)
	}
}

// TestSignInUntrustedHeaders: identity headers from an address outside
// sso.trusted_proxy_cidrs sign nobody in, on sign-in or on the proxy.
func TestSignInUntrustedHeaders(t *testing.T) {
	g := start(t, providertest.NewOpenAI(t), config.Map{"sso.trusted_proxy_cidrs": "10.9.9.9/32"})
	if st, out := signIn(t, g, map[string]string{"X-Remote-User": "alice", "X-User-Groups": "svc-Admins"}); st != 401 {
		t.Errorf("sign-in from an untrusted address: %d %v", st, out)
	}
	resp, _ := g.post("/v1/chat/completions", "", []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`),
		map[string]string{"X-Remote-User": "alice"})
	if resp.StatusCode != 401 {
		t.Errorf("a chat with identity headers only: %d, want 401", resp.StatusCode)
	}
	var cfg map[string]any
	if st := g.admin("GET", "/api/auth/sso/config", nil, &cfg); st != 200 || cfg["success"] != false {
		t.Errorf("the unconfigured config: %d %v", st, cfg)
	}
}

// adminAs GETs a management path with tok as the bearer.
func adminAs(t *testing.T, g *gateway, tok, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", g.mgmt+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func anyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// oidcIssuer is a local OIDC identity provider: discovery and a JWKS with
// one RSA key; sign makes ID tokens with it.
type oidcIssuer struct {
	url  string
	key  *rsa.PrivateKey
	sign func(claims jwt.MapClaims) string
}

func newOIDCIssuer(t *testing.T) *oidcIssuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &oidcIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/jwks",
			"authorization_endpoint": iss.url + "/authorize", "token_endpoint": iss.url + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}, "response_types_supported": []string{"code"},
			"subject_types_supported": []string{"public"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	iss.sign = func(c jwt.MapClaims) string {
		now := time.Now()
		base := jwt.MapClaims{"iss": iss.url, "aud": "svc-app", "sub": "u-1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range c {
			base[k] = v
		}
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, base)
		tk.Header["kid"] = "k1"
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return iss
}

// TestSignInOIDC: an ID token from a configured issuer is exchanged for
// svc's token (roles from the configured admin groups), which works with
// the OpenAI SDK; a token for another audience names the check.
func TestSignInOIDC(t *testing.T) {
	idp := newOIDCIssuer(t)
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	// A configuration the verifier would not take is refused, naming the
	// field, and leaves nothing stored.
	for _, bad := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"client_id": "svc-app", "tenant_id": "common"}, "tenant_id"},
		{map[string]any{"client_id": strings.Repeat("a", 300), "issuer": idp.url}, "client_id"},
		{map[string]any{"client_id": "svc-app", "issuer": idp.url + "?x=1"}, "issuer"},
	} {
		var out struct {
			Error struct{ Param string } `json:"error"`
		}
		if st := g.admin("POST", "/api/auth/sso/config", bad.body, &out); st != 400 || out.Error.Param != bad.param {
			t.Errorf("config %v: %d naming %q, want 400 naming %q", bad.body, st, out.Error.Param, bad.param)
		}
	}
	var unset map[string]any
	if st := g.admin("GET", "/api/auth/sso/config", nil, &unset); st != 200 || unset["success"] != false {
		t.Errorf("after refused updates: %d %v, want nothing stored", st, unset)
	}
	if st := g.admin("POST", "/api/auth/sso/config", map[string]any{"client_id": "svc-app", "issuer": idp.url,
		"admin_groups": []string{"ai-admins"}}, nil); st != 200 {
		t.Fatalf("config: %d", st)
	}
	st, out := signIn(t, g, map[string]string{"Authorization": "Bearer " + idp.sign(jwt.MapClaims{
		"email": "carol@corp.example", "groups": []string{"ai-admins", "eng"}, "name": "Carol C", "department": "Ops"})})
	user, _ := out["user"].(map[string]any)
	tok, _ := out["token"].(string)
	if st != 200 || user["username"] != "carol" || !strings.HasPrefix(fmt.Sprint(user["auth_method"]), "oidc:") ||
		!slices.Contains(anyStrings(user["roles"]), "admin") {
		t.Fatalf("OIDC sign-in: %d %v", st, out)
	}
	c := g.client(tok)
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); err != nil {
		t.Fatalf("chat with the token: %v", err)
	}
	if e := g.entriesAtLeast("user_id=carol", 1)[0]; fmt.Sprint(e["user"]) == "<nil>" {
		t.Errorf("entry %v", e)
	}
	for name, claims := range map[string]jwt.MapClaims{
		"audience": {"aud": "another-app", "email": "x@y"},
		"expired":  {"exp": time.Now().Add(-time.Hour).Unix(), "email": "x@y"},
		"issuer":   {"iss": "https://evil.example", "email": "x@y"},
	} {
		st, out := signIn(t, g, map[string]string{"Authorization": "Bearer " + idp.sign(claims)})
		if st != 401 || !strings.Contains(jsonText(out), name) {
			t.Errorf("%s: %d %v, want a 401 naming it", name, st, out)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTeamLimits: a team's limit holds across its signed-in members, and
// its model allow-list restricts them; a user outside it is unaffected.
func TestTeamLimits(t *testing.T) {
	g := start(t, providertest.NewOpenAI(t), config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32"})
	var team map[string]any
	if st := g.admin("POST", "/api/teams", map[string]any{"team_id": "eng", "rpm_limit": 3,
		"model_allowlist": []string{"gpt-4o-mini"}}, &team); st != 200 || team["budget_period"] != "monthly" {
		t.Fatalf("create team: %d %v", st, team)
	}
	if st := g.admin("POST", "/api/teams", map[string]any{"team_id": "x", "rpm_limit": -1}, nil); st != 400 {
		t.Errorf("a negative limit: %d, want 400", st)
	}
	tokenOf := func(user, groups string) string {
		_, out := signIn(t, g, map[string]string{"X-Remote-User": user, "X-User-Groups": groups})
		tok, _ := out["token"].(string)
		if tok == "" {
			t.Fatalf("sign-in %s: %v", user, out)
		}
		return tok
	}
	ann, bob, cy := g.client(tokenOf("ann", "eng")), g.client(tokenOf("bob", "other,eng")), g.client(tokenOf("cy", "sales"))
	ctx := context.Background()
	for i, c := range []*openai.Client{&ann, &bob, &ann} {
		if _, err := c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); err != nil {
			t.Fatalf("team call %d: %v", i+1, err)
		}
	}
	if _, err := bob.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); statusOf(err) != 429 {
		t.Errorf("the team's fourth call in a minute: %v, want 429", err)
	}
	for range 4 {
		if _, err := cy.Chat.Completions.New(ctx, chatParams("gpt-4o", "hi")); err != nil {
			t.Fatalf("a user of no team: %v", err)
		}
	}
	if st := g.admin("PUT", "/api/teams/eng", map[string]any{"model_allowlist": []string{"gpt-4o-mini"}}, nil); st != 200 {
		t.Fatalf("update: %d", st)
	}
	if _, err := ann.Chat.Completions.New(ctx, chatParams("gpt-4o", "hi")); statusOf(err) != 403 {
		t.Errorf("a model outside the team's allow-list: %v, want 403", err)
	}
}

// TestSignInAcrossProcesses: a token minted by the management process is
// good on a separate proxy process (the key derives from the shared master
// key), and a revocation through management refuses it there within a
// second.
func TestSignInAcrossProcesses(t *testing.T) {
	shared := with(sharedStores(t), "sso.trusted_proxy_cidrs", "127.0.0.1/32")
	fake := providertest.NewOpenAI(t)
	mg := start(t, fake, with(shared, "SERVICE_TYPE", "api-server"))
	px := start(t, fake, with(shared, "SERVICE_TYPE", "proxy"))
	_, out := signIn(t, mg, map[string]string{"X-Remote-User": "dana", "X-User-Groups": "eng"})
	tok, _ := out["token"].(string)
	c := px.client(tok)
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); err != nil {
		t.Fatalf("management's token on the proxy process: %v", err)
	}
	if st := mg.admin("POST", "/api/auth/sso/revoke", map[string]any{"username": "dana"}, nil); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if !eventually(time.Second, func() bool {
		_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"))
		return statusOf(err) == 401
	}) {
		t.Error("the proxy process still accepts a token revoked through management a second later")
	}
}

// TestRoleAssignedPreset: a preset assigned to a role (here a directory
// group) checks the answers of the signed-in users in that group, and not
// of the others.
func TestRoleAssignedPreset(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("The card on file is 4111 1111 1111 1111."))
	g := start(t, fake, config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32"})
	var pol, preset struct{ ID string }
	if code := g.policyCall("POST", "/api/policies", map[string]any{"name": "no-cards", "policy_type": "compliance",
		"content": "Block any answer that contains a credit card number."}, &pol); code != 201 {
		t.Fatalf("create policy: %d", code)
	}
	if code := g.policyCall("POST", "/api/presets", map[string]any{"name": "pci", "policy_ids": []string{pol.ID}}, &preset); code != 201 {
		t.Fatalf("create preset: %d", code)
	}
	if code := g.policyCall("POST", "/api/policy/assignments", map[string]any{"kind": "role", "subject": "payments", "preset_id": preset.ID}, nil); code != 201 && code != 200 {
		t.Fatalf("assign: %d", code)
	}
	tokenOf := func(user, groups string) string {
		_, out := signIn(t, g, map[string]string{"X-Remote-User": user, "X-User-Groups": groups})
		tok, _ := out["token"].(string)
		return tok
	}
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"card?"}]}`)
	resp, b := g.post("/v1/chat/completions", tokenOf("pat", "payments"), body, nil)
	if resp.StatusCode != 403 || !strings.Contains(string(b), "no-cards") {
		t.Errorf("a payments user's answer with a card number: %d %s, want the preset's block", resp.StatusCode, b)
	}
	if resp, b := g.post("/v1/chat/completions", tokenOf("eli", "eng"), body, nil); resp.StatusCode != 200 {
		t.Errorf("a user outside the role: %d %s", resp.StatusCode, b)
	}
}

// TestPolicyTargetsGroupsAndDepartments: a policy's metadata targeting
// (ad_groups, departments) is matched against the signed-in user's
// directory groups and department: under one default preset, a card
// number in an answer is blocked for a contractor and for Finance, not for
// an engineer.
func TestPolicyTargetsGroupsAndDepartments(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithReply("The card on file is 4111 1111 1111 1111."))
	g := start(t, fake, config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32", "SVC_DEFAULT_PRESET": "targeted"})
	var ids []string
	for _, p := range []map[string]any{
		{"name": "contractor-cards", "metadata": map[string]any{"ad_groups": []string{"contractors"}}},
		{"name": "finance-cards", "metadata": map[string]any{"departments": []string{"Finance"}}},
	} {
		p["policy_type"], p["content"] = "compliance", "Block any answer that contains a credit card number."
		var out struct{ ID string }
		if code := g.policyCall("POST", "/api/policies", p, &out); code != 201 {
			t.Fatalf("create policy %v: %d", p["name"], code)
		}
		ids = append(ids, out.ID)
	}
	if code := g.policyCall("POST", "/api/presets", map[string]any{"name": "targeted", "policy_ids": ids}, nil); code != 201 {
		t.Fatalf("create preset: %d", code)
	}
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"card?"}]}`)
	for _, c := range []struct {
		user, groups, dept string
		blockedBy          string
	}{
		{"cam", "contractors", "Engineering", "contractor-cards"},
		{"fin", "staff", "Finance", "finance-cards"},
		{"eli", "staff", "Engineering", ""},
	} {
		_, out := signIn(t, g, map[string]string{"X-Remote-User": c.user, "X-User-Groups": c.groups, "X-User-Department": c.dept})
		tok, _ := out["token"].(string)
		resp, b := g.post("/v1/chat/completions", tok, body, nil)
		switch {
		case c.blockedBy != "" && (resp.StatusCode != 403 || !strings.Contains(string(b), c.blockedBy)):
			t.Errorf("%s (%s, %s): %d %s, want 403 naming %s", c.user, c.groups, c.dept, resp.StatusCode, b, c.blockedBy)
		case c.blockedBy == "" && resp.StatusCode != 200:
			t.Errorf("%s (%s, %s): %d %s, want 200: no policy targets them", c.user, c.groups, c.dept, resp.StatusCode, b)
		}
	}
}

// TestUserDefaultLimits: with SVC_USER_RPM_LIMIT, each signed-in user in no
// team has that limit for themselves (two users do not share it), while a
// team's members have their team's instead.
func TestUserDefaultLimits(t *testing.T) {
	g := start(t, providertest.NewOpenAI(t), config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32", "SVC_USER_RPM_LIMIT": "2"})
	if st := g.admin("POST", "/api/teams", map[string]any{"team_id": "eng", "rpm_limit": 5}, nil); st != 200 {
		t.Fatalf("create team: %d", st)
	}
	clientOf := func(user, groups string) openai.Client {
		_, out := signIn(t, g, map[string]string{"X-Remote-User": user, "X-User-Groups": groups})
		tok, _ := out["token"].(string)
		return g.client(tok)
	}
	ctx := context.Background()
	calls := func(c openai.Client, n int) (ok int) {
		for range n {
			if _, err := c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); err == nil {
				ok++
			} else if statusOf(err) != 429 {
				t.Fatalf("call: %v", err)
			}
		}
		return ok
	}
	if a, b, e := calls(clientOf("ann", "sales"), 3), calls(clientOf("bo", "sales"), 3), calls(clientOf("eve", "eng"), 4); a != 2 || b != 2 || e != 4 {
		t.Errorf("answered ann %d, bo %d (no team, 2 a minute each), eve %d (team eng, 5 a minute); want 2, 2, 4", a, b, e)
	}
}

// TestSignedInAdminRunsPolicyLibrary: a signed-in user with the admin role
// may use the policy library and the compliance component's admin routes
// (issue 14: "the admin key, or a JWT with the admin role once sign-in
// exists"); a signed-in user without it may not.
func TestSignedInAdminRunsPolicyLibrary(t *testing.T) {
	g := start(t, nil, config.Map{"sso.trusted_proxy_cidrs": "127.0.0.1/32"})
	if st := g.admin("POST", "/api/auth/sso/config", map[string]any{"admin_groups": []string{"ai-admins"}}, nil); st != 200 {
		t.Fatalf("config: %d", st)
	}
	tokenOf := func(user, groups string) string {
		_, out := signIn(t, g, map[string]string{"X-Remote-User": user, "X-User-Groups": groups})
		tok, _ := out["token"].(string)
		return tok
	}
	call := func(tok string) int {
		req, _ := http.NewRequest("POST", g.policy+"/api/policies", strings.NewReader(`{"name":"no-ssn","policy_type":"compliance","content":"Block any prompt that contains a US Social Security number."}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := call(tokenOf("ada", "ai-admins")); st != 201 {
		t.Errorf("a signed-in admin creating a policy: %d, want 201", st)
	}
	if st := call(tokenOf("bob", "eng")); st != 401 && st != 403 {
		t.Errorf("a signed-in user without the admin role: %d, want a refusal", st)
	}
}

// TestSignInAndTeamsOnTheChain: sign-in's and teams' admin actions are on
// the tamper-evident audit chain like the other admin actions, with the
// acting principal, and the chain still verifies.
func TestSignInAndTeamsOnTheChain(t *testing.T) {
	g := start(t, nil, nil)
	if st := g.admin("POST", "/api/auth/sso/config", map[string]any{"admin_groups": []string{"ai-admins"}}, nil); st != 200 {
		t.Fatalf("config: %d", st)
	}
	if st := g.admin("POST", "/api/auth/sso/revoke", map[string]any{"username": "mallory"}, nil); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if st := g.admin("POST", "/api/teams", map[string]any{"team_id": "eng", "rpm_limit": 5}, nil); st != 200 {
		t.Fatalf("team: %d", st)
	}
	if st := g.admin("DELETE", "/api/teams/eng", nil, nil); st != 200 {
		t.Fatalf("delete team: %d", st)
	}
	for event, subject := range map[string]string{"sso.config.update": "sso_config", "sso.revoke": "mallory", "team.put": "eng", "team.delete": "eng"} {
		var page struct {
			Data []struct {
				EventType string `json:"event_type"`
				Actor     string `json:"actor"`
				Subject   string `json:"subject"`
			} `json:"data"`
		}
		if st := g.admin("GET", "/api/audit/logs?event_type="+event, nil, &page); st != 200 || len(page.Data) != 1 ||
			page.Data[0].EventType != event || page.Data[0].Subject != subject || page.Data[0].Actor == "" {
			t.Errorf("%s on the chain: %d %+v, want one entry on %s with its actor", event, st, page.Data, subject)
		}
	}
	var v struct{ OK bool }
	if st := g.admin("GET", "/api/audit/verify", nil, &v); st != 200 || !v.OK {
		t.Errorf("verify: %d %+v", st, v)
	}
}
