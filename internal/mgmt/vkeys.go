package mgmt

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/limit"
)

func decodeBody(b []byte, v any) error { return jsonbody.Decode(b, v, true) }

// createKeyBody accepts the spec's field names and the dashboard's aliases
// (name, model_allowlist, monthly_spend_cap).
type createKeyBody struct {
	Alias             *string  `json:"alias"`
	Name              *string  `json:"name"`
	BudgetPeriod      string   `json:"budget_period"`
	MaxBudgetUSD      *float64 `json:"max_budget_usd"`
	MonthlySpendCap   *float64 `json:"monthly_spend_cap"`
	ModelRestrictions []string `json:"model_restrictions"`
	ModelAllowlist    []string `json:"model_allowlist"`
	RPMLimit          int      `json:"rpm_limit"`
	TPMLimit          int      `json:"tpm_limit"`
	PolicySet         string   `json:"policy_set"`
	TeamID            string   `json:"team_id"`
}

func (b *createKeyBody) params() (auth.CreateParams, error) {
	p := auth.CreateParams{BudgetPeriod: b.BudgetPeriod, RPMLimit: b.RPMLimit, TPMLimit: b.TPMLimit, PolicySet: b.PolicySet, TeamID: b.TeamID}
	switch {
	case b.Alias != nil:
		p.Alias = *b.Alias
	case b.Name != nil:
		p.Alias = *b.Name
	}
	for _, c := range []struct {
		name string
		v    *float64
	}{{"max_budget_usd", b.MaxBudgetUSD}, {"monthly_spend_cap", b.MonthlySpendCap}} {
		if c.v != nil && *c.v == 0 {
			// A cap of 0 used to mean "no cap"; a cap never means that.
			return p, apierr.BadParam(c.name, "%s must be positive: omit it for no spend cap (to stop a key spending, revoke it)", c.name)
		}
	}
	switch {
	case b.MaxBudgetUSD != nil && b.MonthlySpendCap != nil:
		return p, apierr.BadParam("monthly_spend_cap", "send max_budget_usd or monthly_spend_cap, not both")
	case b.MaxBudgetUSD != nil:
		p.MaxBudgetUSD = *b.MaxBudgetUSD
	case b.MonthlySpendCap != nil:
		p.MaxBudgetUSD = *b.MonthlySpendCap
		if p.BudgetPeriod == "" {
			p.BudgetPeriod = "monthly"
		} else if p.BudgetPeriod != "monthly" {
			return p, apierr.BadParam("budget_period", "monthly_spend_cap implies budget_period monthly")
		}
	}
	switch {
	case b.ModelRestrictions != nil && b.ModelAllowlist != nil:
		return p, apierr.BadParam("model_allowlist", "send model_restrictions or model_allowlist, not both")
	case b.ModelRestrictions != nil:
		p.ModelRestrictions = b.ModelRestrictions
	default:
		p.ModelRestrictions = b.ModelAllowlist
	}
	return p, nil
}

// keyView is a key as the API shows it (never the secret or its hash).
type keyView struct {
	auth.VirtualKey
	Status string `json:"status"`
}

func view(k auth.VirtualKey) keyView {
	s := "active"
	if k.Revoked() {
		s = "revoked"
	}
	return keyView{VirtualKey: k, Status: s}
}

func (a *API) createKey(w http.ResponseWriter, r *http.Request) error {
	var body createKeyBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	p, err := body.params()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	k, secret, err := a.d.Keys.Create(ctx, p)
	if err != nil {
		return err
	}
	// The key's settings, never its secret or masked prefix.
	a.Record(r, evVKeyCreate, k.ID, map[string]any{"alias": k.Alias, "budget_period": k.BudgetPeriod,
		"max_budget_usd": k.MaxBudgetUSD, "model_restrictions": k.ModelRestrictions, "rpm_limit": k.RPMLimit,
		"tpm_limit": k.TPMLimit, "policy_set": k.PolicySet, "team_id": k.TeamID})
	return writeJSON(w, http.StatusCreated, struct {
		keyView
		Key string `json:"key"`
	}{view(k), secret})
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	keys, err := a.d.Keys.List(ctx)
	if err != nil {
		return err
	}
	out := make([]keyView, len(keys))
	for i, k := range keys {
		out[i] = view(k)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out, "total": len(out)})
}

func (a *API) getKey(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	k, err := a.d.Keys.Get(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, view(k))
}

func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	k, err := a.d.Keys.Revoke(ctx, r.PathValue("key"))
	if err != nil {
		return err
	}
	// Subject is the key's id: the path may hold the secret itself.
	a.Record(r, evVKeyRevoke, k.ID, map[string]any{"alias": k.Alias})
	return writeJSON(w, http.StatusOK, view(k))
}

// updateKeyBody is PUT /api/enterprise/vkeys/{id}: only the fields sent
// change.
type updateKeyBody struct {
	Alias             *string   `json:"alias"`
	BudgetPeriod      *string   `json:"budget_period"`
	MaxBudgetUSD      *float64  `json:"max_budget_usd"`
	ModelRestrictions *[]string `json:"model_restrictions"`
	RPMLimit          *int      `json:"rpm_limit"`
	TPMLimit          *int      `json:"tpm_limit"`
	PolicySet         *string   `json:"policy_set"`
	TeamID            *string   `json:"team_id"`
}

func (a *API) updateKey(w http.ResponseWriter, r *http.Request) error {
	var b updateKeyBody
	if err := readJSON(r, &b); err != nil {
		return err
	}
	if b.MaxBudgetUSD != nil && *b.MaxBudgetUSD == 0 {
		return apierr.BadParam("max_budget_usd", "max_budget_usd must be positive: a cap cannot be removed to 0 (to stop a key spending, revoke it)")
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	k, err := a.d.Keys.Update(ctx, r.PathValue("id"), auth.Patch{Alias: b.Alias, BudgetPeriod: b.BudgetPeriod,
		MaxBudgetUSD: b.MaxBudgetUSD, ModelRestrictions: b.ModelRestrictions, RPMLimit: b.RPMLimit, TPMLimit: b.TPMLimit,
		PolicySet: b.PolicySet, TeamID: b.TeamID})
	if err != nil {
		return err
	}
	a.Record(r, evVKeyUpdate, k.ID, map[string]any{"alias": k.Alias, "policy_set": k.PolicySet, "team_id": k.TeamID,
		"budget_period": k.BudgetPeriod, "max_budget_usd": k.MaxBudgetUSD, "rpm_limit": k.RPMLimit, "tpm_limit": k.TPMLimit})
	return writeJSON(w, http.StatusOK, view(k))
}

// budgetView is GET /api/enterprise/vkeys/{id}/budget.
type budgetView struct {
	ID           string    `json:"id"`
	BudgetPeriod string    `json:"budget_period"`
	PeriodStart  time.Time `json:"period_start"`
	PeriodEnd    time.Time `json:"period_end"`
	SpendUSD     float64   `json:"spend_usd"`
	MaxBudgetUSD float64   `json:"max_budget_usd"`
	// RemainingUSD is nil when the key has no cap.
	RemainingUSD *float64 `json:"remaining_usd"`
}

func (a *API) keyBudget(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	k, err := a.d.Keys.Get(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	now := a.d.Now()
	start := limit.PeriodStart(k.BudgetPeriod, now)
	spend, err := a.spend(ctx, k, start)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "store_error", "could not read the key's spend", err)
	}
	v := budgetView{ID: k.ID, BudgetPeriod: k.BudgetPeriod, PeriodStart: start, PeriodEnd: limit.PeriodEnd(k.BudgetPeriod, now),
		SpendUSD: spend, MaxBudgetUSD: k.MaxBudgetUSD}
	if k.MaxBudgetUSD > 0 {
		rem := max(k.MaxBudgetUSD-spend, 0)
		v.RemainingUSD = &rem
	}
	return writeJSON(w, http.StatusOK, v)
}

// spend is the key's spend in the current period: for a capped key the
// limits counter (exact, reservations of requests in flight included), else
// the audit records.
func (a *API) spend(ctx context.Context, k auth.VirtualKey, start time.Time) (float64, error) {
	if a.d.Limits != nil && k.MaxBudgetUSD > 0 {
		s, err := a.d.Limits.Spend(ctx, k.ID, k.BudgetPeriod, k.MaxBudgetUSD)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, limit.ErrNotMetered) {
			return 0, err
		}
	}
	return a.d.Logs.SpendSince(ctx, k.ID, start)
}
