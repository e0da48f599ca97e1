package mgmt

import (
	"context"
	"math"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auditchain"
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
