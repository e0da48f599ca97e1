package mgmt

import (
	"net/http"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/health"
)

func (a *API) logs(w http.ResponseWriter, r *http.Request) error {
	q, err := audit.ParseQuery(r.URL.Query(), a.d.Now())
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	page, err := audit.Logs(ctx, a.d.Logs, q)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (a *API) logMetrics(w http.ResponseWriter, r *http.Request) error {
	since, err := audit.DaysSince(r.URL.Query(), a.d.Now())
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	sum, err := audit.Summarize(ctx, a.d.Logs, since)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sum)
}

// providerPerf answers GET /api/providers/perf: per provider and model, over
// the last five minutes and across every process, requests, error rate,
// p50/p95 latency and this process's calls in flight.
func (a *API) providerPerf(w http.ResponseWriter, r *http.Request) error {
	data := []health.Figures{}
	if a.d.Health != nil {
		data = a.d.Health.All()
	}
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "window_seconds": int(health.Window.Seconds()), "data": data})
}
