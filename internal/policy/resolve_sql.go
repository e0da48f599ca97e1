package policy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

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
	if !storable(f.Kind) || !storable(f.Subject) || !storable(f.PresetID) {
		return []Assignment{}, nil
	}
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
	if !storable(kind) || !storable(subject) {
		return fmt.Errorf("policy: unassign: %w", store.ErrNotFound)
	}
	err := mustAffect(s.db.Exec(ctx, `DELETE FROM policy_assignments WHERE kind = ? AND subject = ?`, kind, subject))
	return wrap("unassign", kind+":"+subject, err)
}

// Resolve finds the preset that applies to a caller and its active
// policies in the preset's order (the returned preset's PolicyIDs are
// those active ones; inactive policies are left out, not evaluated).
// Precedence: the key's own assignment (kind key, subject keyID), else
// its team's (kind team, subject teamID), else the first of roles, in the
// order given, that has one, else defaultPreset (SVC_DEFAULT_PRESET: a
// preset id, or else a preset name). Empty keyID, teamID and roles are
// skipped. With none of these it returns nil, nil, nil: no scan. A
// defaultPreset that names no preset is an error wrapping
// ErrUnknownPreset (the caller applies POLICY_FAIL_OPEN). It reads the
// database each call (two or three statements): the proxy should cache.
func (s *SQLStore) Resolve(ctx context.Context, keyID, teamID string, roles []string, defaultPreset string) (*Preset, []Policy, error) {
	if !storable(keyID) {
		keyID = ""
	}
	if !storable(teamID) {
		teamID = ""
	}
	roles = slices.DeleteFunc(slices.Clone(roles), func(r string) bool { return r == "" || !storable(r) })
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
		if !storable(defaultPreset) {
			return nil, nil, fmt.Errorf("policy: resolve: default preset: %w", ErrUnknownPreset)
		}
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
