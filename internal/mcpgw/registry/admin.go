package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
)

const (
	updateAttempts = 5               // Update's retries when a concurrent update moved the version
	publishTimeout = 5 * time.Second // for announcing a change already stored
	maxEnvName     = 256
	maxEnvValue    = 32 << 10
)

// Create registers s: normalised, validated (a *mcpgw.ValidationError
// naming the field), base_url checked by the egress policy, its credential
// sealed; an id already registered is an error matching store.ErrConflict.
// It returns the registration as stored, redacted.
func (r *Registry) Create(ctx context.Context, s mcpgw.Server) (*mcpgw.Server, error) {
	s.Normalize()
	if err := r.validate(ctx, &s); err != nil {
		return nil, err
	}
	now := r.now().UTC().Truncate(time.Microsecond)
	rec, err := r.record(&s, credential{AuthToken: s.AuthToken, Env: s.Env}, 1, now, now)
	if err != nil {
		return nil, err
	}
	if err := r.store.Put(ctx, rec); err != nil {
		return nil, err // names the server; store.ErrConflict for a taken id
	}
	return r.changed(ctx, &rec)
}

// Update replaces the registration of id with s (a PUT: every field is
// s's; s.ID must be empty or id). The credential is merged:
//
//   - auth_token: an empty one keeps the stored token while auth_type is
//     bearer or header; a new one replaces it. To clear it, set auth_type to
//     none (or oauth, whose tokens live elsewhere): the stored token is
//     dropped.
//   - env (stdio): the names given are the new set; a value "" or EnvMask
//     (what answers show) keeps the stored value of that name, any other
//     value replaces it; names not given are dropped.
//
// Errors as Create's, and store.ErrNotFound for an unknown id.
func (r *Registry) Update(ctx context.Context, id string, s mcpgw.Server) (*mcpgw.Server, error) {
	if s.ID != "" && s.ID != id {
		return nil, &mcpgw.ValidationError{Field: "id", Message: "must be the id of the server updated (an id cannot change)"}
	}
	s.ID = id
	s.Normalize()
	if err := r.validate(ctx, &s); err != nil {
		return nil, err
	}
	for range updateAttempts {
		cur, err := r.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		old, err := open(r.sealer, id, cur.Sealed)
		if err != nil {
			return nil, err
		}
		rec, err := r.record(&s, merge(&s, &old), cur.Version+1, cur.CreatedAt,
			r.now().UTC().Truncate(time.Microsecond))
		if err != nil {
			return nil, err
		}
		err = r.store.Put(ctx, rec)
		if errors.Is(err, store.ErrConflict) {
			continue // changed meanwhile: merge with the newer credential
		}
		if err != nil {
			return nil, err
		}
		return r.changed(ctx, &rec)
	}
	return nil, fmt.Errorf("registry: update server %q: it kept changing concurrently: %w", id, store.ErrConflict)
}

// merge is Update's credential: s's, with the stored values kept as Update
// says.
func merge(s *mcpgw.Server, old *credential) credential {
	c := credential{AuthToken: s.AuthToken}
	if c.AuthToken == "" && (s.AuthType == mcpgw.AuthBearer || s.AuthType == mcpgw.AuthHeader) {
		c.AuthToken = old.AuthToken
	}
	if len(s.Env) > 0 {
		c.Env = make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			if v == "" || v == EnvMask {
				v = old.Env[k]
			}
			c.Env[k] = v
		}
	}
	return c
}

// Delete removes the registration of id; unknown: store.ErrNotFound.
func (r *Registry) Delete(ctx context.Context, id string) error {
	if err := r.store.Delete(ctx, id); err != nil {
		return err
	}
	r.announce(ctx, id)
	return nil
}

// Get returns the stored registration of id, redacted, read from the store
// (the admin's view: current even before this process's view caught up).
func (r *Registry) Get(ctx context.Context, id string) (*mcpgw.Server, error) {
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return decode(&rec)
}

// List returns every stored registration, redacted, ordered by id, read
// from the store.
func (r *Registry) List(ctx context.Context) ([]*mcpgw.Server, error) {
	recs, err := r.store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*mcpgw.Server, 0, len(recs))
	for i := range recs {
		s, err := decode(&recs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// record builds the row of s with credential c.
func (r *Registry) record(s *mcpgw.Server, c credential, version int64, created, updated time.Time) (Record, error) {
	stored := *s
	stored.AuthToken = c.AuthToken // decides has_auth_token
	cfg, err := config(&stored)
	if err != nil {
		return Record{}, fmt.Errorf("registry: encode server %q: %w", s.ID, err)
	}
	sealed, err := seal(r.sealer, s.ID, &c)
	if err != nil {
		return Record{}, fmt.Errorf("registry: seal credential of server %q: %w", s.ID, err)
	}
	return Record{ID: s.ID, Config: cfg, Sealed: sealed, Version: version, CreatedAt: created, UpdatedAt: updated}, nil
}

// changed announces a stored change and returns the registration as
// stored, redacted.
func (r *Registry) changed(ctx context.Context, rec *Record) (*mcpgw.Server, error) {
	r.announce(ctx, rec.ID)
	return decode(rec)
}

// announce updates this process's view of id and tells the others. The
// change is stored, so neither outlives a failure: a failed announcement
// is logged and healed by the others' next full reload.
func (r *Registry) announce(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := r.reload(ctx, id); err != nil {
		r.log.Warn("registry: a change was stored but this process's view was not updated; the next reload will", "id", id, "err", err)
	}
	if r.bus == nil {
		return
	}
	if err := r.bus.Publish(ctx, Channel, []byte(id)); err != nil {
		r.log.Warn("registry: a change was stored but not announced; other processes see it at their next full reload",
			"id", id, "within", r.every, "err", err)
	}
}

// validate checks a normalised registration: mcpgw's Validate, the env
// entries, and base_url against the egress policy.
func (r *Registry) validate(ctx context.Context, s *mcpgw.Server) error {
	if err := s.Validate(r.vopts); err != nil {
		return err
	}
	for k, v := range s.Env {
		if k == "" || len(k) > maxEnvName || strings.ContainsAny(k, "=\x00") {
			return &mcpgw.ValidationError{Field: "env", Message: fmt.Sprintf("names must be 1–%d bytes without '=' or NUL", maxEnvName)}
		}
		if len(v) > maxEnvValue || strings.IndexByte(v, 0) >= 0 {
			return &mcpgw.ValidationError{Field: "env." + k, Message: fmt.Sprintf("values must be at most %d bytes without NUL", maxEnvValue)}
		}
	}
	if s.BaseURL == "" {
		return nil
	}
	err := r.egress.CheckURL(ctx, s.BaseURL)
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, egress.ErrForbidden):
		return &mcpgw.ValidationError{Field: "base_url", Message: strings.TrimPrefix(err.Error(), "egress: ") +
			" (svc does not connect to internal addresses unless the operator allows private MCP servers)"}
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return &mcpgw.ValidationError{Field: "base_url", Message: "the host " + dnsErr.Name + " does not resolve"}
	}
	return apierr.Wrap(apierr.Unavailable, "dns_unavailable",
		"could not resolve base_url's host to check it; try again", err)
}
