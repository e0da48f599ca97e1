package wire

import (
	"context"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/teams"
)

// Teams is the teams part: the directory, read once and every second.
func (s *System) Teams() (*teams.Directory, error) {
	return s.teams.get(func() (*teams.Directory, error) {
		db, err := s.SQL()
		if err != nil {
			return nil, err
		}
		d := teams.NewDirectory(teams.NewSQLStore(db), s.Log)
		if err := d.Load(s.ctx); err != nil {
			return nil, err
		}
		s.runs("teams", d.Run)
		return d, nil
	})
}

// teamed sets a signed-in user's TeamID from the directory (their first
// group that is a team), so limits, model allow-lists and policies find it.
type teamed struct {
	auth.Authenticator
	dir *teams.Directory
}

func (t teamed) Authenticate(ctx context.Context, c auth.Credentials) (*identity.Principal, error) {
	p, err := t.Authenticator.Authenticate(ctx, c)
	if err != nil || p == nil || p.Kind != identity.User {
		return p, err
	}
	team, err := t.dir.Of(p)
	if err != nil {
		return nil, apierr.Wrap(apierr.Unavailable, "teams_unavailable", "the teams could not be read", err)
	}
	if team != nil {
		p.TeamID = team.ID
	}
	return p, nil
}

// userLimits are a signed-in user's limits: their team's, owned by the
// team (its members share them); without a team, the per-user defaults
// (SVC_USER_*_LIMIT), counted for the user alone.
func userLimits(dir *teams.Directory, def config.UserLimits, p *identity.Principal) (limit.Limits, error) {
	t, err := dir.Of(p)
	if err != nil {
		return limit.Limits{}, err
	}
	if t == nil {
		return limit.Limits{RPM: def.RPM, TPM: def.TPM, MaxBudgetUSD: def.MaxBudgetUSD, BudgetPeriod: def.BudgetPeriod}, nil
	}
	return limit.Limits{RPM: t.RPMLimit, TPM: t.TPMLimit, MaxBudgetUSD: t.MaxBudgetUSD, BudgetPeriod: t.BudgetPeriod,
		Owner: &identity.Principal{Kind: identity.Team, ID: t.ID}}, nil
}

// models is each caller's model allow-list: a key's restrictions, a
// signed-in user's team's allow-list (nil: every model).
type models struct {
	keys *auth.Keys
	dir  *teams.Directory
}

func (m models) Models(ctx context.Context, p *identity.Principal) ([]string, error) {
	if p != nil && p.Kind == identity.User {
		t, err := m.dir.Of(p)
		if err != nil || t == nil || len(t.ModelAllowlist) == 0 {
			return nil, err
		}
		return t.ModelAllowlist, nil
	}
	return m.keys.Models(ctx, p)
}
