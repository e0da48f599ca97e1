package mgmt

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// Chain is the tamper-evident audit chain (auditchain.SQLStore): every
// admin action is appended to it, and /api/audit/* read it.
type Chain interface {
	Append(ctx context.Context, ev auditchain.Event) (auditchain.Entry, error)
	List(ctx context.Context, f auditchain.Filter) ([]auditchain.Entry, error)
	Verify(ctx context.Context) (auditchain.Report, error)
}

// Event types of the admin actions on the chain.
const (
	evVKeyCreate         = "vkey.create"
	evVKeyRevoke         = "vkey.revoke"
	evVKeyUpdate         = "vkey.update"
	evProviderKeyStore   = "provider_key.store"
	evProviderKeyDelete  = "provider_key.delete"
	evRoutingChainSet    = "routing.fallback_chain.set"
	evRoutingChainDelete = "routing.fallback_chain.delete"
	evRoutingStrategy    = "routing.strategy.set"
	evRoutingDefault     = "routing.default_provider.set"
	evRoutingMapping     = "routing.model_mapping.set"
	evRoutingForce       = "routing.force_provider.set"
	evRoutingBudget      = "routing.budget.set"
	evCacheFlush         = "cache.flush"
)

// chainAppendTimeout bounds an append after the action it records.
const chainAppendTimeout = 5 * time.Second

// recorder appends admin actions to the chain (nil: none is kept).
type recorder struct {
	chain Chain
	log   *slog.Logger
}

// record appends an action that has succeeded, as the request's principal.
// A failed append does not undo the action or change its answer: it is
// logged at error level (and counted by the chain's metrics) for an
// operator to see. details must hold no secret.
func (rc recorder) record(r *http.Request, typ, subject string, details map[string]any) {
	if rc.chain == nil {
		return
	}
	// The action is done: the append runs even if the caller has gone.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), chainAppendTimeout)
	defer cancel()
	actor := identity.From(r.Context()).Actor()
	if _, err := rc.chain.Append(ctx, auditchain.Event{Type: typ, Actor: actor, Subject: subject, Details: details}); err != nil && rc.log != nil {
		rc.log.Error("admin action not recorded on the audit chain", "event_type", typ, "actor", actor, "subject", subject, "err", err)
	}
}

// auditLogs answers GET /api/audit/logs: chain entries, newest first,
// filtered by event_type and actor, paged with before (a seq).
func (a *API) auditLogs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := jsonbody.QueryInt(q, "limit", auditchain.DefaultLimit, 1, auditchain.MaxLimit)
	if err != nil {
		return err
	}
	before, err := jsonbody.QueryInt(q, "before", 0, 1, math.MaxInt)
	if err != nil {
		return err
	}
	f := auditchain.Filter{EventType: q.Get("event_type"), Actor: q.Get("actor"), Limit: limit, Before: int64(before)}
	if len(f.EventType) > auditchain.MaxEventType {
		return apierr.BadParam("event_type", "event_type must be at most %d bytes", auditchain.MaxEventType)
	}
	if len(f.Actor) > auditchain.MaxActor {
		return apierr.BadParam("actor", "actor must be at most %d bytes", auditchain.MaxActor)
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	es, err := a.d.Chain.List(ctx, f)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "could not read the audit chain", err)
	}
	var next *int64
	if len(es) == limit && es[len(es)-1].Seq > 1 {
		next = &es[len(es)-1].Seq
	}
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "object": "list", "data": es, "next_before": next})
}

// auditVerify answers GET /api/audit/verify: the chain walked from its
// first entry, {ok, entries, first_broken_seq}.
func (a *API) auditVerify(w http.ResponseWriter, r *http.Request) error {
	rep, err := a.d.Chain.Verify(r.Context())
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "could not read the audit chain", err)
	}
	return writeJSON(w, http.StatusOK, rep)
}
