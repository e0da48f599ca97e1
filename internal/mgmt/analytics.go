package mgmt

import (
	"net/http"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/apierr"
)

// analytics answers GET /api/analytics: the report (analytics.Report) of
// the window that period, or from and to, name (analytics.ParseWindow),
// read from the rollups the bridge maintains.
func (a *API) analytics(w http.ResponseWriter, r *http.Request) error {
	win, err := analytics.ParseWindow(r.URL.Query(), a.d.Now())
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	rep, err := a.d.Analytics.Report(ctx, win)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "store_error", "could not read the analytics", err)
	}
	return writeJSON(w, http.StatusOK, rep)
}
