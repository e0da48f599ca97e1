package httpapi

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// policyNames reads the names of a preset answer's policies, in order.
func policyNames(a answer) []string {
	ps, _ := a.body["policies"].([]any)
	out := make([]string, len(ps))
	for i, p := range ps {
		m, _ := p.(map[string]any)
		out[i], _ = m["name"].(string)
		if m["checks"] == nil {
			out[i] += " (no checks)"
		}
	}
	return out
}

func wantNames(names ...string) func(t *testing.T, a answer) {
	return func(t *testing.T, a answer) {
		t.Helper()
		if diff := cmp.Diff(names, policyNames(a)); diff != "" {
			t.Errorf("preset policies (-want +got):\n%s", diff)
		}
	}
}

// TestPresetAndAssignmentRoutes runs on SQLite and (with
// SVC_TEST_DATABASE_URL) PostgreSQL.
func TestPresetAndAssignmentRoutes(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) { testPresetAndAssignmentRoutes(t, newFixtureOn(t, db)) })
}

func testPresetAndAssignmentRoutes(t *testing.T, f *fixture) {
	pol := func(name, prio string) string {
		return `{"name":"` + name + `","policy_type":"security","content":"Flag ` + name + `.","priority":` + prio + `}`
	}
	run(t, f, []step{
		{name: "policy a", method: "POST", path: "/api/policies", body: pol("a", "10"), status: 201, capture: "a"},
		{name: "policy b", method: "POST", path: "/api/policies", body: pol("b", "90"), status: 201, capture: "b"},
		{name: "policy c", method: "POST", path: "/api/policies", body: pol("c", "50"), status: 201, capture: "c"},

		{name: "create preset", method: "POST", path: "/api/presets", status: 201, capture: "hipaa",
			body:  `{"name":"HIPAA","description":"health data","use_case":"clinics","policy_ids":["{a}","{c}","{b}"]}`,
			check: wantNames("a", "c", "b")},
		{name: "unknown policy id", method: "POST", path: "/api/presets", body: `{"name":"X","policy_ids":["{a}","pol_nope"]}`, status: 400, param: "policy_ids[1]",
			check: func(t *testing.T, a answer) {
				if a.str("error", "code") != "unknown_policy_id" {
					t.Errorf("code %q, want unknown_policy_id", a.str("error", "code"))
				}
			}},
		{name: "repeated policy id", method: "POST", path: "/api/presets", body: `{"name":"X","policy_ids":["{a}","{a}"]}`, status: 400, param: "policy_ids[1]"},
		{name: "no name", method: "POST", path: "/api/presets", body: `{"policy_ids":[]}`, status: 400, param: "name"},
		{name: "policy_ids not a list", method: "POST", path: "/api/presets", body: `{"name":"X","policy_ids":"{a}"}`, status: 400, param: "policy_ids"},
		{name: "name taken", method: "POST", path: "/api/presets", body: `{"name":"HIPAA"}`, status: 409},
		{name: "empty preset", method: "POST", path: "/api/presets", body: `{"name":"Empty"}`, status: 201, capture: "empty",
			check: func(t *testing.T, a answer) {
				if ids, _ := a.body["policy_ids"].([]any); ids == nil || len(ids) != 0 {
					t.Errorf("empty preset: got %s, want policy_ids []", a.raw)
				}
			}},
		{name: "get preset", method: "GET", path: "/api/presets/{hipaa}", status: 200, check: wantNames("a", "c", "b")},
		{name: "get unknown preset", method: "GET", path: "/api/presets/pre_nope", status: 404},
		{name: "list presets", method: "GET", path: "/api/presets", status: 200, list: []string{"{empty}", "{hipaa}"}},
		{name: "reorder", method: "PUT", path: "/api/presets/{hipaa}", body: `{"policy_ids":["{b}","{a}"]}`, status: 200,
			check: func(t *testing.T, a answer) {
				wantNames("b", "a")(t, a)
				if a.str("description") != "health data" || a.str("use_case") != "clinics" {
					t.Errorf("reorder changed other fields: %s", a.raw)
				}
			}},
		{name: "put unknown id", method: "PUT", path: "/api/presets/{hipaa}", body: `{"policy_ids":["pol_nope"]}`, status: 400, param: "policy_ids[0]"},
		{name: "put empty name", method: "PUT", path: "/api/presets/{hipaa}", body: `{"name":""}`, status: 400, param: "name"},
		{name: "put unknown preset", method: "PUT", path: "/api/presets/pre_nope", body: `{"name":"Y"}`, status: 404},
		{name: "delete a policy", method: "DELETE", path: "/api/policies/{b}", status: 200},
		{name: "gone from the preset", method: "GET", path: "/api/presets/{hipaa}", status: 200, check: wantNames("a")},

		{name: "assign team", method: "POST", path: "/api/policy/assignments", body: `{"kind":"team","subject":"acme","preset_id":"{hipaa}"}`, status: 201,
			check: func(t *testing.T, a answer) {
				if a.str("kind") != "team" || a.str("subject") != "acme" {
					t.Errorf("assignment: got %s", a.raw)
				}
			}},
		{name: "assign key by shorthand", method: "POST", path: "/api/policy/assignments", body: `{"key_id":"vk_1","preset_id":"{empty}"}`, status: 201},
		{name: "assign role by shorthand", method: "POST", path: "/api/policy/assignments", body: `{"role":"analyst","preset_id":"{hipaa}"}`, status: 201},
		{name: "two subjects", method: "POST", path: "/api/policy/assignments", body: `{"team_id":"t","role":"r","preset_id":"{hipaa}"}`, status: 400, param: "role"},
		{name: "kind and shorthand", method: "POST", path: "/api/policy/assignments", body: `{"kind":"team","subject":"t","team_id":"t","preset_id":"{hipaa}"}`, status: 400, param: "team_id"},
		{name: "no kind", method: "POST", path: "/api/policy/assignments", body: `{"subject":"t","preset_id":"{hipaa}"}`, status: 400, param: "kind"},
		{name: "bad kind", method: "POST", path: "/api/policy/assignments", body: `{"kind":"user","subject":"t","preset_id":"{hipaa}"}`, status: 400, param: "kind"},
		{name: "no subject", method: "POST", path: "/api/policy/assignments", body: `{"kind":"team","preset_id":"{hipaa}"}`, status: 400, param: "subject"},
		{name: "no preset", method: "POST", path: "/api/policy/assignments", body: `{"kind":"team","subject":"t"}`, status: 400, param: "preset_id"},
		{name: "unknown preset", method: "POST", path: "/api/policy/assignments", body: `{"kind":"team","subject":"t","preset_id":"pre_nope"}`, status: 400, param: "preset_id"},
		{name: "list assignments", method: "GET", path: "/api/policy/assignments", status: 200,
			check: func(t *testing.T, a answer) {
				if a.body["total"] != 3.0 {
					t.Errorf("assignments: got %s, want 3", a.raw)
				}
			}},
		{name: "list by kind", method: "GET", path: "/api/policy/assignments?kind=team", status: 200,
			check: func(t *testing.T, a answer) {
				if a.body["total"] != 1.0 {
					t.Errorf("team assignments: got %s, want 1", a.raw)
				}
			}},
		{name: "list bad kind", method: "GET", path: "/api/policy/assignments?kind=group", status: 400, param: "kind"},
		{name: "assigned preset kept", method: "DELETE", path: "/api/presets/{empty}", status: 409},
		{name: "unassign needs kind", method: "DELETE", path: "/api/policy/assignments?subject=vk_1", status: 400, param: "kind"},
		{name: "unassign needs subject", method: "DELETE", path: "/api/policy/assignments?kind=key", status: 400, param: "subject"},
		{name: "unassign", method: "DELETE", path: "/api/policy/assignments?kind=key&subject=vk_1", status: 200},
		{name: "unassign again", method: "DELETE", path: "/api/policy/assignments?kind=key&subject=vk_1", status: 404},
		{name: "delete preset", method: "DELETE", path: "/api/presets/{empty}", status: 200},
		{name: "delete preset again", method: "DELETE", path: "/api/presets/{empty}", status: 404},
	})
	// The proxy adds the counters.
	if err := f.store.AddStats(t.Context(), 7, 2); err != nil {
		t.Fatalf("AddStats: %v", err)
	}
	run(t, f, []step{
		{name: "stats", method: "GET", path: "/api/policy/stats", status: 200,
			check: func(t *testing.T, a answer) {
				want := map[string]any{"total_policies": 2.0, "active_policies": 2.0, "total_presets": 1.0,
					"total_assignments": 2.0, "total_applications": 7.0, "compliance_violations": 2.0}
				if diff := cmp.Diff(want, a.body); diff != "" {
					t.Errorf("stats (-want +got):\n%s", diff)
				}
			}},
	})
}

func TestMount(t *testing.T) {
	f := newFixture(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	if err := f.api.Mount("POST /api/policies/generate-from-document", h); err != nil {
		t.Fatalf("Mount: %v", err)
	}
	if err := f.api.Mount("GET /api/policies/{id}", h); err == nil {
		t.Error("Mount(a pattern already registered): got nil error, want one")
	}
	if a := f.do(t, adminKey, "POST", "/api/policies/generate-from-document", ""); a.status != http.StatusAccepted {
		t.Errorf("mounted route as admin: got %d, want 202", a.status)
	}
	if a := f.do(t, userKey, "POST", "/api/policies/generate-from-document", ""); a.status != http.StatusUnauthorized {
		t.Errorf("mounted route as a virtual key: got %d, want 401", a.status)
	}
}
