package registry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/mcpgw/registry"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLStore is the Store's conformance test, on SQLite and PostgreSQL.
func TestSQLStore(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		exerciseStore(t, registry.NewSQLStore(db))
	})
}

func exerciseStore(t *testing.T, s registry.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	rec := registry.Record{ID: "github", Config: []byte(`{"id":"github","name":"GitHub"}`),
		Sealed: []byte{1, 2, 3, 0, 255}, Version: 1, CreatedAt: t0, UpdatedAt: t0}
	if err := s.Put(ctx, rec); err != nil {
		t.Fatalf("Put(create) = %v", err)
	}
	got, err := s.Get(ctx, "github")
	if err != nil {
		t.Fatalf("Get = %v", err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("Get after create (-want +got):\n%s", diff)
	}
	if err := s.Put(ctx, rec); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put(create existing) = %v, want store.ErrConflict", err)
	}

	// Updates: only at the version read, of the row created when it was.
	up := rec
	up.Config, up.Sealed, up.Version, up.UpdatedAt = []byte(`{"id":"github","name":"GH"}`), nil, 2, t0.Add(time.Minute)
	if err := s.Put(ctx, up); err != nil {
		t.Fatalf("Put(update to 2) = %v", err)
	}
	if got, _ := s.Get(ctx, "github"); !cmp.Equal(up, got) {
		t.Errorf("Get after update (-want +got):\n%s", cmp.Diff(up, got))
	}
	if err := s.Put(ctx, up); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put(update to 2 again) = %v, want store.ErrConflict", err)
	}
	other := up
	other.Version, other.CreatedAt = 3, t0.Add(time.Second) // another incarnation of the id
	if err := s.Put(ctx, other); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put(update, other created_at) = %v, want store.ErrConflict", err)
	}
	missing := up
	missing.ID = "nope"
	if err := s.Put(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Put(update unknown) = %v, want store.ErrNotFound", err)
	}
	if err := s.Put(ctx, registry.Record{ID: "x", Version: 0}); err == nil {
		t.Error("Put(version 0) = nil, want an error")
	}

	for _, id := range []string{"b", "A", "a-1", "a"} {
		r := rec
		r.ID, r.Config = id, []byte(`{}`)
		if err := s.Put(ctx, r); err != nil {
			t.Fatalf("Put(%s) = %v", id, err)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List = %v", err)
	}
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	if want := []string{"A", "a", "a-1", "b", "github"}; !cmp.Equal(ids, want) {
		t.Errorf("List ids = %v, want %v (byte order)", ids, want)
	}

	if err := s.Delete(ctx, "github"); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if err := s.Delete(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(again) = %v, want store.ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "github"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(deleted) = %v, want store.ErrNotFound", err)
	}
	// Ids no registration can have are not found, never a database error.
	for _, id := range []string{"", "a\x00b", "\xff\xfe", "a b", string(make([]byte, 65))} {
		if _, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want store.ErrNotFound", id, err)
		}
		if err := s.Delete(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want store.ErrNotFound", id, err)
		}
	}
}
