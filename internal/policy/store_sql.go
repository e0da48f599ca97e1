package policy

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// SetAssignment gives a.PresetID to (a.Kind, a.Subject), replacing the
// preset it had (one preset per subject), and returns the assignment as
// stored. A *FieldError when a is not valid or the preset does not exist
// (wrapping ErrUnknownPreset).
func (s *SQLStore) SetAssignment(ctx context.Context, a Assignment) (Assignment, error) {
	if err := a.Validate(); err != nil {
		return Assignment{}, err
	}
	a.CreatedAt = sqlstore.FromMicros(sqlstore.Micros(s.now()))
	err := s.inTx(ctx, func(tx *sqlstore.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `SELECT id FROM policy_presets WHERE id = ?`+s.forUpdate(), a.PresetID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return &FieldError{Field: "preset_id", Reason: fmt.Sprintf("no preset has id %q", clip(a.PresetID)), Err: ErrUnknownPreset}
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO policy_assignments (kind, subject, preset_id, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (kind, subject) DO UPDATE SET preset_id = excluded.preset_id, created_at = excluded.created_at`,
			a.Kind, a.Subject, a.PresetID, sqlstore.Micros(a.CreatedAt))
		return err
	})
	if err != nil {
		return Assignment{}, wrap("assign", a.Kind+":"+a.Subject, err)
	}
	return a, nil
}

// ListAssignments returns the assignments f selects, by kind in
// precedence order (key, team, role), then subject.
func (s *SQLStore) ListAssignments(ctx context.Context, f AssignmentFilter) ([]Assignment, error) {
	q := `SELECT kind, subject, preset_id, created_at FROM policy_assignments WHERE 1 = 1`
	var args []any
	for _, c := range []struct{ col, v string }{{"kind", f.Kind}, {"subject", f.Subject}, {"preset_id", f.PresetID}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	rows, err := s.db.Query(ctx, q+` ORDER BY CASE kind WHEN 'key' THEN 0 WHEN 'team' THEN 1 ELSE 2 END, subject`, args...)
	if err != nil {
		return nil, fmt.Errorf("policy: list assignments: %w", err)
	}
	defer rows.Close()
	out := []Assignment{}
	for rows.Next() {
		var (
			a  Assignment
			at int64
		)
		if err := rows.Scan(&a.Kind, &a.Subject, &a.PresetID, &at); err != nil {
			return nil, fmt.Errorf("policy: list assignments: %w", err)
		}
		a.CreatedAt = sqlstore.FromMicros(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("policy: list assignments: %w", err)
	}
	return out, nil
}

// DeleteAssignment removes the assignment of (kind, subject), or answers
// store.ErrNotFound.
func (s *SQLStore) DeleteAssignment(ctx context.Context, kind, subject string) error {
	err := mustAffect(s.db.Exec(ctx, `DELETE FROM policy_assignments WHERE kind = ? AND subject = ?`, kind, subject))
	return wrap("unassign", kind+":"+subject, err)
}

// Resolve finds the preset that applies to a caller and its active
// policies in the preset's order. Precedence: the key's own assignment
// (kind key, subject keyID), else its team's (kind team, subject teamID),
// else the first of roles, in the order given, that has one, else
// defaultPreset (SVC_DEFAULT_PRESET: a preset id, or else a preset name).
// Empty keyID or teamID are skipped. With none of these it returns nil,
// nil, nil: no scan. A defaultPreset that names no preset is an error
// wrapping ErrUnknownPreset (the caller applies POLICY_FAIL_OPEN).
func (s *SQLStore) Resolve(ctx context.Context, keyID, teamID string, roles []string, defaultPreset string) (*Preset, []Policy, error) {
	if len(roles) > MaxList {
		roles = roles[:MaxList]
	}
	var (
		conds []string
		args  []any
	)
	if keyID != "" {
		conds, args = append(conds, `(kind = ? AND subject = ?)`), append(args, AssignKey, keyID)
	}
	if teamID != "" {
		conds, args = append(conds, `(kind = ? AND subject = ?)`), append(args, AssignTeam, teamID)
	}
	if len(roles) > 0 {
		conds = append(conds, `(kind = ? AND subject IN (`+sqlstore.Placeholders(len(roles), "?")+`))`)
		args = append(args, AssignRole)
		for _, r := range roles {
			args = append(args, r)
		}
	}
	presetID := ""
	if len(conds) > 0 {
		var err error
		if presetID, err = s.pick(ctx, conds, args, keyID, teamID, roles); err != nil {
			return nil, nil, fmt.Errorf("policy: resolve: %w", err)
		}
	}
	if presetID == "" && defaultPreset != "" {
		id, err := s.presetRef(ctx, defaultPreset)
		if err != nil {
			return nil, nil, fmt.Errorf("policy: resolve: default preset %q: %w", clip(defaultPreset), err)
		}
		presetID = id
	}
	if presetID == "" {
		return nil, nil, nil
	}
	pr, err := scanPreset(s.db.QueryRow(ctx, `SELECT `+presetColumns+` FROM policy_presets WHERE id = ?`, presetID))
	if errors.Is(err, store.ErrNotFound) {
		err = ErrUnknownPreset // deleted since the assignment was read
	}
	if err != nil {
		return nil, nil, fmt.Errorf("policy: resolve: preset %q: %w", presetID, err)
	}
	pols, err := presetPolicies(ctx, s.db, presetID, true)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: resolve: preset %q: %w", presetID, err)
	}
	pr.PolicyIDs = make([]string, len(pols))
	for i, p := range pols {
		pr.PolicyIDs[i] = p.ID
	}
	return &pr, pols, nil
}

// pick reads the caller's assignments and returns the preset of the one
// that takes precedence ("" when none).
func (s *SQLStore) pick(ctx context.Context, conds []string, args []any, keyID, teamID string, roles []string) (string, error) {
	q := `SELECT kind, subject, preset_id FROM policy_assignments WHERE ` + conds[0]
	for _, c := range conds[1:] {
		q += ` OR ` + c
	}
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	best, rank := "", -1
	for rows.Next() {
		var kind, subject, preset string
		if err := rows.Scan(&kind, &subject, &preset); err != nil {
			return "", err
		}
		// rank: lower wins. key 0, team 1, role 2+its index in roles.
		r := -1
		switch {
		case kind == AssignKey && subject == keyID:
			r = 0
		case kind == AssignTeam && subject == teamID:
			r = 1
		case kind == AssignRole:
			if i := slices.Index(roles, subject); i >= 0 {
				r = 2 + i
			}
		}
		if r >= 0 && (rank < 0 || r < rank) {
			best, rank = preset, r
		}
	}
	return best, rows.Err()
}

// presetRef finds a preset by id, or else by name.
func (s *SQLStore) presetRef(ctx context.Context, ref string) (string, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM policy_presets WHERE id = ? OR name = ?`, ref, ref)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	found := ""
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		if id == ref || found == "" {
			found = id
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if found == "" {
		return "", ErrUnknownPreset
	}
	return found, nil
}

// AddStats adds evaluations (total_applications) and violations
// (compliance_violations) to the library's counters in one atomic UPDATE
// (no read-modify-write: concurrent callers on every replica add up).
// Negative counts are refused.
func (s *SQLStore) AddStats(ctx context.Context, applications, violations int64) error {
	if applications < 0 || violations < 0 {
		return fmt.Errorf("policy: add stats: negative counts (%d, %d)", applications, violations)
	}
	if applications == 0 && violations == 0 {
		return nil
	}
	if _, err := s.db.Exec(ctx, `UPDATE policy_stats SET applications = applications + ?, violations = violations + ? WHERE id = 1`,
		applications, violations); err != nil {
		return fmt.Errorf("policy: add stats: %w", err)
	}
	return nil
}

// Stats returns the library's counts, read in one statement.
func (s *SQLStore) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.db.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM policies),
		(SELECT COUNT(*) FROM policies WHERE is_active = ?),
		(SELECT COUNT(*) FROM policy_presets),
		(SELECT COUNT(*) FROM policy_assignments),
		applications, violations FROM policy_stats WHERE id = 1`, true).
		Scan(&st.TotalPolicies, &st.ActivePolicies, &st.TotalPresets, &st.TotalAssignments,
			&st.TotalApplications, &st.ComplianceViolations)
	if err != nil {
		return Stats{}, fmt.Errorf("policy: stats: %w", err)
	}
	return st, nil
}
