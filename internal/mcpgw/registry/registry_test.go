package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/registry"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const (
	secretToken = "tok-SECRET-9f8e7d6c5b4a"
	secretEnv   = "env-SECRET-0a1b2c3d4e5f"
)

// TestResolverDown: a base_url whose host cannot be resolved for a reason
// other than its absence is svc's trouble (503), not the caller's (400).
func TestResolverDown(t *testing.T) {
	db := storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t))
	r := newRegistry(db, nil, func(o *registry.Options) {
		o.Egress.Resolver = failing{}
	})
	_, err := r.Create(t.Context(), bearer("github"))
	if apierr.KindOf(err) != apierr.Unavailable {
		t.Errorf("Create with the resolver down = %v (kind %v), want Unavailable", err, apierr.KindOf(err))
	}
	var ve *mcpgw.ValidationError
	if errors.As(err, &ve) {
		t.Errorf("Create with the resolver down = a ValidationError, want svc's error")
	}
}

type failing struct{}

func (failing) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
}

// resolver answers for the test's names without DNS.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

var names = resolver{
	"mcp.example.com":   "93.184.216.34",
	"other.example.com": "93.184.216.35",
	"localhost":         "127.0.0.1",
	"internal.corp":     "10.0.0.5",
}

func testSealer() *secret.Sealer {
	var k secret.MasterKey
	for i := range k {
		k[i] = byte(i + 1)
	}
	return secret.NewSealer(k)
}

// newRegistry returns a Registry over db with the test's resolver; edit
// changes its options.
func newRegistry(db *sqlstore.DB, bus registry.Bus, edit func(*registry.Options)) *registry.Registry {
	o := registry.Options{
		Store:    registry.NewSQLStore(db),
		Sealer:   testSealer(),
		Bus:      bus,
		Egress:   egress.Policy{Resolver: names},
		Validate: mcpgw.ValidateOptions{StdioEnabled: true},
	}
	if edit != nil {
		edit(&o)
	}
	return registry.New(o)
}

func bearer(id string) mcpgw.Server {
	return mcpgw.Server{
		ID: id, Name: "GitHub tools", BaseURL: "https://mcp.example.com/mcp",
		AuthType: mcpgw.AuthBearer, AuthToken: secretToken,
		AllowedTools:  []string{"search", "read"},
		AllowedParams: mcpgw.AllowedParams{"search": {"q": "[a-z ]+", "limit": ""}},
		CostInfo:      mcpgw.CostInfo{PerCallUSD: 0.01},
	}
}

func stdio(id string) mcpgw.Server {
	return mcpgw.Server{
		ID: id, Transport: mcpgw.TransportStdio, Command: "/usr/bin/mcp-files", Args: []string{"--root", "/srv"},
		Env: map[string]string{"API_KEY": secretEnv, "MODE": "ro"},
	}
}

func TestLifecycle(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		r := newRegistry(db, memkv.New(), nil)
		var changes []string
		r.OnChange(func(id string) { changes = append(changes, id) })

		created, err := r.Create(ctx, bearer("github"))
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		if created.AuthToken != "" || !created.HasAuthToken || created.Transport != mcpgw.TransportStreamable ||
			created.GuardrailMode != mcpgw.ModeStrict || created.CreatedAt.IsZero() {
			t.Errorf("Create returned %+v, want normalised, redacted, has_auth_token, times set", created)
		}
		got, err := r.Get(ctx, "github")
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("Get differs from Create's answer (-create +get):\n%s", diff)
		}
		// The view: at once in this process, without Run.
		view, err := r.Server(ctx, "github")
		if err != nil {
			t.Fatalf("Server = %v", err)
		}
		if diff := cmp.Diff(created, view); diff != "" {
			t.Errorf("Server differs from Create's answer (-create +view):\n%s", diff)
		}
		if tok, env, err := r.Credential(ctx, "github"); err != nil || tok != secretToken || env != nil {
			t.Errorf("Credential = %q, %v, %v; want the token, no env", tok, env, err)
		}
		if _, err := r.Create(ctx, bearer("github")); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Create(same id) = %v, want store.ErrConflict", err)
		}

		// Update: an omitted token is kept; fields are replaced.
		u := bearer("")
		u.AuthToken, u.Name, u.AllowedTools = "", "GitHub", nil
		updated, err := r.Update(ctx, "github", u)
		if err != nil {
			t.Fatalf("Update(no token) = %v", err)
		}
		if updated.Name != "GitHub" || updated.AllowedTools != nil || !updated.HasAuthToken ||
			!updated.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("Update returned %+v", updated)
		}
		if tok, _, _ := r.Credential(ctx, "github"); tok != secretToken {
			t.Errorf("Credential after Update without a token = %q, want the stored one kept", tok)
		}
		u.AuthToken = "new-token"
		if _, err := r.Update(ctx, "github", u); err != nil {
			t.Fatalf("Update(new token) = %v", err)
		}
		if tok, _, _ := r.Credential(ctx, "github"); tok != "new-token" {
			t.Errorf("Credential after rotation = %q, want new-token", tok)
		}
		// auth_type none clears the token.
		u.AuthType, u.AuthToken = mcpgw.AuthNone, ""
		cleared, err := r.Update(ctx, "github", u)
		if err != nil {
			t.Fatalf("Update(auth none) = %v", err)
		}
		if cleared.HasAuthToken {
			t.Error("has_auth_token after auth_type none = true, want false")
		}
		if tok, _, _ := r.Credential(ctx, "github"); tok != "" {
			t.Errorf("Credential after auth_type none = %q, want none", tok)
		}
		if _, err := r.Update(ctx, "nope", u); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Update(unknown) = %v, want store.ErrNotFound", err)
		}
		var ve *mcpgw.ValidationError
		if _, err := r.Update(ctx, "github", bearer("other")); !errors.As(err, &ve) || ve.Field != "id" {
			t.Errorf("Update(other id in body) = %v, want a ValidationError on id", err)
		}

		if _, err := r.Create(ctx, stdio("files")); err != nil {
			t.Fatalf("Create(stdio) = %v", err)
		}
		list, err := r.List(ctx)
		if err != nil || len(list) != 2 || list[0].ID != "files" || list[1].ID != "github" {
			t.Fatalf("List = %v, %v; want files, github", list, err)
		}
		servers, _ := r.Servers(ctx)
		if diff := cmp.Diff(list, servers); diff != "" {
			t.Errorf("Servers differs from List (-list +servers):\n%s", diff)
		}

		if err := r.Delete(ctx, "github"); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		if err := r.Delete(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete(again) = %v, want store.ErrNotFound", err)
		}
		if _, err := r.Server(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Server(deleted) = %v, want store.ErrNotFound", err)
		}
		if _, _, err := r.Credential(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Credential(deleted) = %v, want store.ErrNotFound", err)
		}
		if _, err := r.Get(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(deleted) = %v, want store.ErrNotFound", err)
		}
		want := []string{"github", "github", "github", "github", "files", "github"}
		if diff := cmp.Diff(want, changes); diff != "" {
			t.Errorf("OnChange ids (-want +got):\n%s", diff)
		}
	})
}

func TestEnvMerge(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		r := newRegistry(db, nil, nil)
		created, err := r.Create(ctx, stdio("files"))
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		if want := map[string]string{"API_KEY": registry.EnvMask, "MODE": registry.EnvMask}; !cmp.Equal(created.Env, want) {
			t.Errorf("Create's env = %v, want %v", created.Env, want)
		}
		_, env, err := r.Credential(ctx, "files")
		if want := map[string]string{"API_KEY": secretEnv, "MODE": "ro"}; err != nil || !cmp.Equal(env, want) {
			t.Errorf("Credential env = %v, %v; want %v", env, err, want)
		}
		// A round trip of the answer keeps the values; a new value replaces;
		// a name left out is dropped.
		u := *created
		u.Env = map[string]string{"API_KEY": registry.EnvMask, "DEBUG": "1"}
		if _, err := r.Update(ctx, "files", u); err != nil {
			t.Fatalf("Update = %v", err)
		}
		_, env, _ = r.Credential(ctx, "files")
		if want := map[string]string{"API_KEY": secretEnv, "DEBUG": "1"}; !cmp.Equal(env, want) {
			t.Errorf("Credential env after Update = %v, want %v", env, want)
		}
	})
}

// TestCredentialNeverShown: the token and env values appear in no answer,
// in no JSON, and not in the stored row's clear columns.
func TestCredentialNeverShown(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		r := newRegistry(db, nil, nil)
		var answers []any
		for _, s := range []mcpgw.Server{bearer("github"), stdio("files")} {
			c, err := r.Create(ctx, s)
			if err != nil {
				t.Fatalf("Create(%s) = %v", s.ID, err)
			}
			g, _ := r.Get(ctx, s.ID)
			v, _ := r.Server(ctx, s.ID)
			answers = append(answers, c, g, v)
		}
		list, _ := r.List(ctx)
		servers, _ := r.Servers(ctx)
		answers = append(answers, list, servers)
		for i, a := range answers {
			js, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			noSecret(t, "answer "+string(rune('0'+i))+" as JSON", string(js))
			for _, s := range flatten(a) {
				if s.AuthToken != "" {
					t.Errorf("answer %d: AuthToken set in the Go value", i)
				}
				for k, v := range s.Env {
					if v != registry.EnvMask {
						t.Errorf("answer %d: env %s = %q in the Go value, want the mask", i, k, v)
					}
				}
			}
		}

		rows, err := db.Query(ctx, `SELECT id, config, sealed FROM mcp_servers ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id, cfg string
			var sealed []byte
			if err := rows.Scan(&id, &cfg, &sealed); err != nil {
				t.Fatal(err)
			}
			n++
			noSecret(t, id+" config column", cfg)
			noSecret(t, id+" sealed column", string(sealed))
			if len(sealed) == 0 {
				t.Errorf("%s: sealed column empty, want the sealed credential", id)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(cfg), &m); err != nil {
				t.Fatalf("%s: config column is not JSON: %v", id, err)
			}
			for _, k := range []string{"auth_token", "created_at", "updated_at"} {
				if _, ok := m[k]; ok {
					t.Errorf("%s: config column has %s", id, k)
				}
			}
			if id == "github" && m["has_auth_token"] != true {
				t.Errorf("github: config has_auth_token = %v, want true", m["has_auth_token"])
			}
			if id == "files" && !cmp.Equal(m["env"], map[string]any{"API_KEY": "", "MODE": ""}) {
				t.Errorf("files: config env = %v, want the names with empty values", m["env"])
			}
		}
		if n != 2 {
			t.Errorf("%d rows, want 2", n)
		}
	})
}

func flatten(a any) []*mcpgw.Server {
	switch v := a.(type) {
	case *mcpgw.Server:
		return []*mcpgw.Server{v}
	case []*mcpgw.Server:
		return v
	}
	return nil
}

func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{secretToken, secretEnv, "9f8e7d6c5b4a", "0a1b2c3d4e5f"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds a secret: %s", what, s)
		}
	}
}

func TestValidation(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		r := newRegistry(db, nil, nil)
		noStdio := newRegistry(db, nil, func(o *registry.Options) { o.Validate.StdioEnabled = false })
		private := newRegistry(db, nil, func(o *registry.Options) { o.Egress.AllowPrivate = true })
		with := func(edit func(*mcpgw.Server)) mcpgw.Server {
			s := bearer("srv")
			edit(&s)
			return s
		}
		tests := []struct {
			name  string
			r     *registry.Registry
			s     mcpgw.Server
			field string // "" when it must pass
		}{
			{"ok", r, bearer("ok-1"), ""},
			{"no id", r, with(func(s *mcpgw.Server) { s.ID = "" }), "id"},
			{"bad id", r, with(func(s *mcpgw.Server) { s.ID = "a b" }), "id"},
			{"double underscore", r, with(func(s *mcpgw.Server) { s.ID = "a__b" }), "id"},
			{"transport", r, with(func(s *mcpgw.Server) { s.Transport = "websocket" }), "transport"},
			{"no base_url", r, with(func(s *mcpgw.Server) { s.BaseURL = "" }), "base_url"},
			{"credentials in base_url", r, with(func(s *mcpgw.Server) { s.BaseURL = "https://u:p@mcp.example.com/" }), "base_url"},
			{"header without name", r, with(func(s *mcpgw.Server) { s.AuthType = mcpgw.AuthHeader }), "auth_header_name"},
			{"guardrail", r, with(func(s *mcpgw.Server) { s.GuardrailMode = "warn" }), "guardrail_mode"},
			{"cost", r, with(func(s *mcpgw.Server) { s.CostInfo.PerCallUSD = -1 }), "cost_info.per_call_usd"},
			{"pattern", r, with(func(s *mcpgw.Server) { s.AllowedParams = mcpgw.AllowedParams{"t": {"p": "("}} }), "allowed_params.t"},
			{"stdio off", noStdio, stdio("files-off"), "transport"},
			{"env name", r, func() mcpgw.Server { s := stdio("files-bad"); s.Env = map[string]string{"A=B": "x"}; return s }(), "env"},
			{"env NUL", r, func() mcpgw.Server { s := stdio("files-nul"); s.Env = map[string]string{"A": "x\x00"}; return s }(), "env.A"},
			// The egress policy at registration.
			{"metadata", r, with(func(s *mcpgw.Server) { s.BaseURL = "http://169.254.169.254/latest/meta-data/" }), "base_url"},
			{"metadata decimal", r, with(func(s *mcpgw.Server) { s.BaseURL = "http://2852039166/" }), "base_url"},
			{"metadata mapped", r, with(func(s *mcpgw.Server) { s.BaseURL = "http://[::ffff:a9fe:a9fe]/" }), "base_url"},
			{"loopback", r, with(func(s *mcpgw.Server) { s.BaseURL = "http://127.0.0.1:8080/mcp" }), "base_url"},
			{"localhost", r, with(func(s *mcpgw.Server) { s.BaseURL = "http://localhost:8080/mcp" }), "base_url"},
			{"private name", r, with(func(s *mcpgw.Server) { s.BaseURL = "https://internal.corp/mcp" }), "base_url"},
			{"unresolvable", r, with(func(s *mcpgw.Server) { s.BaseURL = "https://nowhere.example.com/mcp" }), "base_url"},
			{"private allowed", private, with(func(s *mcpgw.Server) { s.ID = "local"; s.BaseURL = "http://localhost:8080/mcp" }), ""},
			{"private name allowed", private, with(func(s *mcpgw.Server) { s.ID = "corp"; s.BaseURL = "https://internal.corp/mcp" }), ""},
			{"metadata even so", private, with(func(s *mcpgw.Server) { s.BaseURL = "http://169.254.169.254/" }), "base_url"},
			{"metadata v6 even so", private, with(func(s *mcpgw.Server) { s.BaseURL = "http://[fd00:ec2::254]/" }), "base_url"},
		}
		for _, tt := range tests {
			_, err := tt.r.Create(ctx, tt.s)
			if tt.field == "" {
				if err != nil {
					t.Errorf("%s: Create = %v, want nil", tt.name, err)
				}
				continue
			}
			var ve *mcpgw.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Errorf("%s: Create = %v, want a ValidationError on %s", tt.name, err, tt.field)
				continue
			}
			if _, err := r.Get(ctx, tt.s.ID); !errors.Is(err, store.ErrNotFound) && tt.s.ID != "" {
				t.Errorf("%s: refused server %q stored (Get = %v)", tt.name, tt.s.ID, err)
			}
		}
		// Update validates too.
		var ve *mcpgw.ValidationError
		s := bearer("")
		s.BaseURL = "http://0x7f000001/"
		if _, err := r.Update(ctx, "ok-1", s); !errors.As(err, &ve) || ve.Field != "base_url" {
			t.Errorf("Update(loopback base_url) = %v, want a ValidationError on base_url", err)
		}
	})
}

// TestServerIsAMapRead: the per-call read allocates nothing and never
// reaches the store.
func TestServerIsAMapRead(t *testing.T) {
	db := storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t))
	r := newRegistry(db, nil, nil)
	if _, err := r.Create(t.Context(), bearer("github")); err != nil {
		t.Fatalf("Create = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if s, err := r.Server(ctx, "github"); err != nil || s.ID != "github" {
		t.Fatalf("Server with the database closed = %v, %v; want the view's entry", s, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = r.Server(ctx, "github") }); n != 0 {
		t.Errorf("Server allocates %v times per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = r.Server(ctx, "unknown") }); n != 0 {
		t.Errorf("Server(unknown) allocates %v times per call, want 0", n)
	}
}
