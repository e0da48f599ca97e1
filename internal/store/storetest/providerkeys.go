package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/store"
)

// ExerciseProviderKeyStore checks that s behaves as keyvault.Store documents.
// Provider names carry a random token, so s may hold other records and the
// suite may run again on the same store. Subtests run in order and share s.
func ExerciseProviderKeyStore(t *testing.T, s keyvault.Store) {
	t.Helper()
	tok := randomHex(6)
	at := time.Date(2025, 6, 1, 12, 0, 0, 123456000, time.UTC)
	rec := func(name string, sealed []byte, updated time.Time) keyvault.Record {
		return keyvault.Record{Provider: name + "-" + tok, Sealed: sealed, Masked: "sk-…" + name, UpdatedAt: updated}
	}

	t.Run("NotFound", func(t *testing.T) {
		if _, err := s.ProviderKey(t.Context(), "missing-"+tok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ProviderKey(missing): got error %v, want store.ErrNotFound", err)
		}
		if err := s.DeleteProviderKey(t.Context(), "missing-"+tok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteProviderKey(missing): got error %v, want store.ErrNotFound", err)
		}
	})

	t.Run("PutGet", func(t *testing.T) {
		tests := []struct {
			name string
			rec  keyvault.Record
		}{
			{"text", rec("openai", []byte("sealed-bytes"), at)},
			{"binary", rec("anthropic", []byte{0, 1, 2, 0xfe, 0xff, 0}, at)},
			{"replace", rec("openai", []byte("resealed"), at.Add(time.Hour))},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				if err := s.PutProviderKey(ctx, tt.rec); err != nil {
					t.Fatalf("PutProviderKey: %v", err)
				}
				got, err := s.ProviderKey(ctx, tt.rec.Provider)
				if err != nil {
					t.Fatalf("ProviderKey: %v", err)
				}
				if diff := cmp.Diff(tt.rec, got); diff != "" {
					t.Errorf("ProviderKey (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("ListOrdered", func(t *testing.T) {
		ctx := t.Context()
		var want []keyvault.Record
		for _, name := range []string{"list-mistral", "list-azure", "list-gemini", "list-bedrock"} {
			r := rec(name, []byte(name), at)
			if err := s.PutProviderKey(ctx, r); err != nil {
				t.Fatalf("PutProviderKey: %v", err)
			}
			want = append(want, r)
		}
		want = []keyvault.Record{want[1], want[3], want[2], want[0]}
		all, err := s.ListProviderKeys(ctx)
		if err != nil {
			t.Fatalf("ListProviderKeys: %v", err)
		}
		var got []keyvault.Record
		for _, r := range all {
			if strings.HasPrefix(r.Provider, "list-") && strings.HasSuffix(r.Provider, tok) {
				got = append(got, r)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListProviderKeys, this subtest's records (-want +got):\n%s", diff)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		ctx := t.Context()
		r := rec("to-delete", []byte("x"), at)
		if err := s.PutProviderKey(ctx, r); err != nil {
			t.Fatalf("PutProviderKey: %v", err)
		}
		if err := s.DeleteProviderKey(ctx, r.Provider); err != nil {
			t.Fatalf("DeleteProviderKey: %v", err)
		}
		if _, err := s.ProviderKey(ctx, r.Provider); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ProviderKey after delete: got error %v, want store.ErrNotFound", err)
		}
		if err := s.DeleteProviderKey(ctx, r.Provider); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second DeleteProviderKey: got error %v, want store.ErrNotFound", err)
		}
	})
}
