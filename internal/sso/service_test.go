package sso_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/sso"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func ptr[T any](v T) *T { return &v }

// TestService runs two Services (two processes) on one database: a
// configuration change and a revocation made by one are in force in the
// other after its next read; roles follow the admin patterns, and stay as
// first given unless groups are synced at every login.
func TestService(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Unix(1_800_000_000, 0)
		clock := func() time.Time { return now }
		var seen []int64
		a := sso.NewService(sso.Options{Store: sso.NewSQLStore(db), Now: clock, TokenTTL: time.Hour})
		b := sso.NewService(sso.Options{Store: sso.NewSQLStore(db), Now: clock, OnConfig: func(c sso.Config) { seen = append(seen, c.Version) }})
		for _, s := range []*sso.Service{a, b} {
			if err := s.Load(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := a.Config(); ok {
			t.Fatal("a configuration before any was stored")
		}
		c, err := a.UpdateConfig(ctx, sso.Patch{ClientID: ptr("svc-app"), Issuer: ptr("https://idp.example.com"),
			AdminGroups: &[]string{"platform-*"}})
		if err != nil || c.Version != 1 || !c.OIDCConfigured() {
			t.Fatalf("first update: %+v %v", c, err)
		}
		c, err = a.UpdateConfig(ctx, sso.Patch{SAMLSPEntityID: ptr("https://svc.example.com/saml")})
		if err != nil || c.Version != 2 || c.ClientID != "svc-app" || c.SAMLSPEntityID == "" {
			t.Fatalf("a subset update must keep the other fields: %+v %v", c, err)
		}
		var fe *sso.FieldError
		if _, err := a.UpdateConfig(ctx, sso.Patch{JWKSURI: ptr("http://evil.example.com/jwks")}); !errors.As(err, &fe) || fe.Field != "jwks_uri" {
			t.Errorf("an http JWKS address: %v, want a field error", err)
		}
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if got, ok := b.Config(); !ok || got.Version != 2 || !slices.Equal(seen, []int64{2}) {
			t.Errorf("the other process: %+v %v (OnConfig %v)", got, ok, seen)
		}

		// Roles: the admin pattern, kept for a returning user without sync.
		alice := sso.Identity{Username: "alice", Groups: []string{"platform-admins"}, Method: "saml"}
		if _, roles, err := a.Exchange(ctx, alice); err != nil || !slices.Contains(roles, "admin") {
			t.Fatalf("alice: %v %v", roles, err)
		}
		alice.Groups = []string{"eng"}
		if id, roles, _ := a.Exchange(ctx, alice); !slices.Contains(roles, "admin") || !slices.Equal(id.Groups, []string{"platform-admins"}) {
			t.Errorf("without sync, a returning user keeps her roles and groups: %v %v", roles, id.Groups)
		}
		// Another identity under the same short name (another IdP, another
		// mail domain) does not inherit alice's stored roles.
		guest := sso.Identity{Username: "alice", Email: "alice@guest.example", Groups: []string{"visitors"}, Method: "oidc:guest"}
		if id, roles, _ := a.Exchange(ctx, guest); slices.Contains(roles, "admin") || !slices.Equal(id.Groups, []string{"visitors"}) {
			t.Errorf("another holder of the name took the stored roles: %v %v", roles, id.Groups)
		}
		// Kerberos gives no e-mail: the realm tells holders apart. A stored
		// admin principal keeps its roles; the same short name from a
		// trusted partner realm does not take them.
		corp := sso.Identity{Username: "carol", Groups: []string{"platform-admins"}, Method: sso.MethodKerberos, Subject: "carol@CORP.EXAMPLE"}
		if _, roles, err := a.Exchange(ctx, corp); err != nil || !slices.Contains(roles, "admin") {
			t.Fatalf("carol@CORP: %v %v", roles, err)
		}
		partner := sso.Identity{Username: "carol", Method: sso.MethodKerberos, Subject: "carol@PARTNER.EXAMPLE"}
		if _, roles, _ := a.Exchange(ctx, partner); slices.Contains(roles, "admin") {
			t.Errorf("carol@PARTNER took carol@CORP's stored roles: %v", roles)
		}
		if _, err := a.UpdateConfig(ctx, sso.Patch{SyncGroupsOnLogin: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if id, roles, _ := a.Exchange(ctx, alice); slices.Contains(roles, "admin") || !slices.Equal(id.Groups, []string{"eng"}) {
			t.Errorf("with sync, roles follow the groups: %v %v", roles, id.Groups)
		}

		// Revocations: by user (tokens until now) and by token.
		iat := now.Add(-time.Minute)
		if r, err := b.Revoked(ctx, "bob", "j1", iat); err != nil || r {
			t.Fatalf("before any revocation: %v %v", r, err)
		}
		if err := a.Revoke(ctx, sso.RevokeUser, "bob"); err != nil {
			t.Fatal(err)
		}
		if err := a.Revoke(ctx, sso.RevokeToken, "j9"); err != nil {
			t.Fatal(err)
		}
		if r, _ := a.Revoked(ctx, "bob", "j1", iat); !r {
			t.Error("the revoking process still accepts bob's token")
		}
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			user, jti string
			iat       time.Time
			want      bool
		}{
			{"bob", "j1", iat, true},
			{"bob", "j2", now.Add(2 * time.Second), false}, // signed in again after
			{"carol", "j9", iat, true},
			{"carol", "j3", iat, false},
		} {
			if r, err := b.Revoked(ctx, c.user, c.jti, c.iat); err != nil || r != c.want {
				t.Errorf("%s %s: revoked %v %v, want %v", c.user, c.jti, r, err, c.want)
			}
		}
		// Past the longest token's life the revocations are gone.
		now = now.Add(2 * time.Hour)
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if r, _ := b.Revoked(ctx, "bob", "j1", iat); r {
			t.Error("a revocation outlived every token it could refuse")
		}
	})
}

// TestRevokedBeforeLoad: no token passes before the list was read.
func TestRevokedBeforeLoad(t *testing.T) {
	s := sso.NewService(sso.Options{})
	if _, err := s.Revoked(context.Background(), "u", "j", time.Now()); err == nil {
		t.Error("Revoked answered before the list was read")
	}
}

// TestExpiredRevocationsDeleted: a revocation past its expiry (no token it
// could refuse is valid) leaves the table at the next revocation.
func TestExpiredRevocationsDeleted(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		st := sso.NewSQLStore(db)
		now := time.Unix(1_800_000_000, 0)
		if err := st.Revoke(ctx, sso.Revocation{Kind: sso.RevokeToken, Subject: "old", RevokedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := st.Revoke(ctx, sso.Revocation{Kind: sso.RevokeToken, Subject: "new", RevokedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM sso_revocations`).Scan(&n); err != nil || n != 1 {
			t.Errorf("rows after a revocation: %d, %v; want 1 (the expired one deleted)", n, err)
		}
	})
}
