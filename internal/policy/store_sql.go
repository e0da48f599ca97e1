package policy

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore keeps the library in SQL (SQLite or PostgreSQL): the tables of
// sqlstore's migration 00010_policies. Methods validate what they write
// (a *FieldError), answer store.ErrNotFound for unknown ids and
// store.ErrConflict for a preset name already taken.
type SQLStore struct {
	db  *sqlstore.DB
	now func() time.Time
}

// NewSQLStore returns the store over db; now stamps created_at and
// updated_at (nil: time.Now).
func NewSQLStore(db *sqlstore.DB, now func() time.Time) *SQLStore {
	if now == nil {
		now = time.Now
	}
	return &SQLStore{db: db, now: now}
}

// Prefixes of generated ids.
const (
	PolicyIDPrefix = "pol_"
	PresetIDPrefix = "pre_"
)

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b[:])
}

// storable reports whether s can be a key the store looks up: valid
// UTF-8 without NUL (PostgreSQL refuses the others outright) and at most
// MaxSubject bytes. Lookups by any other string find nothing.
func storable(s string) bool {
	return len(s) <= MaxSubject && text("", s, MaxSubject) == nil
}

// querier is a DB or a Tx.
type querier interface {
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs f in a transaction, committed when f returns nil.
func (s *SQLStore) inTx(ctx context.Context, f func(tx *sqlstore.Tx) error) error {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// forUpdate locks a row read before it is rewritten: PostgreSQL's row
// lock (SQLite's write transactions hold the database lock from BEGIN).
func (s *SQLStore) forUpdate() string {
	if s.db.Dialect() == sqlstore.DialectPostgres {
		return " FOR UPDATE"
	}
	return ""
}

const policyColumns = `id, name, description, policy_type, content, priority, applicable_providers,
	applicable_models, regulatory_framework, severity, metadata, is_active, created_at, updated_at`

// policyColumnsP is policyColumns qualified by the alias p.
const policyColumnsP = `p.id, p.name, p.description, p.policy_type, p.content, p.priority, p.applicable_providers,
	p.applicable_models, p.regulatory_framework, p.severity, p.metadata, p.is_active, p.created_at, p.updated_at`

// policyOrder is the order of lists: priority, highest first, then name.
const policyOrder = ` ORDER BY priority DESC, name, id`

func scanPolicy(row interface{ Scan(dest ...any) error }) (Policy, error) {
	var (
		p                 Policy
		provs, models, md string
		created, updated  int64
	)
	err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Type, &p.Content, &p.Priority, &provs,
		&models, &p.RegulatoryFramework, &p.Severity, &md, &p.IsActive, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Policy{}, store.ErrNotFound
	}
	if err != nil {
		return Policy{}, err
	}
	if err := json.Unmarshal([]byte(provs), &p.ApplicableProviders); err != nil {
		return Policy{}, fmt.Errorf("policy %q: applicable_providers: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(models), &p.ApplicableModels); err != nil {
		return Policy{}, fmt.Errorf("policy %q: applicable_models: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(md), &p.Metadata); err != nil {
		return Policy{}, fmt.Errorf("policy %q: metadata: %w", p.ID, err)
	}
	p.CreatedAt, p.UpdatedAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated)
	return p, nil
}

// policyArgs are p's values for the columns after id, in policyColumns order.
func policyArgs(p *Policy) ([]any, error) {
	provs, err := json.Marshal(p.ApplicableProviders)
	if err != nil {
		return nil, err
	}
	models, err := json.Marshal(p.ApplicableModels)
	if err != nil {
		return nil, err
	}
	md, err := json.Marshal(p.Metadata)
	if err != nil {
		return nil, err
	}
	return []any{p.Name, p.Description, p.Type, p.Content, p.Priority, string(provs), string(models),
		p.RegulatoryFramework, p.Severity, string(md), p.IsActive}, nil
}

func queryPolicies(ctx context.Context, q querier, query string, args ...any) ([]Policy, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Policy{}
	for rows.Next() {
		p, err := scanPolicy(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CreatePolicy validates p, gives it a new id (pol_…) and its timestamps,
// and stores it. The ID, CreatedAt and UpdatedAt given are ignored.
func (s *SQLStore) CreatePolicy(ctx context.Context, p Policy) (Policy, error) {
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	p.ID = newID(PolicyIDPrefix)
	now := sqlstore.FromMicros(sqlstore.Micros(s.now()))
	p.CreatedAt, p.UpdatedAt = now, now
	args, err := policyArgs(&p)
	if err != nil {
		return Policy{}, fmt.Errorf("policy: create: %w", err)
	}
	args = append(append([]any{p.ID}, args...), sqlstore.Micros(now), sqlstore.Micros(now))
	if _, err := s.db.Exec(ctx, `INSERT INTO policies (`+policyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...); err != nil {
		return Policy{}, fmt.Errorf("policy: create: %w", err)
	}
	return p, nil
}

// GetPolicy returns the policy with id, active or not, or store.ErrNotFound.
func (s *SQLStore) GetPolicy(ctx context.Context, id string) (Policy, error) {
	if !storable(id) {
		return Policy{}, fmt.Errorf("policy: get %q: %w", clip(id), store.ErrNotFound)
	}
	p, err := scanPolicy(s.db.QueryRow(ctx, `SELECT `+policyColumns+` FROM policies WHERE id = ?`, id))
	if err != nil {
		return Policy{}, fmt.Errorf("policy %q: %w", clip(id), err)
	}
	return p, nil
}

// ListPolicies returns the active policies (every policy with
// includeInactive), by priority, highest first, then by name.
func (s *SQLStore) ListPolicies(ctx context.Context, includeInactive bool) ([]Policy, error) {
	q := `SELECT ` + policyColumns + ` FROM policies`
	var args []any
	if !includeInactive {
		q += ` WHERE is_active = ?`
		args = append(args, true)
	}
	out, err := queryPolicies(ctx, s.db, q+policyOrder, args...)
	if err != nil {
		return nil, fmt.Errorf("policy: list: %w", err)
	}
	return out, nil
}

// UpdatePolicy changes the fields patch sets on the policy with id and
// returns it (store.ErrNotFound if there is none; a *FieldError if the
// result is not valid, nothing changed).
func (s *SQLStore) UpdatePolicy(ctx context.Context, id string, patch PolicyPatch) (Policy, error) {
	if !storable(id) {
		return Policy{}, fmt.Errorf("policy: update %q: %w", clip(id), store.ErrNotFound)
	}
	var p Policy
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		var err error
		p, err = scanPolicy(tx.QueryRow(ctx, `SELECT `+policyColumns+` FROM policies WHERE id = ?`+s.forUpdate(), id))
		if err != nil {
			return err
		}
		patch.Apply(&p)
		if err := p.Validate(); err != nil {
			return err
		}
		p.UpdatedAt = sqlstore.FromMicros(sqlstore.Micros(s.now()))
		args, err := policyArgs(&p)
		if err != nil {
			return err
		}
		args = append(args, sqlstore.Micros(p.UpdatedAt), p.ID)
		_, err = tx.Exec(ctx, `UPDATE policies SET name = ?, description = ?, policy_type = ?, content = ?,
			priority = ?, applicable_providers = ?, applicable_models = ?, regulatory_framework = ?,
			severity = ?, metadata = ?, is_active = ?, updated_at = ? WHERE id = ?`, args...)
		return err
	})
	if err != nil {
		return Policy{}, wrap("update policy", id, err)
	}
	return p, nil
}

// DeletePolicy removes the policy with id and, in the same transaction,
// takes it out of every preset (whose updated_at moves);
// store.ErrNotFound if there is none.
func (s *SQLStore) DeletePolicy(ctx context.Context, id string) error {
	if !storable(id) {
		return fmt.Errorf("policy: delete %q: %w", clip(id), store.ErrNotFound)
	}
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		now := sqlstore.Micros(s.now())
		if _, err := tx.Exec(ctx, `UPDATE policy_presets SET updated_at = ? WHERE id IN
			(SELECT preset_id FROM policy_preset_policies WHERE policy_id = ?)`, now, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM policy_preset_policies WHERE policy_id = ?`, id); err != nil {
			return err
		}
		return mustAffect(tx.Exec(ctx, `DELETE FROM policies WHERE id = ?`, id))
	})
	return wrap("delete policy", id, err)
}

// mustAffect turns an Exec that changed no row into store.ErrNotFound.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// wrap prefixes err (nil stays nil) but leaves a *FieldError as it is,
// so its field and reason reach the caller unchanged.
func wrap(op, id string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("policy: %s %q: %w", op, clip(id), err)
}

const presetColumns = `id, name, description, use_case, created_at, updated_at`

func scanPreset(row interface{ Scan(dest ...any) error }) (Preset, error) {
	var (
		pr               Preset
		created, updated int64
	)
	err := row.Scan(&pr.ID, &pr.Name, &pr.Description, &pr.UseCase, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Preset{}, store.ErrNotFound
	}
	if err != nil {
		return Preset{}, err
	}
	pr.CreatedAt, pr.UpdatedAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated)
	return pr, nil
}

// presetPolicies reads the policies of the preset with id, in order
// (active ones only with activeOnly).
func presetPolicies(ctx context.Context, q querier, id string, activeOnly bool) ([]Policy, error) {
	query := `SELECT ` + policyColumnsP + ` FROM policy_preset_policies pp
		JOIN policies p ON p.id = pp.policy_id WHERE pp.preset_id = ?`
	args := []any{id}
	if activeOnly {
		query += ` AND p.is_active = ?`
		args = append(args, true)
	}
	return queryPolicies(ctx, q, query+` ORDER BY pp.position`, args...)
}

// getPreset reads the preset with id and all its policies, in order.
func getPreset(ctx context.Context, q querier, id, lock string) (Preset, []Policy, error) {
	pr, err := scanPreset(q.QueryRow(ctx, `SELECT `+presetColumns+` FROM policy_presets WHERE id = ?`+lock, id))
	if err != nil {
		return Preset{}, nil, err
	}
	pols, err := presetPolicies(ctx, q, id, false)
	if err != nil {
		return Preset{}, nil, err
	}
	pr.PolicyIDs = make([]string, len(pols))
	for i, p := range pols {
		pr.PolicyIDs[i] = p.ID
	}
	return pr, pols, nil
}

// setPresetPolicies replaces the ordered policies of preset id, after
// checking that every one exists (a *FieldError wrapping
// ErrUnknownPolicy naming the first that does not).
func setPresetPolicies(ctx context.Context, tx *sqlstore.Tx, id string, ids []string) error {
	if len(ids) > 0 {
		known := make(map[string]bool, len(ids))
		args := make([]any, len(ids))
		for i, pid := range ids {
			args[i] = pid
		}
		rows, err := tx.Query(ctx, `SELECT id FROM policies WHERE id IN (`+sqlstore.Placeholders(len(ids), "?")+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var pid string
			if err := rows.Scan(&pid); err != nil {
				rows.Close()
				return err
			}
			known[pid] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, pid := range ids {
			if !known[pid] {
				return &FieldError{Field: fmt.Sprintf("policy_ids[%d]", i),
					Reason: fmt.Sprintf("no policy has id %q", clip(pid)), Err: ErrUnknownPolicy}
			}
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM policy_preset_policies WHERE preset_id = ?`, id); err != nil {
		return err
	}
	for i, pid := range ids {
		if _, err := tx.Exec(ctx, `INSERT INTO policy_preset_policies (preset_id, position, policy_id) VALUES (?, ?, ?)`,
			id, i, pid); err != nil {
			return err
		}
	}
	return nil
}

// conflictName turns a unique violation (the preset name) into
// store.ErrConflict.
func conflictName(err error) error {
	if sqlstore.IsUniqueViolation(err) {
		return fmt.Errorf("a preset with this name exists: %w: %w", store.ErrConflict, err)
	}
	return err
}

// CreatePreset validates pr, checks its policy ids exist, gives it a new
// id (pre_…) and stores it; it returns the preset and its policies in
// order. store.ErrConflict if the name is taken.
func (s *SQLStore) CreatePreset(ctx context.Context, pr Preset) (Preset, []Policy, error) {
	if err := pr.Validate(); err != nil {
		return Preset{}, nil, err
	}
	pr.ID = newID(PresetIDPrefix)
	now := sqlstore.Micros(s.now())
	var pols []Policy
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO policy_presets (`+presetColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			pr.ID, pr.Name, pr.Description, pr.UseCase, now, now); err != nil {
			return conflictName(err)
		}
		if err := setPresetPolicies(ctx, tx, pr.ID, pr.PolicyIDs); err != nil {
			return err
		}
		var err error
		pr, pols, err = getPreset(ctx, tx, pr.ID, "")
		return err
	})
	if err != nil {
		return Preset{}, nil, wrap("create preset", pr.Name, err)
	}
	return pr, pols, nil
}

// GetPreset returns the preset with id and its policies (active or not)
// in the preset's order, or store.ErrNotFound.
func (s *SQLStore) GetPreset(ctx context.Context, id string) (Preset, []Policy, error) {
	if !storable(id) {
		return Preset{}, nil, fmt.Errorf("policy: get preset %q: %w", clip(id), store.ErrNotFound)
	}
	pr, pols, err := getPreset(ctx, s.db, id, "")
	if err != nil {
		return Preset{}, nil, wrap("get preset", id, err)
	}
	return pr, pols, nil
}

// ListPresets returns every preset, by name, with its ordered policy ids.
func (s *SQLStore) ListPresets(ctx context.Context) ([]Preset, error) {
	out := []Preset{}
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+presetColumns+` FROM policy_presets ORDER BY name, id`)
		if err != nil {
			return err
		}
		at := map[string]int{}
		for rows.Next() {
			pr, err := scanPreset(rows)
			if err != nil {
				rows.Close()
				return err
			}
			pr.PolicyIDs = []string{}
			at[pr.ID] = len(out)
			out = append(out, pr)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT preset_id, policy_id FROM policy_preset_policies ORDER BY preset_id, position`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var pre, pol string
			if err := rows.Scan(&pre, &pol); err != nil {
				return err
			}
			if i, ok := at[pre]; ok {
				out[i].PolicyIDs = append(out[i].PolicyIDs, pol)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("policy: list presets: %w", err)
	}
	return out, nil
}

// UpdatePreset changes the fields patch sets on the preset with id (the
// policy list replaced whole when set) and returns it with its policies
// in order. store.ErrNotFound, store.ErrConflict (name taken) or a
// *FieldError (nothing changed).
func (s *SQLStore) UpdatePreset(ctx context.Context, id string, patch PresetPatch) (Preset, []Policy, error) {
	if !storable(id) {
		return Preset{}, nil, fmt.Errorf("policy: update preset %q: %w", clip(id), store.ErrNotFound)
	}
	var (
		pr   Preset
		pols []Policy
	)
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		var err error
		if pr, _, err = getPreset(ctx, tx, id, s.forUpdate()); err != nil {
			return err
		}
		patch.Apply(&pr)
		if err := pr.Validate(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE policy_presets SET name = ?, description = ?, use_case = ?, updated_at = ? WHERE id = ?`,
			pr.Name, pr.Description, pr.UseCase, sqlstore.Micros(s.now()), id); err != nil {
			return conflictName(err)
		}
		if patch.PolicyIDs != nil {
			if err := setPresetPolicies(ctx, tx, id, pr.PolicyIDs); err != nil {
				return err
			}
		}
		pr, pols, err = getPreset(ctx, tx, id, "")
		return err
	})
	if err != nil {
		return Preset{}, nil, wrap("update preset", id, err)
	}
	return pr, pols, nil
}

// DeletePreset removes the preset with id (store.ErrNotFound if none).
// A preset still assigned is kept: an error wrapping ErrPresetAssigned
// and store.ErrConflict, so that no key, team or role silently loses its
// scanning; remove its assignments first.
func (s *SQLStore) DeletePreset(ctx context.Context, id string) error {
	if !storable(id) {
		return fmt.Errorf("policy: delete preset %q: %w", clip(id), store.ErrNotFound)
	}
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		if _, _, err := getPreset(ctx, tx, id, s.forUpdate()); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM policy_assignments WHERE preset_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w to %d subject(s): %w", ErrPresetAssigned, n, store.ErrConflict)
		}
		return mustAffect(tx.Exec(ctx, `DELETE FROM policy_presets WHERE id = ?`, id))
	})
	return wrap("delete preset", id, err)
}
