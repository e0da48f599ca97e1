package oauth_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLStore: put, read, list, compare-and-set, delete on SQLite and
// PostgreSQL.
func TestSQLStore(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := oauth.NewSQLStore(db)
		ctx := t.Context()
		at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		r := oauth.Record{
			ServerID: "docs", Issuer: "https://as.example", TokenEndpoint: "https://as.example/token",
			Resource: "https://mcp.example/mcp", RedirectURI: "https://svc.example/cb", ClientID: "c1",
			ClientSecret: []byte{1, 2}, ClientAuth: "client_secret_basic", Registered: true,
			AccessToken: []byte{3, 4}, RefreshToken: []byte{}, TokenType: "Bearer",
			Scopes: []string{"a", "b"}, ExpiresAt: at.Add(time.Hour), ObtainedAt: at, AuthorizedAt: at,
			AuthorizedBy: "admin:",
		}
		if _, err := s.Record(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Record of none: got %v, want ErrNotFound", err)
		}
		v, err := s.Put(ctx, r)
		if err != nil || v != 1 {
			t.Fatalf("Put: got %d, %v; want version 1", v, err)
		}
		got, err := s.Record(ctx, "docs")
		if err != nil {
			t.Fatal(err)
		}
		r.Version = 1
		if d := cmp.Diff(r, got); d != "" {
			t.Errorf("Record (-want +got):\n%s", d)
		}

		// A second authorization replaces the row and bumps the version.
		r2 := r
		r2.ExpiresAt = time.Time{}
		r2.Registered = false
		r2.Scopes = nil
		if v, err := s.Put(ctx, r2); err != nil || v != 2 {
			t.Fatalf("second Put: got %d, %v; want version 2", v, err)
		}
		got, _ = s.Record(ctx, "docs")
		if !got.ExpiresAt.IsZero() || got.Registered || len(got.Scopes) != 0 || got.Version != 2 {
			t.Errorf("after the second Put: got %+v", got)
		}

		// Swap at a stale version fails; at the current one succeeds.
		stale := got
		stale.Version = 1
		if _, err := s.Swap(ctx, stale); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Swap at a stale version: got %v, want ErrConflict", err)
		}
		next := got
		next.AccessToken = []byte{9}
		if v, err := s.Swap(ctx, next); err != nil || v != 3 {
			t.Fatalf("Swap: got %d, %v; want version 3", v, err)
		}
		if _, err := s.Swap(ctx, next); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Swap again at the same version: got %v, want ErrConflict", err)
		}

		// Of two racing swaps at one version, exactly one wins.
		cur, _ := s.Record(ctx, "docs")
		var wg sync.WaitGroup
		wins := make(chan bool, 4)
		for range 4 {
			wg.Go(func() {
				_, err := s.Swap(ctx, cur)
				if err != nil && !errors.Is(err, store.ErrConflict) {
					t.Errorf("Swap: %v", err)
				}
				wins <- err == nil
			})
		}
		wg.Wait()
		close(wins)
		n := 0
		for w := range wins {
			if w {
				n++
			}
		}
		if n != 1 {
			t.Errorf("racing swaps: %d won, want 1", n)
		}

		r3 := r
		r3.ServerID = "alpha"
		if _, err := s.Put(ctx, r3); err != nil {
			t.Fatal(err)
		}
		list, err := s.Records(ctx)
		if err != nil || len(list) != 2 || list[0].ServerID != "alpha" || list[1].ServerID != "docs" {
			t.Errorf("Records: got %d records, %v; want alpha, docs", len(list), err)
		}
		if err := s.Delete(ctx, "docs"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second Delete: got %v, want ErrNotFound", err)
		}
		if _, err := s.Swap(ctx, cur); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Swap of a deleted record: got %v, want ErrConflict", err)
		}
	})
}

// TestKVStates: a state is taken once, even by racing takes, on the
// in-process KV and on Redis.
func TestKVStates(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) oauth.StateKV{
		"memkv": func(t *testing.T) oauth.StateKV {
			kv := memkv.New()
			t.Cleanup(func() { kv.Close() })
			return kv
		},
		"redis": func(t *testing.T) oauth.StateKV { return storetest.RedisKV(t) },
	} {
		t.Run(name, func(t *testing.T) {
			s := oauth.NewKVStates(open(t))
			ctx := t.Context()
			if err := s.Put(ctx, "k1", []byte("v1"), time.Minute); err != nil {
				t.Fatal(err)
			}
			if v, err := s.Take(ctx, "k1"); err != nil || string(v) != "v1" {
				t.Fatalf("Take: got %q, %v; want v1", v, err)
			}
			if _, err := s.Take(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("second Take: got %v, want ErrNotFound", err)
			}
			if _, err := s.Take(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Take of an unknown key: got %v, want ErrNotFound", err)
			}
			if err := s.Put(ctx, "k0", []byte("v"), 0); err == nil {
				t.Errorf("Put with no ttl: got nil, want an error")
			}

			if err := s.Put(ctx, "k2", []byte("v2"), time.Minute); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wins := make(chan bool, 8)
			for range 8 {
				wg.Go(func() {
					_, err := s.Take(ctx, "k2")
					if err != nil && !errors.Is(err, store.ErrNotFound) {
						t.Errorf("Take: %v", err)
					}
					wins <- err == nil
				})
			}
			wg.Wait()
			close(wins)
			n := 0
			for w := range wins {
				if w {
					n++
				}
			}
			if n != 1 {
				t.Errorf("racing takes: %d won, want 1", n)
			}
		})
	}
}
