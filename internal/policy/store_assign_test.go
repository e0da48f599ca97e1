package policy_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestSQLStoreAssignments(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, _ := newStore(t, db)
		ctx := t.Context()
		a, _, err := s.CreatePreset(ctx, policy.Preset{Name: "A"})
		if err != nil {
			t.Fatalf("CreatePreset: %v", err)
		}
		b, _, err := s.CreatePreset(ctx, policy.Preset{Name: "B"})
		if err != nil {
			t.Fatalf("CreatePreset: %v", err)
		}

		_, err = s.SetAssignment(ctx, policy.Assignment{Kind: "team", Subject: "t1", PresetID: "pre_nope"})
		if fieldOf(err) != "preset_id" || !errors.Is(err, policy.ErrUnknownPreset) {
			t.Errorf("SetAssignment(unknown preset) = %v, want a FieldError on preset_id wrapping ErrUnknownPreset", err)
		}
		if _, err := s.SetAssignment(ctx, policy.Assignment{Kind: "group", Subject: "g", PresetID: a.ID}); fieldOf(err) != "kind" {
			t.Errorf("SetAssignment(kind group) = %v, want a FieldError on kind", err)
		}
		for _, x := range []policy.Assignment{
			{Kind: "role", Subject: "analyst", PresetID: a.ID},
			{Kind: "team", Subject: "t1", PresetID: a.ID},
			{Kind: "key", Subject: "vk_1", PresetID: a.ID},
			{Kind: "team", Subject: "t1", PresetID: b.ID}, // replaces A
		} {
			got, err := s.SetAssignment(ctx, x)
			if err != nil {
				t.Fatalf("SetAssignment(%+v): %v", x, err)
			}
			if got.Kind != x.Kind || got.Subject != x.Subject || got.PresetID != x.PresetID || !got.CreatedAt.Equal(t0) {
				t.Errorf("SetAssignment(%+v) = %+v", x, got)
			}
		}
		want := []policy.Assignment{
			{Kind: "key", Subject: "vk_1", PresetID: a.ID, CreatedAt: t0},
			{Kind: "team", Subject: "t1", PresetID: b.ID, CreatedAt: t0},
			{Kind: "role", Subject: "analyst", PresetID: a.ID, CreatedAt: t0},
		}
		filters := []struct {
			name string
			f    policy.AssignmentFilter
			want []policy.Assignment
		}{
			{"all", policy.AssignmentFilter{}, want},
			{"kind", policy.AssignmentFilter{Kind: "team"}, want[1:2]},
			{"preset", policy.AssignmentFilter{PresetID: a.ID}, []policy.Assignment{want[0], want[2]}},
			{"subject", policy.AssignmentFilter{Kind: "key", Subject: "vk_1"}, want[:1]},
			{"none", policy.AssignmentFilter{Kind: "key", Subject: "vk_2"}, []policy.Assignment{}},
		}
		for _, f := range filters {
			got, err := s.ListAssignments(ctx, f.f)
			if err != nil {
				t.Fatalf("ListAssignments(%s): %v", f.name, err)
			}
			if diff := cmp.Diff(f.want, got); diff != "" {
				t.Errorf("ListAssignments(%s) (-want +got):\n%s", f.name, diff)
			}
		}
		if err := s.DeleteAssignment(ctx, "key", "vk_1"); err != nil {
			t.Fatalf("DeleteAssignment: %v", err)
		}
		if err := s.DeleteAssignment(ctx, "key", "vk_1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteAssignment twice = %v, want store.ErrNotFound", err)
		}
	})
}

func TestSQLStoreResolve(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, _ := newStore(t, db)
		ctx := t.Context()
		on1, off, on2 := mustCreate(t, s, pol("on1", 10, true)), mustCreate(t, s, pol("off", 90, false)), mustCreate(t, s, pol("on2", 90, true))
		preset := func(name string, ids ...string) string {
			pr, _, err := s.CreatePreset(ctx, policy.Preset{Name: name, PolicyIDs: ids})
			if err != nil {
				t.Fatalf("CreatePreset(%s): %v", name, err)
			}
			return pr.ID
		}
		keyP, teamP, roleA, roleB, def := preset("key", on1.ID, off.ID, on2.ID), preset("team", on2.ID), preset("roleA"), preset("roleB"), preset("default", on1.ID)
		for _, x := range []policy.Assignment{
			{Kind: "key", Subject: "vk_1", PresetID: keyP},
			{Kind: "team", Subject: "t1", PresetID: teamP},
			{Kind: "role", Subject: "a", PresetID: roleA},
			{Kind: "role", Subject: "b", PresetID: roleB},
			{Kind: "team", Subject: "vk_1", PresetID: roleB}, // a team named like the key: kinds do not mix
		} {
			if _, err := s.SetAssignment(ctx, x); err != nil {
				t.Fatalf("SetAssignment(%+v): %v", x, err)
			}
		}
		cases := []struct {
			name         string
			key, team    string
			roles        []string
			def          string
			want         string // preset id, "" for none
			wantPolicies []string
		}{
			{"key wins", "vk_1", "t1", []string{"a"}, def, keyP, []string{on1.ID, on2.ID}},
			{"team next", "vk_2", "t1", []string{"a"}, def, teamP, []string{on2.ID}},
			{"role next", "vk_2", "t2", []string{"a"}, def, roleA, []string{}},
			{"first role given", "", "", []string{"x", "b", "a"}, "", roleB, []string{}},
			{"default by id", "vk_2", "t2", []string{"x"}, def, def, []string{on1.ID}},
			{"default by name", "vk_2", "", nil, "default", def, []string{on1.ID}},
			{"nothing", "vk_2", "t2", nil, "", "", nil},
			{"no caller", "", "", nil, "", "", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				pr, pols, err := s.Resolve(ctx, c.key, c.team, c.roles, c.def)
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				got := ""
				if pr != nil {
					got = pr.ID
					if diff := cmp.Diff(c.wantPolicies, ids(pols)); diff != "" {
						t.Errorf("policies (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(c.wantPolicies, pr.PolicyIDs); diff != "" {
						t.Errorf("preset policy_ids (-want +got):\n%s", diff)
					}
				}
				if got != c.want {
					t.Errorf("preset %q, want %q", got, c.want)
				}
			})
		}
		if _, _, err := s.Resolve(ctx, "vk_2", "", nil, "no-such-preset"); !errors.Is(err, policy.ErrUnknownPreset) {
			t.Errorf("Resolve(unknown default) = %v, want ErrUnknownPreset", err)
		}
	})
}

func TestSQLStoreStats(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, _ := newStore(t, db)
		ctx := t.Context()
		p := mustCreate(t, s, pol("p", 10, true))
		mustCreate(t, s, pol("q", 10, false))
		pr, _, err := s.CreatePreset(ctx, policy.Preset{Name: "P", PolicyIDs: []string{p.ID}})
		if err != nil {
			t.Fatalf("CreatePreset: %v", err)
		}
		if _, err := s.SetAssignment(ctx, policy.Assignment{Kind: "role", Subject: "r", PresetID: pr.ID}); err != nil {
			t.Fatalf("SetAssignment: %v", err)
		}
		const workers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for i := range each {
					if err := s.AddStats(ctx, 2, int64(i%2)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("AddStats: %v", err)
		}
		if err := s.AddStats(ctx, -1, 0); err == nil {
			t.Error("AddStats(-1): got nil error, want one")
		}
		got, err := s.Stats(ctx)
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		want := policy.Stats{TotalPolicies: 2, ActivePolicies: 1, TotalPresets: 1, TotalAssignments: 1,
			TotalApplications: workers * each * 2, ComplianceViolations: workers * 12}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Stats (-want +got):\n%s", diff)
		}
	})
}

// TestSQLStoreOddIDs looks up ids PostgreSQL cannot hold as text: they
// find nothing rather than fail.
func TestSQLStoreOddIDs(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s, _ := newStore(t, db)
		ctx := t.Context()
		for _, id := range []string{"pol_\x00", "pol_\xff", strings.Repeat("x", 10000)} {
			if _, err := s.GetPolicy(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetPolicy(%q) = %v, want store.ErrNotFound", id, err)
			}
			if err := s.DeletePolicy(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("DeletePolicy(%q) = %v, want store.ErrNotFound", id, err)
			}
			if _, _, err := s.GetPreset(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetPreset(%q) = %v, want store.ErrNotFound", id, err)
			}
			if err := s.DeleteAssignment(ctx, "key", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("DeleteAssignment(%q) = %v, want store.ErrNotFound", id, err)
			}
			if got, err := s.ListAssignments(ctx, policy.AssignmentFilter{Subject: id}); err != nil || len(got) != 0 {
				t.Errorf("ListAssignments(%q) = %v, %v, want none", id, got, err)
			}
			if pr, _, err := s.Resolve(ctx, id, id, []string{id}, ""); err != nil || pr != nil {
				t.Errorf("Resolve(%q) = %v, %v, want nothing", id, pr, err)
			}
			if _, err := s.SetAssignment(ctx, policy.Assignment{Kind: "key", Subject: id, PresetID: "pre_x"}); fieldOf(err) != "subject" {
				t.Errorf("SetAssignment(subject %q) = %v, want a FieldError on subject", id, err)
			}
		}
	})
}
