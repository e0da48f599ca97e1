package teams

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
)

// Store is what the Directory needs of the records.
type Store interface {
	All(ctx context.Context) ([]Team, error)
	Put(ctx context.Context, t Team) error
	Delete(ctx context.Context, id string) error
}

// pollEvery is how often Run rereads the teams.
const pollEvery = time.Second

// Directory is this process's view of the teams, reread every second.
type Directory struct {
	store Store
	now   func() time.Time
	log   *slog.Logger
	snap  atomic.Pointer[map[string]*Team] // nil: never read
}

// NewDirectory returns a Directory over st; call Load, then Run.
func NewDirectory(st Store, log *slog.Logger) *Directory {
	if log == nil {
		log = slog.Default()
	}
	return &Directory{store: st, now: time.Now, log: log}
}

// Load reads every team.
func (d *Directory) Load(ctx context.Context) error {
	all, err := d.store.All(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]*Team, len(all))
	for i := range all {
		m[all[i].ID] = &all[i]
	}
	d.snap.Store(&m)
	return nil
}

// Run rereads the teams every second until ctx ends.
func (d *Directory) Run(ctx context.Context) error {
	return store.Poll(ctx, pollEvery, d.Load, func(err error) {
		d.log.Warn("teams: reading the teams failed; the last ones stay in force", "err", err)
	})
}

// errNotRead: a lookup before the first read fails rather than find no team
// (which would lift the team's limits).
var errNotRead = errors.New("teams: the teams have not been read")

// Of is the team of a signed-in user: their TeamID's, else the first of
// their groups that is a team; nil for other principals or no team.
func (d *Directory) Of(p *identity.Principal) (*Team, error) {
	if p == nil || p.Kind != identity.User {
		return nil, nil
	}
	snap := d.snap.Load()
	if snap == nil {
		return nil, errNotRead
	}
	if t, ok := (*snap)[p.TeamID]; ok && p.TeamID != "" {
		return t, nil
	}
	for _, g := range p.Groups {
		if t, ok := (*snap)[g]; ok {
			return t, nil
		}
	}
	return nil, nil
}

// List is every team, by id.
func (d *Directory) List(ctx context.Context) ([]Team, error) { return d.store.All(ctx) }

// Get is one team, or store.ErrNotFound.
func (d *Directory) Get(ctx context.Context, id string) (Team, error) {
	all, err := d.store.All(ctx)
	if err != nil {
		return Team{}, err
	}
	for _, t := range all {
		if t.ID == id {
			return t, nil
		}
	}
	return Team{}, store.ErrNotFound
}

// Put validates and stores t (created_at kept when it exists), in force
// here at once and elsewhere within a second.
func (d *Directory) Put(ctx context.Context, t Team) (Team, error) {
	if err := t.Validate(); err != nil {
		return Team{}, err
	}
	now := d.now().UTC().Truncate(time.Microsecond) // as stored
	t.CreatedAt, t.UpdatedAt = now, now
	if old, err := d.Get(ctx, t.ID); err == nil {
		t.CreatedAt = old.CreatedAt
	} else if !errors.Is(err, store.ErrNotFound) {
		return Team{}, err
	}
	if err := d.store.Put(ctx, t); err != nil {
		return Team{}, err
	}
	return t, d.Load(ctx)
}

// Delete removes a team.
func (d *Directory) Delete(ctx context.Context, id string) error {
	if err := d.store.Delete(ctx, id); err != nil {
		return err
	}
	return d.Load(ctx)
}
