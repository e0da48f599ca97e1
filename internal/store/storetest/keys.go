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
	// Stores keep at least microsecond precision and answer in UTC.
	base := time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)
	f := &keyFixture{s: s, tok: randomHex(6), base: base, revokedAt: base.Add(time.Hour)}

	t.Run("NotFound", f.notFound)
	t.Run("CreateRead", f.createRead)
	t.Run("Conflict", f.conflict)
	t.Run("Revoke", f.revoke)
	t.Run("ListNewestFirst", f.listNewestFirst)
	t.Run("Update", f.update)
}

// keyFixture is what ExerciseKeyStore's subtests share: the store, the run's
// random token that every record's ID and hash carry, the creation time of
// most records, and the time the revoked ones carry.
type keyFixture struct {
	s         auth.KeyStore
	tok       string
	base      time.Time
	revokedAt time.Time
}

// namedKey is one case of a table of keys: a subtest name and its key.
type namedKey struct {
	name string
	key  auth.VirtualKey
}

// newKey returns a key named name, created at created, whose ID and hash
// carry the run's token.
func (f *keyFixture) newKey(name string, created time.Time) auth.VirtualKey {
	return auth.VirtualKey{
		ID:        "vk-" + name + "-" + f.tok,
		Hash:      "hash-" + name + "-" + f.tok,
		MaskedKey: "sk-svc-ab…" + name,
		Alias:     name,
		CreatedAt: created,
	}
}

// notFound checks that reading by ID or hash and revoking a key that was
// never created fail with store.ErrNotFound.
func (f *keyFixture) notFound(t *testing.T) {
	ctx := t.Context()
	if _, err := f.s.VirtualKeyByID(ctx, "vk-missing-"+f.tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VirtualKeyByID(missing): got error %v, want store.ErrNotFound", err)
	}
	if _, err := f.s.VirtualKeyByHash(ctx, "hash-missing-"+f.tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VirtualKeyByHash(missing): got error %v, want store.ErrNotFound", err)
	}
	if err := f.s.RevokeVirtualKey(ctx, "vk-missing-"+f.tok, f.base); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeVirtualKey(missing): got error %v, want store.ErrNotFound", err)
	}
}

// createRead checks, for each of createReadCases, that a created key reads
// back unchanged by ID and by hash.
func (f *keyFixture) createRead(t *testing.T) {
	for _, tt := range f.createReadCases() {
		t.Run(tt.name, func(t *testing.T) { f.createThenRead(t, tt.key) })
	}
}

// createReadCases returns the keys createRead round-trips: every field set,
// nil and empty model restrictions, a key created revoked, and a zero
// creation time.
func (f *keyFixture) createReadCases() []namedKey {
	full := f.newKey("full", f.base)
	full.BudgetPeriod = "monthly"
	full.MaxBudgetUSD = 125.5
	full.ModelRestrictions = []string{"gpt-4o", "claude-sonnet-4", "é-model"}
	full.RPMLimit = 600
	full.TPMLimit = 100000
	full.PolicySet = "strict"
	full.TeamID = "team-1"

	empty := f.newKey("empty-models", f.base)
	empty.ModelRestrictions = []string{}

	revoked := f.newKey("revoked", f.base)
	revoked.RevokedAt = &f.revokedAt

	return []namedKey{
		{"all fields", full},
		{"minimal, nil model restrictions", f.newKey("minimal", f.base)},
		{"empty model restrictions", empty},
		{"created revoked", revoked},
		{"zero created time", f.newKey("zero-time", time.Time{})},
	}
}

// createThenRead checks that key, once created, reads back unchanged by ID
// and by hash.
func (f *keyFixture) createThenRead(t *testing.T, key auth.VirtualKey) {
	ctx := t.Context()
	if err := f.s.CreateVirtualKey(ctx, key); err != nil {
		t.Fatalf("CreateVirtualKey: %v", err)
	}
	got, err := f.s.VirtualKeyByID(ctx, key.ID)
	if err != nil {
		t.Fatalf("VirtualKeyByID: %v", err)
	}
	if diff := cmp.Diff(key, got); diff != "" {
		t.Errorf("VirtualKeyByID (-want +got):\n%s", diff)
	}
	got, err = f.s.VirtualKeyByHash(ctx, key.Hash)
	if err != nil {
		t.Fatalf("VirtualKeyByHash: %v", err)
	}
	if diff := cmp.Diff(key, got); diff != "" {
		t.Errorf("VirtualKeyByHash (-want +got):\n%s", diff)
	}
}

// conflict checks that creating a key whose ID or hash is taken, or the
// same key again, fails with store.ErrConflict and leaves the first key
// unchanged.
func (f *keyFixture) conflict(t *testing.T) {
	ctx := t.Context()
	orig := f.newKey("orig", f.base)
	if err := f.s.CreateVirtualKey(ctx, orig); err != nil {
		t.Fatalf("CreateVirtualKey: %v", err)
	}
	sameID := f.newKey("other", f.base)
	sameID.ID = orig.ID
	sameHash := f.newKey("other2", f.base)
	sameHash.Hash = orig.Hash
	tests := []namedKey{
		{"same id", sameID},
		{"same hash", sameHash},
		{"same key again", orig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.s.CreateVirtualKey(t.Context(), tt.key); !errors.Is(err, store.ErrConflict) {
				t.Errorf("CreateVirtualKey: got error %v, want store.ErrConflict", err)
			}
		})
	}
	got, err := f.s.VirtualKeyByID(ctx, orig.ID)
	if err != nil {
		t.Fatalf("VirtualKeyByID: %v", err)
	}
	if diff := cmp.Diff(orig, got); diff != "" {
		t.Errorf("key after conflicting creates (-want +got):\n%s", diff)
	}
}

// revoke checks that revoking a key records the time, that revoking it
// again succeeds and keeps the first time, and that the revoked key is
// still found by hash.
func (f *keyFixture) revoke(t *testing.T) {
	ctx := t.Context()
	k := f.newKey("to-revoke", f.base)
	if err := f.s.CreateVirtualKey(ctx, k); err != nil {
		t.Fatalf("CreateVirtualKey: %v", err)
	}
	if err := f.s.RevokeVirtualKey(ctx, k.ID, f.revokedAt); err != nil {
		t.Fatalf("RevokeVirtualKey: %v", err)
	}
	if err := f.s.RevokeVirtualKey(ctx, k.ID, f.revokedAt.Add(time.Hour)); err != nil {
		t.Fatalf("second RevokeVirtualKey: got error %v, want nil", err)
	}
	want := k
	want.RevokedAt = &f.revokedAt
	// Revoked keys are still found by hash, so auth can tell "revoked"
	// from "unknown".
	got, err := f.s.VirtualKeyByHash(ctx, k.Hash)
	if err != nil {
		t.Fatalf("VirtualKeyByHash: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revoked key (-want +got):\n%s", diff)
	}
	if !got.Revoked() {
		t.Errorf("Revoked(): got false, want true")
	}
}

// listNewestFirst checks that ListVirtualKeys lists keys newest first, and
// (with earlierKeysListed) that it lists the keys earlier subtests created.
func (f *keyFixture) listNewestFirst(t *testing.T) {
	ctx := t.Context()
	ltok := "list-" + f.tok
	var want []auth.VirtualKey
	for _, offset := range []time.Duration{2 * time.Minute, 0, 3 * time.Minute, time.Minute} {
		k := f.newKey(ltok+"-"+offset.String(), f.base.Add(offset))
		if err := f.s.CreateVirtualKey(ctx, k); err != nil {
			t.Fatalf("CreateVirtualKey: %v", err)
		}
		want = append(want, k)
	}
	want = []auth.VirtualKey{want[2], want[0], want[3], want[1]}
	all, err := f.s.ListVirtualKeys(ctx)
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
	f.earlierKeysListed(t, all)
}

// earlierKeysListed checks that all, what ListVirtualKeys returned, holds
// every key created by the subtests before ListNewestFirst.
func (f *keyFixture) earlierKeysListed(t *testing.T, all []auth.VirtualKey) {
	ids := make(map[string]bool, len(all))
	for _, k := range all {
		ids[k.ID] = true
	}
	for _, name := range []string{"full", "minimal", "revoked", "orig", "to-revoke"} {
		if id := "vk-" + name + "-" + f.tok; !ids[id] {
			t.Errorf("ListVirtualKeys: %s missing", id)
		}
	}
}

// update checks that UpdateVirtualKey replaces a key's editable fields and
// fails with store.ErrNotFound for a key that was never created.
func (f *keyFixture) update(t *testing.T) {
	ctx := t.Context()
	k := f.newKey("to-update", f.base)
	if err := f.s.CreateVirtualKey(ctx, k); err != nil {
		t.Fatalf("CreateVirtualKey: %v", err)
	}
	k.Alias, k.BudgetPeriod, k.MaxBudgetUSD = "renamed", "daily", 12.5
	k.ModelRestrictions, k.RPMLimit, k.TPMLimit = []string{"gpt-4o*"}, 7, 700
	k.PolicySet, k.TeamID = "preset-hipaa", "team-2"
	if err := f.s.UpdateVirtualKey(ctx, k); err != nil {
		t.Fatalf("UpdateVirtualKey: %v", err)
	}
	got, err := f.s.VirtualKeyByID(ctx, k.ID)
	if err != nil {
		t.Fatalf("VirtualKeyByID: %v", err)
	}
	if diff := cmp.Diff(k, got); diff != "" {
		t.Errorf("after UpdateVirtualKey (-want +got):\n%s", diff)
	}
	missing := f.newKey("never-created", f.base)
	if err := f.s.UpdateVirtualKey(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateVirtualKey(unknown) = %v, want store.ErrNotFound", err)
	}
}
