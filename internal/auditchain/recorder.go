package auditchain

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
)

// Appender is what a Recorder appends to (SQLStore is one).
type Appender interface {
	Append(ctx context.Context, ev Event) (Entry, error)
}

// AppendTimeout bounds an append after the action it records.
const AppendTimeout = 5 * time.Second

// Recorder appends the actions that must be proven — admin actions, access
// decisions — to the chain, after they succeeded. A failed append does not
// undo the action or change its answer: it is logged at error level (and
// counted by the chain's metrics) for an operator to see. The zero value
// records nothing.
type Recorder struct {
	Chain Appender
	Log   *slog.Logger
}

// Append appends ev, even when ctx has been cancelled (the action is done),
// within AppendTimeout.
func (rc Recorder) Append(ctx context.Context, ev Event) {
	if rc.Chain == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AppendTimeout)
	defer cancel()
	if _, err := rc.Chain.Append(ctx, ev); err != nil && rc.Log != nil {
		rc.Log.Error("an action that must be proven is not on the audit chain", "event_type", ev.Type,
			"actor", ev.Actor, "subject", ev.Subject, "err", err)
	}
}

// Record appends an admin action of request r, as its principal. details
// must hold no secret.
func (rc Recorder) Record(r *http.Request, typ, subject string, details map[string]any) {
	rc.Append(r.Context(), Event{Type: typ, Actor: identity.From(r.Context()).Actor(), Subject: subject, Details: details})
}
