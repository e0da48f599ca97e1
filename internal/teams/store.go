package teams

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore keeps the teams in SQL.
type SQLStore struct{ db *sqlstore.DB }

// NewSQLStore returns the store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

const columns = `id, rpm_limit, tpm_limit, max_budget_usd, budget_period, model_allowlist, policy_set, created_at, updated_at`

// All reads every team.
func (s *SQLStore) All(ctx context.Context) ([]Team, error) {
	rows, err := s.db.Query(ctx, `SELECT `+columns+` FROM teams ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("teams: read: %w", err)
	}
	defer rows.Close()
	var out []Team
	for rows.Next() {
		var t Team
		var models string
		var created, updated int64
		if err := rows.Scan(&t.ID, &t.RPMLimit, &t.TPMLimit, &t.MaxBudgetUSD, &t.BudgetPeriod, &models, &t.PolicySet, &created, &updated); err != nil {
			return nil, fmt.Errorf("teams: read: %w", err)
		}
		if err := json.Unmarshal([]byte(models), &t.ModelAllowlist); err != nil {
			return nil, fmt.Errorf("teams: decode %q: %w", t.ID, err)
		}
		t.CreatedAt, t.UpdatedAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated)
		out = append(out, t)
	}
	return out, rows.Err()
}

// Put creates or replaces t (its created_at kept on a replace).
func (s *SQLStore) Put(ctx context.Context, t Team) error {
	models, err := json.Marshal(t.ModelAllowlist)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `INSERT INTO teams (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET rpm_limit = excluded.rpm_limit, tpm_limit = excluded.tpm_limit,
		max_budget_usd = excluded.max_budget_usd, budget_period = excluded.budget_period,
		model_allowlist = excluded.model_allowlist, policy_set = excluded.policy_set, updated_at = excluded.updated_at`,
		t.ID, t.RPMLimit, t.TPMLimit, t.MaxBudgetUSD, t.BudgetPeriod, string(models), sqlstore.EscapeText(t.PolicySet),
		sqlstore.Micros(t.CreatedAt), sqlstore.Micros(t.UpdatedAt))
	if err != nil {
		return fmt.Errorf("teams: store %q: %w", t.ID, err)
	}
	return nil
}

// Delete removes a team (store.ErrNotFound when there is none).
func (s *SQLStore) Delete(ctx context.Context, id string) error {
	res, err := s.db.Exec(ctx, `DELETE FROM teams WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("teams: delete %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return store.ErrNotFound
	}
	return nil
}
