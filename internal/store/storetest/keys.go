package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store"
)

// ExerciseKeyStore checks that s behaves as auth.KeyStore documents. Every
// record it writes carries a random token, so s may hold other keys and the
// suite may run again on the same store; it leaves its records behind.
// Subtests run in order and share s.
func ExerciseKeyStore(t *testing.T, s auth.KeyStore) {
	t.Helper()
	tok := randomHex(6)
	// Stores keep at least microsecond precision and answer in UTC.
	base := time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)
	revokedAt := base.Add(time.Hour)
	newKey := func(name string, created time.Time) auth.VirtualKey {
		return auth.VirtualKey{
			ID:        "vk-" + name + "-" + tok,
			Hash:      "hash-" + name + "-" + tok,
			MaskedKey: "sk-svc-ab…" + name,
			Alias:     name,
			CreatedAt: created,
		}
	}

	t.Run("NotFound", func(t *testing.T) {
		ctx := t.Context()
		if _, err := s.VirtualKeyByID(ctx, "vk-missing-"+tok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VirtualKeyByID(missing): got error %v, want store.ErrNotFound", err)
		}
		if _, err := s.VirtualKeyByHash(ctx, "hash-missing-"+tok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VirtualKeyByHash(missing): got error %v, want store.ErrNotFound", err)
		}
		if err := s.RevokeVirtualKey(ctx, "vk-missing-"+tok, base); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RevokeVirtualKey(missing): got error %v, want store.ErrNotFound", err)
		}
	})

	t.Run("CreateRead", func(t *testing.T) {
		full := newKey("full", base)
		full.BudgetPeriod = "monthly"
		full.MaxBudgetUSD = 125.5
		full.ModelRestrictions = []string{"gpt-4o", "claude-sonnet-4", "é-model"}
		full.RPMLimit = 600
		full.TPMLimit = 100000
		full.PolicySet = "strict"
		full.TeamID = "team-1"

		empty := newKey("empty-models", base)
		empty.ModelRestrictions = []string{}

		revoked := newKey("revoked", base)
		revoked.RevokedAt = &revokedAt

		tests := []struct {
			name string
			key  auth.VirtualKey
		}{
			{"all fields", full},
			{"minimal, nil model restrictions", newKey("minimal", base)},
			{"empty model restrictions", empty},
			{"created revoked", revoked},
			{"zero created time", newKey("zero-time", time.Time{})},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				if err := s.CreateVirtualKey(ctx, tt.key); err != nil {
					t.Fatalf("CreateVirtualKey: %v", err)
				}
				got, err := s.VirtualKeyByID(ctx, tt.key.ID)
				if err != nil {
					t.Fatalf("VirtualKeyByID: %v", err)
				}
				if diff := cmp.Diff(tt.key, got); diff != "" {
					t.Errorf("VirtualKeyByID (-want +got):\n%s", diff)
				}
				got, err = s.VirtualKeyByHash(ctx, tt.key.Hash)
				if err != nil {
					t.Fatalf("VirtualKeyByHash: %v", err)
				}
				if diff := cmp.Diff(tt.key, got); diff != "" {
					t.Errorf("VirtualKeyByHash (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("Conflict", func(t *testing.T) {
		ctx := t.Context()
		orig := newKey("orig", base)
		if err := s.CreateVirtualKey(ctx, orig); err != nil {
			t.Fatalf("CreateVirtualKey: %v", err)
		}
		sameID := newKey("other", base)
		sameID.ID = orig.ID
		sameHash := newKey("other2", base)
		sameHash.Hash = orig.Hash
		tests := []struct {
			name string
			key  auth.VirtualKey
		}{
			{"same id", sameID},
			{"same hash", sameHash},
			{"same key again", orig},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := s.CreateVirtualKey(t.Context(), tt.key); !errors.Is(err, store.ErrConflict) {
					t.Errorf("CreateVirtualKey: got error %v, want store.ErrConflict", err)
				}
			})
		}
		got, err := s.VirtualKeyByID(ctx, orig.ID)
		if err != nil {
			t.Fatalf("VirtualKeyByID: %v", err)
		}
		if diff := cmp.Diff(orig, got); diff != "" {
			t.Errorf("key after conflicting creates (-want +got):\n%s", diff)
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		ctx := t.Context()
		k := newKey("to-revoke", base)
		if err := s.CreateVirtualKey(ctx, k); err != nil {
			t.Fatalf("CreateVirtualKey: %v", err)
		}
		if err := s.RevokeVirtualKey(ctx, k.ID, revokedAt); err != nil {
			t.Fatalf("RevokeVirtualKey: %v", err)
		}
		if err := s.RevokeVirtualKey(ctx, k.ID, revokedAt.Add(time.Hour)); err != nil {
			t.Fatalf("second RevokeVirtualKey: got error %v, want nil", err)
		}
		want := k
		want.RevokedAt = &revokedAt
		// Revoked keys are still found by hash, so auth can tell "revoked"
		// from "unknown".
		got, err := s.VirtualKeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatalf("VirtualKeyByHash: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("revoked key (-want +got):\n%s", diff)
		}
		if !got.Revoked() {
			t.Errorf("Revoked(): got false, want true")
		}
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		ctx := t.Context()
		ltok := "list-" + tok
		var want []auth.VirtualKey
		for _, offset := range []time.Duration{2 * time.Minute, 0, 3 * time.Minute, time.Minute} {
			k := newKey(ltok+"-"+offset.String(), base.Add(offset))
			if err := s.CreateVirtualKey(ctx, k); err != nil {
				t.Fatalf("CreateVirtualKey: %v", err)
			}
			want = append(want, k)
		}
		want = []auth.VirtualKey{want[2], want[0], want[3], want[1]}
		all, err := s.ListVirtualKeys(ctx)
		if err != nil {
			t.Fatalf("ListVirtualKeys: %v", err)
		}
		var got []auth.VirtualKey
		for _, k := range all {
			if strings.Contains(k.ID, ltok) {
				got = append(got, k)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListVirtualKeys, this subtest's keys (-want +got):\n%s", diff)
		}
		// Every key created by the earlier subtests is listed too.
		ids := make(map[string]bool, len(all))
		for _, k := range all {
			ids[k.ID] = true
		}
		for _, name := range []string{"full", "minimal", "revoked", "orig", "to-revoke"} {
			if id := "vk-" + name + "-" + tok; !ids[id] {
				t.Errorf("ListVirtualKeys: %s missing", id)
			}
		}
	})

	t.Run("Update", func(t *testing.T) {
		ctx := t.Context()
		k := newKey("to-update", base)
		if err := s.CreateVirtualKey(ctx, k); err != nil {
			t.Fatalf("CreateVirtualKey: %v", err)
		}
		k.Alias, k.BudgetPeriod, k.MaxBudgetUSD = "renamed", "daily", 12.5
		k.ModelRestrictions, k.RPMLimit, k.TPMLimit = []string{"gpt-4o*"}, 7, 700
		k.PolicySet, k.TeamID = "preset-hipaa", "team-2"
		if err := s.UpdateVirtualKey(ctx, k); err != nil {
			t.Fatalf("UpdateVirtualKey: %v", err)
		}
		got, err := s.VirtualKeyByID(ctx, k.ID)
		if err != nil {
			t.Fatalf("VirtualKeyByID: %v", err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Errorf("after UpdateVirtualKey (-want +got):\n%s", diff)
		}
		missing := newKey("never-created", base)
		if err := s.UpdateVirtualKey(ctx, missing); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateVirtualKey(unknown) = %v, want store.ErrNotFound", err)
		}
	})
}
