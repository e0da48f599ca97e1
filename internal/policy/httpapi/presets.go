package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/policy"
)

// presetBody is a preset as POST and PUT read it (PUT changes only the
// supplied fields; policy_ids replaces the whole ordered list). The
// read-only fields of an answer are accepted and ignored.
type presetBody struct {
	Name        *string   `json:"name"`
	Description *string   `json:"description"`
	UseCase     *string   `json:"use_case"`
	PolicyIDs   *[]string `json:"policy_ids"`

	ID        any `json:"id"`
	CreatedAt any `json:"created_at"`
	UpdatedAt any `json:"updated_at"`
	Policies  any `json:"policies"`
}

func (b *presetBody) patch() policy.PresetPatch {
	return policy.PresetPatch{Name: b.Name, Description: b.Description, UseCase: b.UseCase, PolicyIDs: b.PolicyIDs}
}

// presetView is a preset with its policies in the preset's order.
type presetView struct {
	policy.Preset
	Policies []policyView `json:"policies"`
}

func (a *API) presetView(pr policy.Preset, pols []policy.Policy) presetView {
	if pr.PolicyIDs == nil {
		pr.PolicyIDs = []string{}
	}
	return presetView{Preset: pr, Policies: a.views(pols)}
}

// listPresets: GET /api/presets, each with its policies in order.
func (a *API) listPresets(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	prs, err := a.d.Store.ListPresets(ctx)
	if err != nil {
		return err
	}
	ps, err := a.d.Store.ListPolicies(ctx, true)
	if err != nil {
		return err
	}
	byID := make(map[string]policy.Policy, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	out := make([]presetView, len(prs))
	for i, pr := range prs {
		pols := make([]policy.Policy, 0, len(pr.PolicyIDs))
		for _, id := range pr.PolicyIDs {
			if p, ok := byID[id]; ok { // one deleted between the two reads is left out
				pols = append(pols, p)
			}
		}
		out[i] = a.presetView(pr, pols)
	}
	return list(w, out)
}

// createPreset: POST /api/presets; name required, policy_ids must exist.
func (a *API) createPreset(w http.ResponseWriter, r *http.Request) error {
	var b presetBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	if b.Name == nil {
		return apierr.BadParam("name", "name is required")
	}
	var pr policy.Preset
	patch := b.patch()
	patch.Apply(&pr)
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	created, pols, err := a.d.Store.CreatePreset(ctx, pr)
	if err != nil {
		return storeErr(err, "preset", "")
	}
	return writeJSON(w, http.StatusCreated, a.presetView(created, pols))
}

func (a *API) getPreset(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	pr, pols, err := a.d.Store.GetPreset(ctx, id)
	if err != nil {
		return storeErr(err, "preset", id)
	}
	return writeJSON(w, http.StatusOK, a.presetView(pr, pols))
}

func (a *API) updatePreset(w http.ResponseWriter, r *http.Request) error {
	var b presetBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	pr, pols, err := a.d.Store.UpdatePreset(ctx, id, b.patch())
	if err != nil {
		return storeErr(err, "preset", id)
	}
	return writeJSON(w, http.StatusOK, a.presetView(pr, pols))
}

// deletePreset: DELETE /api/presets/{id}; 409 while it is assigned.
func (a *API) deletePreset(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	if err := a.d.Store.DeletePreset(ctx, id); err != nil {
		return storeErr(err, "preset", id)
	}
	return deleted(w, "preset", id)
}

// assignmentBody names the subject as kind and subject, or by one of the
// shorthands key_id, team_id, role.
type assignmentBody struct {
	Kind     *string `json:"kind"`
	Subject  *string `json:"subject"`
	KeyID    *string `json:"key_id"`
	TeamID   *string `json:"team_id"`
	Role     *string `json:"role"`
	PresetID *string `json:"preset_id"`

	CreatedAt any `json:"created_at"`
}

func (b *assignmentBody) assignment() (policy.Assignment, error) {
	var a policy.Assignment
	short := []struct {
		field, kind string
		v           *string
	}{{"key_id", policy.AssignKey, b.KeyID}, {"team_id", policy.AssignTeam, b.TeamID}, {"role", policy.AssignRole, b.Role}}
	for _, s := range short {
		if s.v == nil {
			continue
		}
		if a.Kind != "" || b.Kind != nil || b.Subject != nil {
			return a, apierr.BadParam(s.field, "name the subject once: kind and subject, or one of key_id, team_id, role")
		}
		a.Kind, a.Subject = s.kind, *s.v
		if a.Subject == "" {
			return a, apierr.BadParam(s.field, "%s may not be empty", s.field)
		}
	}
	if a.Kind == "" {
		if b.Kind == nil {
			return a, apierr.BadParam("kind", "kind is required (%s), with subject; or send one of key_id, team_id, role",
				strings.Join(policy.Kinds, ", "))
		}
		if b.Subject == nil {
			return a, apierr.BadParam("subject", "subject is required: the key id, team id or role name")
		}
		a.Kind, a.Subject = *b.Kind, *b.Subject
	}
	if b.PresetID == nil {
		return a, apierr.BadParam("preset_id", "preset_id is required")
	}
	a.PresetID = *b.PresetID
	return a, nil
}

// createAssignment: POST /api/policy/assignments gives a preset to a key,
// a team or a role, replacing the one it had (201 either way).
func (a *API) createAssignment(w http.ResponseWriter, r *http.Request) error {
	var b assignmentBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	as, err := b.assignment()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	got, err := a.d.Store.SetAssignment(ctx, as)
	if err != nil {
		return storeErr(err, "assignment", "")
	}
	return writeJSON(w, http.StatusCreated, got)
}

// kindParam reads the kind query parameter (empty: any).
func kindParam(r *http.Request) (string, error) {
	k := r.URL.Query().Get("kind")
	if k != "" && !slices.Contains(policy.Kinds, k) {
		return "", apierr.BadParam("kind", "kind must be one of %s, got %q", strings.Join(policy.Kinds, ", "), clip(k))
	}
	return k, nil
}

// listAssignments: GET /api/policy/assignments[?kind=&subject=&preset_id=].
func (a *API) listAssignments(w http.ResponseWriter, r *http.Request) error {
	kind, err := kindParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	as, err := a.d.Store.ListAssignments(ctx, policy.AssignmentFilter{Kind: kind, Subject: q.Get("subject"), PresetID: q.Get("preset_id")})
	if err != nil {
		return err
	}
	return list(w, as)
}

// deleteAssignment: DELETE /api/policy/assignments?kind=…&subject=….
func (a *API) deleteAssignment(w http.ResponseWriter, r *http.Request) error {
	kind, err := kindParam(r)
	if err != nil {
		return err
	}
	if kind == "" {
		return apierr.BadParam("kind", "kind is required in the query (%s)", strings.Join(policy.Kinds, ", "))
	}
	subject := r.URL.Query().Get("subject")
	if subject == "" {
		return apierr.BadParam("subject", "subject is required in the query")
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	if err := a.d.Store.DeleteAssignment(ctx, kind, subject); err != nil {
		return storeErr(err, "assignment", kind+":"+subject)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"object": "policy.assignment", "kind": kind, "subject": subject, "deleted": true})
}

// stats: GET /api/stats.
func (a *API) stats(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	st, err := a.d.Store.Stats(ctx)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}
