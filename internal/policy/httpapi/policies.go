package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/policy"
)

// metadataBody reads metadata: the targeting lists typed (a wrong type is
// a 400 naming metadata.source_ips[0]), every other member kept.
type metadataBody struct {
	SourceIPs    []string       `json:"source_ips"`
	ADGroups     []string       `json:"ad_groups"`
	Departments  []string       `json:"departments"`
	Applications []string       `json:"applications"`
	Extra        map[string]any `json:",embed"`
}

func (m *metadataBody) metadata() policy.Metadata {
	out := policy.Metadata{SourceIPs: m.SourceIPs, ADGroups: m.ADGroups, Departments: m.Departments, Applications: m.Applications}
	if len(m.Extra) > 0 {
		out.Extra = m.Extra
	}
	return out
}

// policyBody is a policy as POST and PUT read it: every field optional so
// that PUT changes only those supplied. type is a suggestion's name for
// policy_type, so a suggested policy can be posted as it came; the
// read-only fields of answers and suggestions are accepted and ignored.
type policyBody struct {
	Name                *string       `json:"name"`
	Description         *string       `json:"description"`
	PolicyType          *string       `json:"policy_type"`
	Type                *string       `json:"type"`
	Content             *string       `json:"content"`
	Priority            *int          `json:"priority"`
	ApplicableProviders *[]string     `json:"applicable_providers"`
	ApplicableModels    *[]string     `json:"applicable_models"`
	RegulatoryFramework *string       `json:"regulatory_framework"`
	Severity            *string       `json:"severity"`
	Metadata            *metadataBody `json:"metadata"`
	IsActive            *bool         `json:"is_active"`

	ID         any `json:"id"`
	CreatedAt  any `json:"created_at"`
	UpdatedAt  any `json:"updated_at"`
	Checks     any `json:"checks"`
	Confidence any `json:"confidence"`
	Section    any `json:"section"`
	Source     any `json:"source"`
}

// patch is the body as a PolicyPatch.
func (b *policyBody) patch() (policy.PolicyPatch, error) {
	p := policy.PolicyPatch{
		Name: b.Name, Description: b.Description, Type: b.PolicyType, Content: b.Content, Priority: b.Priority,
		ApplicableProviders: b.ApplicableProviders, ApplicableModels: b.ApplicableModels,
		RegulatoryFramework: b.RegulatoryFramework, Severity: b.Severity, IsActive: b.IsActive,
	}
	if b.Type != nil {
		if b.PolicyType != nil && *b.PolicyType != *b.Type {
			return p, apierr.BadParam("type", "type is another name for policy_type: send one, or the same value in both")
		}
		p.Type = b.Type
	}
	if b.Metadata != nil {
		m := b.Metadata.metadata()
		p.Metadata = &m
	}
	return p, nil
}

// policyView is a policy as the API answers it: with the checks its
// content compiles to, when a compiler is configured.
type policyView struct {
	policy.Policy
	Checks *policy.Checks `json:"checks,omitempty"`
}

func (a *API) view(p policy.Policy) policyView {
	v := policyView{Policy: p}
	if a.d.Compile != nil {
		c := a.d.Compile(p.Content)
		v.Checks = &c
	}
	return v
}

func (a *API) views(ps []policy.Policy) []policyView {
	out := make([]policyView, len(ps))
	for i, p := range ps {
		out[i] = a.view(p)
	}
	return out
}

// listPolicies: GET /api/policies, the active ones by priority (every one
// with ?include_inactive=true).
func (a *API) listPolicies(w http.ResponseWriter, r *http.Request) error {
	all := false
	if v := r.URL.Query().Get("include_inactive"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return apierr.BadParam("include_inactive", "include_inactive must be true or false, got %q", clip(v))
		}
		all = b
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	ps, err := a.d.Store.ListPolicies(ctx, all)
	if err != nil {
		return err
	}
	return list(w, a.views(ps))
}

// createPolicy: POST /api/policies. name, policy_type and content are
// required; priority defaults to policy.DefaultPriority, severity to
// policy.DefaultSeverity, is_active to true, applicable_* to ["all"].
func (a *API) createPolicy(w http.ResponseWriter, r *http.Request) error {
	var b policyBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	patch, err := b.patch()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", patch.Name}, {"policy_type", patch.Type}, {"content", patch.Content}} {
		if f.v == nil {
			return apierr.BadParam(f.name, "%s is required", f.name)
		}
	}
	if patch.Type != nil && *patch.Type == "" {
		return apierr.BadParam("policy_type", "policy_type is required: one of %s", strings.Join(policy.Types, ", "))
	}
	p := policy.Policy{Priority: policy.DefaultPriority, Severity: policy.DefaultSeverity, IsActive: true}
	patch.Apply(&p)
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	created, err := a.d.Store.CreatePolicy(ctx, p)
	if err != nil {
		return storeErr(err, "policy", "")
	}
	return writeJSON(w, http.StatusCreated, a.view(created))
}

func (a *API) getPolicy(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	p, err := a.d.Store.GetPolicy(ctx, id)
	if err != nil {
		return storeErr(err, "policy", id)
	}
	return writeJSON(w, http.StatusOK, a.view(p))
}

// updatePolicy: PUT /api/policies/{id}, only the supplied fields change
// (is_active false keeps the policy but stops applying it).
func (a *API) updatePolicy(w http.ResponseWriter, r *http.Request) error {
	var b policyBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	patch, err := b.patch()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	p, err := a.d.Store.UpdatePolicy(ctx, id, patch)
	if err != nil {
		return storeErr(err, "policy", id)
	}
	return writeJSON(w, http.StatusOK, a.view(p))
}

// deletePolicy: DELETE /api/policies/{id}, also out of every preset.
func (a *API) deletePolicy(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	id := r.PathValue("id")
	if err := a.d.Store.DeletePolicy(ctx, id); err != nil {
		return storeErr(err, "policy", id)
	}
	return deleted(w, "policy", id)
}
