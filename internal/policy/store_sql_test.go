package policy_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newStore(t *testing.T, db *sqlstore.DB) (*policy.SQLStore, *clock) {
	c := &clock{t: t0}
	return policy.NewSQLStore(db, c.now), c
}

func pol(name string, prio int, active bool) policy.Policy {
	return policy.Policy{Name: name, Type: "security", Content: "Block secrets in " + name + ".",
		Priority: prio, Severity: "high", IsActive: active}
}

func mustCreate(t *testing.T, s *policy.SQLStore, p policy.Policy) policy.Policy {
	t.Helper()
	got, err := s.CreatePolicy(t.Context(), p)
	if err != nil {
		t.Fatalf("CreatePolicy(%q): %v", p.Name, err)
	}
	return got
}

func ids(ps []policy.Policy) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func fieldOf(err error) string {
	var fe *policy.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestSQLStorePolicies(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, clk := newStore(t, db)
		ctx := t.Context()

		in := pol("Card numbers", 80, true)
		in.Description = "PCI — no PANs, «never»"
		in.RegulatoryFramework = "PCI DSS"
		in.ApplicableModels = []string{"gpt-4o", "claude-*"}
		in.Metadata = policy.Metadata{SourceIPs: []string{"10.0.0.0/8"}, Applications: []string{"crm"},
			Extra: map[string]any{"owner": "ciso", "nested": map[string]any{"k": []any{"v", 1.5}}}}
		created := mustCreate(t, s, in)
		if !strings.HasPrefix(created.ID, policy.PolicyIDPrefix) || len(created.ID) != len(policy.PolicyIDPrefix)+24 {
			t.Errorf("id %q, want pol_ and 24 hex digits", created.ID)
		}
		want := in
		want.ID, want.CreatedAt, want.UpdatedAt = created.ID, t0, t0
		want.ApplicableProviders = []string{policy.All}
		if diff := cmp.Diff(want, created); diff != "" {
			t.Errorf("created (-want +got):\n%s", diff)
		}
		got, err := s.GetPolicy(ctx, created.ID)
		if err != nil {
			t.Fatalf("GetPolicy: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
		if _, err := s.GetPolicy(ctx, "pol_missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetPolicy(missing) = %v, want store.ErrNotFound", err)
		}
		if _, err := s.CreatePolicy(ctx, policy.Policy{Name: "x", Type: "nope", Content: "c", Severity: "low"}); fieldOf(err) != "policy_type" {
			t.Errorf("CreatePolicy(bad type) = %v, want a FieldError on policy_type", err)
		}

		// Listing: active only by default, priority desc then name.
		b := mustCreate(t, s, pol("b", 50, true))
		a := mustCreate(t, s, pol("a", 50, true))
		off := mustCreate(t, s, pol("off", 99, false))
		list, err := s.ListPolicies(ctx, false)
		if err != nil {
			t.Fatalf("ListPolicies: %v", err)
		}
		if diff := cmp.Diff([]string{created.ID, a.ID, b.ID}, ids(list)); diff != "" {
			t.Errorf("active list (-want +got):\n%s", diff)
		}
		all, err := s.ListPolicies(ctx, true)
		if err != nil {
			t.Fatalf("ListPolicies(all): %v", err)
		}
		if diff := cmp.Diff([]string{off.ID, created.ID, a.ID, b.ID}, ids(all)); diff != "" {
			t.Errorf("full list (-want +got):\n%s", diff)
		}

		// Update: only the supplied fields change.
		clk.add(time.Minute)
		inactive, prio := false, 10
		upd, err := s.UpdatePolicy(ctx, created.ID, policy.PolicyPatch{IsActive: &inactive, Priority: &prio})
		if err != nil {
			t.Fatalf("UpdatePolicy: %v", err)
		}
		want.IsActive, want.Priority, want.UpdatedAt = false, 10, t0.Add(time.Minute)
		if diff := cmp.Diff(want, upd); diff != "" {
			t.Errorf("updated (-want +got):\n%s", diff)
		}
		if got, _ := s.GetPolicy(ctx, created.ID); !cmp.Equal(want, got) {
			t.Errorf("updated, read back: %s", cmp.Diff(want, got))
		}
		bad := 101
		if _, err := s.UpdatePolicy(ctx, created.ID, policy.PolicyPatch{Priority: &bad, IsActive: &inactive}); fieldOf(err) != "priority" {
			t.Errorf("UpdatePolicy(priority 101) = %v, want a FieldError on priority", err)
		}
		if got, _ := s.GetPolicy(ctx, created.ID); got.Priority != 10 {
			t.Errorf("after a refused update priority = %d, want 10 (unchanged)", got.Priority)
		}
		if _, err := s.UpdatePolicy(ctx, "pol_missing", policy.PolicyPatch{Priority: &prio}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdatePolicy(missing) = %v, want store.ErrNotFound", err)
		}
		empty := []string{}
		upd, err = s.UpdatePolicy(ctx, created.ID, policy.PolicyPatch{ApplicableModels: &empty})
		if err != nil || !cmp.Equal(upd.ApplicableModels, []string{policy.All}) {
			t.Errorf("UpdatePolicy(applicable_models []) = %v, %v, want [all]", upd.ApplicableModels, err)
		}

		// Delete.
		if err := s.DeletePolicy(ctx, b.ID); err != nil {
			t.Fatalf("DeletePolicy: %v", err)
		}
		if err := s.DeletePolicy(ctx, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeletePolicy twice = %v, want store.ErrNotFound", err)
		}
		if _, err := s.GetPolicy(ctx, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetPolicy(deleted) = %v, want store.ErrNotFound", err)
		}
	})
}

func TestSQLStorePresets(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, clk := newStore(t, db)
		ctx := t.Context()
		p1, p2, p3 := mustCreate(t, s, pol("p1", 10, true)), mustCreate(t, s, pol("p2", 90, true)), mustCreate(t, s, pol("p3", 50, false))

		_, _, err := s.CreatePreset(ctx, policy.Preset{Name: "bad", PolicyIDs: []string{p1.ID, "pol_nope"}})
		if fieldOf(err) != "policy_ids[1]" || !errors.Is(err, policy.ErrUnknownPolicy) {
			t.Errorf("CreatePreset(unknown id) = %v, want a FieldError on policy_ids[1] wrapping ErrUnknownPolicy", err)
		}
		if list, _ := s.ListPresets(ctx); len(list) != 0 {
			t.Errorf("after a refused create, %d presets, want 0", len(list))
		}

		// Order is the preset's, not the priorities'; inactive ones are shown.
		pr, pols, err := s.CreatePreset(ctx, policy.Preset{Name: "HIPAA", UseCase: "health", PolicyIDs: []string{p1.ID, p3.ID, p2.ID}})
		if err != nil {
			t.Fatalf("CreatePreset: %v", err)
		}
		if !strings.HasPrefix(pr.ID, policy.PresetIDPrefix) {
			t.Errorf("preset id %q, want prefix %s", pr.ID, policy.PresetIDPrefix)
		}
		order := []string{p1.ID, p3.ID, p2.ID}
		if diff := cmp.Diff(order, ids(pols)); diff != "" {
			t.Errorf("preset policies (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(order, pr.PolicyIDs); diff != "" {
			t.Errorf("preset policy_ids (-want +got):\n%s", diff)
		}
		got, gotPols, err := s.GetPreset(ctx, pr.ID)
		if err != nil {
			t.Fatalf("GetPreset: %v", err)
		}
		if diff := cmp.Diff(pr, got); diff != "" {
			t.Errorf("GetPreset (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(pols, gotPols); diff != "" {
			t.Errorf("GetPreset policies (-want +got):\n%s", diff)
		}
		if _, _, err := s.GetPreset(ctx, "pre_missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetPreset(missing) = %v, want store.ErrNotFound", err)
		}
		if _, _, err := s.CreatePreset(ctx, policy.Preset{Name: "HIPAA"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreatePreset(same name) = %v, want store.ErrConflict", err)
		}

		// Update: reorder, the rest unchanged; an unknown id changes nothing.
		clk.add(time.Minute)
		reorder := []string{p2.ID, p1.ID}
		upd, _, err := s.UpdatePreset(ctx, pr.ID, policy.PresetPatch{PolicyIDs: &reorder})
		if err != nil {
			t.Fatalf("UpdatePreset: %v", err)
		}
		want := pr
		want.PolicyIDs, want.UpdatedAt = reorder, t0.Add(time.Minute)
		if diff := cmp.Diff(want, upd); diff != "" {
			t.Errorf("updated preset (-want +got):\n%s", diff)
		}
		unknown := []string{"pol_x"}
		if _, _, err := s.UpdatePreset(ctx, pr.ID, policy.PresetPatch{PolicyIDs: &unknown}); !errors.Is(err, policy.ErrUnknownPolicy) {
			t.Errorf("UpdatePreset(unknown id) = %v, want ErrUnknownPolicy", err)
		}
		if got, _, _ := s.GetPreset(ctx, pr.ID); !cmp.Equal(reorder, got.PolicyIDs) {
			t.Errorf("after a refused update policy_ids = %v, want %v", got.PolicyIDs, reorder)
		}
		other, _, err := s.CreatePreset(ctx, policy.Preset{Name: "Other", PolicyIDs: []string{p2.ID}})
		if err != nil {
			t.Fatalf("CreatePreset(Other): %v", err)
		}
		taken := "HIPAA"
		if _, _, err := s.UpdatePreset(ctx, other.ID, policy.PresetPatch{Name: &taken}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdatePreset(name taken) = %v, want store.ErrConflict", err)
		}

		// Deleting a policy takes it out of every preset, and they move.
		clk.add(time.Minute)
		if err := s.DeletePolicy(ctx, p2.ID); err != nil {
			t.Fatalf("DeletePolicy: %v", err)
		}
		list, err := s.ListPresets(ctx)
		if err != nil {
			t.Fatalf("ListPresets: %v", err)
		}
		wantList := []policy.Preset{want, other}
		wantList[0].PolicyIDs, wantList[0].UpdatedAt = []string{p1.ID}, t0.Add(2*time.Minute)
		wantList[1].PolicyIDs, wantList[1].UpdatedAt = []string{}, t0.Add(2*time.Minute)
		if diff := cmp.Diff(wantList, list); diff != "" {
			t.Errorf("presets after deleting a policy (-want +got):\n%s", diff)
		}

		// An assigned preset is kept.
		if _, err := s.SetAssignment(ctx, policy.Assignment{Kind: "team", Subject: "t1", PresetID: pr.ID}); err != nil {
			t.Fatalf("SetAssignment: %v", err)
		}
		if err := s.DeletePreset(ctx, pr.ID); !errors.Is(err, policy.ErrPresetAssigned) || !errors.Is(err, store.ErrConflict) {
			t.Errorf("DeletePreset(assigned) = %v, want ErrPresetAssigned and store.ErrConflict", err)
		}
		if err := s.DeleteAssignment(ctx, "team", "t1"); err != nil {
			t.Fatalf("DeleteAssignment: %v", err)
		}
		if err := s.DeletePreset(ctx, pr.ID); err != nil {
			t.Errorf("DeletePreset: %v", err)
		}
		if err := s.DeletePreset(ctx, pr.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeletePreset twice = %v, want store.ErrNotFound", err)
		}
		if _, err := s.GetPolicy(ctx, p1.ID); err != nil {
			t.Errorf("a deleted preset's policy: %v, want it kept", err)
		}
	})
}
