// Package teams holds the teams of signed-in users: the limits, the model
// allow-list and the policy set a team's members share (/api/teams). A
// team is named by a team id or a directory group name; a user's team is
// the first of their groups (in the order their identity provider gave
// them) that has a team. The records live in SQL (table teams, migration
// 00016); each process rereads them every second (Directory.Run), so a
// change is in force everywhere within it. It imports identity, store,
// sqlstore, apierr and jsonbody.
package teams

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Team is one team's record.
type Team struct {
	ID             string    `json:"team_id"`
	RPMLimit       int64     `json:"rpm_limit"`
	TPMLimit       int64     `json:"tpm_limit"`
	MaxBudgetUSD   float64   `json:"max_budget_usd"`
	BudgetPeriod   string    `json:"budget_period"`
	ModelAllowlist []string  `json:"model_allowlist"`
	PolicySet      string    `json:"policy_set"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Bounds.
const (
	MaxIDLen    = 256
	MaxModels   = 1000
	MaxRate     = 1 << 40
	MaxBudget   = 1e9
	maxModelLen = 256
)

// FieldError is an invalid field (400 naming it).
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate checks t and fills its defaults (budget_period monthly).
func (t *Team) Validate() error {
	t.ID = strings.TrimSpace(t.ID)
	if t.ID == "" || len(t.ID) > MaxIDLen || !utf8.ValidString(t.ID) || strings.ContainsAny(t.ID, "\x00\r\n,") {
		return &FieldError{"team_id", fmt.Sprintf("a team id or group name of 1–%d bytes, no commas or line breaks", MaxIDLen)}
	}
	if t.RPMLimit < 0 || t.RPMLimit > MaxRate {
		return &FieldError{"rpm_limit", "must be from 0 (none) to 2^40"}
	}
	if t.TPMLimit < 0 || t.TPMLimit > MaxRate {
		return &FieldError{"tpm_limit", "must be from 0 (none) to 2^40"}
	}
	if math.IsNaN(t.MaxBudgetUSD) || t.MaxBudgetUSD < 0 || t.MaxBudgetUSD > MaxBudget {
		return &FieldError{"max_budget_usd", "must be from 0 (none) to 1e9"}
	}
	switch t.BudgetPeriod {
	case "":
		t.BudgetPeriod = "monthly"
	case "daily", "weekly", "monthly":
	default:
		return &FieldError{"budget_period", "must be daily, weekly or monthly"}
	}
	if len(t.ModelAllowlist) > MaxModels {
		return &FieldError{"model_allowlist", fmt.Sprintf("at most %d models", MaxModels)}
	}
	for _, m := range t.ModelAllowlist {
		if m == "" || len(m) > maxModelLen || !utf8.ValidString(m) {
			return &FieldError{"model_allowlist", "each model is non-empty text of at most 256 bytes"}
		}
	}
	if t.ModelAllowlist == nil {
		t.ModelAllowlist = []string{}
	}
	if len(t.PolicySet) > MaxIDLen || !utf8.ValidString(t.PolicySet) {
		return &FieldError{"policy_set", "a preset id or name of at most 256 bytes"}
	}
	return nil
}
