package mgmt

import (
	"net/http"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/health"
)

// logs answers GET /api/vas/logs over both tiers (audit.Reader).
func (a *API) logs(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	page, err := a.reader().Query(ctx, r.URL.Query(), a.d.Now())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// logMetrics answers GET /api/vas/metrics over both tiers.
func (a *API) logMetrics(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	sum, err := a.reader().Metrics(ctx, r.URL.Query(), a.d.Now())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sum)
}

// reader is the merged reader, or one over the long-term store alone.
func (a *API) reader() *audit.Reader {
	if a.d.LogReader != nil {
		return a.d.LogReader
	}
	return &audit.Reader{Store: a.d.Logs}
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
