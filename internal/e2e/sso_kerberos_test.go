package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/sso/kerberos/kdctest"
)

// negotiate posts to /api/auth/sso/signin with the Authorization value
// authz (none when empty) and returns the status, the WWW-Authenticate
// values and the JSON body.
func negotiate(t *testing.T, g *gateway, authz string) (int, []string, map[string]any) {
	t.Helper()
	hdr := map[string]string{}
	if authz != "" {
		hdr["Authorization"] = authz
	}
	st, h, out := signInHeaders(t, g, hdr)
	return st, h.Values("WWW-Authenticate"), out
}

// errorCode is the code of an OpenAI-shaped error body.
func errorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// TestSignInKerberos signs users in to svc with tickets a real MIT KDC
// issued (kdctest), svc configured with the file settings
// sso.kerberos.*: the challenge without a token, the username of the
// ticket's principal without its realm, the JWT working with the OpenAI
// SDK on the proxy, each refusal naming its check, and the
// mutual-authentication answer a client verifies with its session key.
func TestSignInKerberos(t *testing.T) {
	k := kdctest.Start(t)
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, config.Map{"sso.kerberos.enabled": "true", "sso.kerberos.service_principal": k.ServicePrincipal,
		"sso.kerberos.keytab_path": k.KeytabPath, "sso.kerberos.admin_groups": "*"})

	t.Run("no token: the Negotiate challenge", func(t *testing.T) {
		st, www, out := negotiate(t, g, "")
		if st != 401 || !slices.Contains(www, "Negotiate") {
			t.Errorf("sign-in without credentials: %d, WWW-Authenticate %q, %v; want 401 with Negotiate", st, www, out)
		}
	})

	tok := k.Token(t, kdctest.User, kdctest.Password, kdctest.Service)
	st, www, out := negotiate(t, g, "Negotiate "+tok)
	jwt, _ := out["token"].(string)
	user, _ := out["user"].(map[string]any)
	if st != 200 || jwt == "" || out["token_type"] != "Bearer" || user["username"] != kdctest.User || user["auth_method"] != "kerberos" {
		t.Fatalf("Kerberos sign-in: %d %v", st, out)
	}
	if len(www) != 0 {
		t.Errorf("an answer token %q for a client that did not ask for mutual authentication", www)
	}
	// A ticket carries no groups (MIT issues no group PAC): even a
	// match-all admin pattern makes nobody admin.
	if roles := anyStrings(user["roles"]); !slices.Equal(roles, []string{"user"}) {
		t.Errorf("roles %v, want [user]", roles)
	}

	t.Run("the token with the OpenAI SDK on the proxy", func(t *testing.T) {
		c := g.client(jwt)
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); err != nil {
			t.Fatalf("chat with the Kerberos sign-in token: %v", err)
		}
		if h := lastChat(t, fake).Header; strings.Contains(h.Get("Authorization"), jwt) {
			t.Errorf("the upstream saw the sign-in token: %v", h)
		}
		if e := g.entriesAtLeast("user_id="+kdctest.User, 1)[0]; e["user_id"] != kdctest.User {
			t.Errorf("the Kerberos user's entry: %v", e)
		}
		if st := adminAs(t, g, jwt, "/api/enterprise/vkeys"); st != 403 {
			t.Errorf("a user-role token on management: %d, want 403 (a valid credential, not an admin's)", st)
		}
	})

	t.Run("another user is another identity", func(t *testing.T) {
		st, _, out := negotiate(t, g, "Negotiate "+k.Token(t, "bob", k.Users["bob"], kdctest.Service))
		if u, _ := out["user"].(map[string]any); st != 200 || u["username"] != "bob" {
			t.Errorf("bob's sign-in: %d %v", st, out)
		}
	})

	t.Run("refusals name the check", func(t *testing.T) {
		for name, authz := range map[string]string{
			"kerberos_replay":        "Negotiate " + tok,
			"kerberos_wrong_service": "Negotiate " + k.Token(t, kdctest.User, kdctest.Password, kdctest.OtherService),
			"kerberos_no_token":      "Negotiate",
			"kerberos_malformed":     "Negotiate bm90IGEgdG9rZW4=",
		} {
			st, www, out := negotiate(t, g, authz)
			if st != 401 || errorCode(out) != name || !slices.Contains(www, "Negotiate") {
				t.Errorf("%s: %d, WWW-Authenticate %q, %v; want 401 %s with the challenge", name, st, www, out, name)
			}
		}
	})

	t.Run("mutual authentication: the answer proves the service key", func(t *testing.T) {
		tok, mutual := k.MutualToken(t, kdctest.User, kdctest.Password, kdctest.Service)
		st, www, out := negotiate(t, g, "Negotiate "+tok)
		if st != 200 || len(www) != 1 || !strings.HasPrefix(www[0], "Negotiate ") {
			t.Fatalf("mutual sign-in: %d, WWW-Authenticate %q, %v; want 200 with one Negotiate <token>", st, www, out)
		}
		if err := mutual.Check(strings.TrimPrefix(www[0], "Negotiate ")); err != nil {
			t.Errorf("the client's check of the answer: %v", err)
		}
		if _, other := k.MutualToken(t, kdctest.User, kdctest.Password, kdctest.Service); other.Check(strings.TrimPrefix(www[0], "Negotiate ")) == nil {
			t.Error("the answer passes the check of another authenticator")
		}
	})
}
