package mgmt

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// Alerter raises and lists webhook alerts (*alerts.Notifier).
type Alerter interface {
	// Enabled reports whether alerts are on (SVC_ALERTS_ENABLED).
	Enabled() bool
	// Send queues an alert without blocking; false when it was dropped.
	Send(a alerts.Alert) bool
	// Recent lists the fleet's last alerts, newest first.
	Recent(ctx context.Context, n int) ([]alerts.Sent, error)
}

// Bounds of a custom alert and of the alert list.
const (
	maxAlertTitle   = 200
	maxAlertMessage = 4000
	maxAlertList    = 200
)

// errAlertsDisabled answers both routes when alerts are off (Deps.Alerts
// nil, or SVC_ALERTS_ENABLED=false): 503, so a caller sees that the feature
// exists but is switched off, rather than a 404 for a documented route.
var errAlertsDisabled = apierr.New(apierr.Unavailable, "alerts_disabled", "alerts are disabled on this server (SVC_ALERTS_ENABLED=false)")

// raiseAlert answers POST /api/alerts: {title (required, ≤ 200
// characters), message (≤ 4000), severity (info, warning or critical;
// default warning)} → 202 {success, alert}. Delivery happens after the
// answer; GET /api/alerts shows its outcome (an alert whose title alerted
// within SVC_ALERT_DEDUP is not sent again and not listed).
func (a *API) raiseAlert(w http.ResponseWriter, r *http.Request) error {
	if a.d.Alerts == nil || !a.d.Alerts.Enabled() {
		return errAlertsDisabled
	}
	var req struct {
		Title    *string `json:"title"`
		Message  string  `json:"message"`
		Severity string  `json:"severity"`
	}
	if err := readJSON(r, &req); err != nil {
		return err
	}
	switch {
	case req.Title == nil || strings.TrimSpace(*req.Title) == "":
		return apierr.BadParam("title", "title is required")
	case utf8.RuneCountInString(*req.Title) > maxAlertTitle:
		return apierr.BadParam("title", "title must be at most %d characters", maxAlertTitle)
	case utf8.RuneCountInString(req.Message) > maxAlertMessage:
		return apierr.BadParam("message", "message must be at most %d characters", maxAlertMessage)
	}
	sev := alerts.Warning
	if req.Severity != "" {
		var ok bool
		if sev, ok = alerts.ParseSeverity(req.Severity); !ok {
			return apierr.BadParam("severity", "severity must be info, warning or critical")
		}
	}
	al := alerts.NewCustom(strings.TrimSpace(*req.Title), req.Message, sev, a.d.Now())
	if !a.d.Alerts.Send(al) {
		return apierr.New(apierr.Unavailable, "alerts_queue_full", "the alert queue is full; try again shortly")
	}
	return writeJSON(w, http.StatusAccepted, map[string]any{"success": true, "alert": al})
}

// listAlerts answers GET /api/alerts?limit= (1–200, default 50): the
// fleet's last alerts, newest first, with each platform's delivery status.
func (a *API) listAlerts(w http.ResponseWriter, r *http.Request) error {
	if a.d.Alerts == nil || !a.d.Alerts.Enabled() {
		return errAlertsDisabled
	}
	limit, err := jsonbody.QueryInt(r.URL.Query(), "limit", 50, 1, maxAlertList)
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	list, err := a.d.Alerts.Recent(ctx, limit)
	switch {
	case errors.Is(err, alerts.ErrDisabled):
		return errAlertsDisabled
	case err != nil:
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the alert log is unavailable: the shared store did not answer", err)
	}
	if list == nil {
		list = []alerts.Sent{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "alerts": list})
}
