package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store"
)

// API is the bridge's HTTP surface: /api/redis, /api/hybrid and the
// merged /api/vas/logs and /api/vas/metrics, behind the admin key, plus
// /health and /ready.
type API struct {
	Bridge   *Bridge
	Reader   *audit.Reader
	Store    audit.Store
	AdminKey string
	Probes   map[string]app.Probe
	Log      *slog.Logger
	Now      func() time.Time
}

// Handler returns the routes.
func (a *API) Handler() http.Handler {
	if a.Now == nil {
		a.Now = time.Now
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/redis", a.serve(a.redis))
	mux.Handle("GET /api/hybrid", a.serve(a.hybrid))
	mux.Handle("GET /api/vas/logs", a.serve(func(r *http.Request) (any, error) {
		return a.Reader.Query(r.Context(), r.URL.Query(), a.Now())
	}))
	mux.Handle("GET /api/vas/metrics", a.serve(func(r *http.Request) (any, error) {
		return a.Reader.Metrics(r.Context(), r.URL.Query(), a.Now())
	}))
	mux.Handle("/", a.serve(func(r *http.Request) (any, error) {
		return nil, apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path)
	}))
	root := http.NewServeMux()
	app.Health(root, a.Probes)
	root.Handle("/", auth.Guard(auth.Chain{auth.AdminKey(a.AdminKey)}, mux))
	return root
}

// serve runs f with a bounded time and writes its answer or error.
func (a *API) serve(f func(r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		v, err := f(r.WithContext(ctx))
		if err != nil {
			e := apierr.From(err)
			if e.Status() >= 500 && a.Log != nil {
				a.Log.Error("bridge request failed", "path", r.URL.Path, "status", e.Status(), "err", err)
			}
			apierr.Write(w, e)
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			apierr.Write(w, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the answer", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// RedisStatus is the answer of GET /api/redis: the hot tier.
type RedisStatus struct {
	Success bool   `json:"success"`
	Stream  string `json:"stream"`
	Group   string `json:"group"`
	Length  int64  `json:"length"`
	Pending int64  `json:"pending"`
	// Undelivered entries were never read by a bridge; with Pending they
	// are the backlog.
	Undelivered int64 `json:"undelivered"`
	Backlog     int64 `json:"backlog"`
	// OldestPendingAgeS is the age of the oldest entry not yet written.
	OldestPendingAgeS float64    `json:"oldest_pending_age_s"`
	Consumers         []Consumer `json:"consumers"`
}

// Consumer is one bridge reading the hot tier.
type Consumer struct {
	Name    string  `json:"name"`
	Pending int64   `json:"pending"`
	IdleS   float64 `json:"idle_s"`
}

// hotInfo is the hot tier's state, or the error both routes answer.
func (a *API) hotInfo(r *http.Request) (store.StreamInfo, error) {
	info, err := a.Bridge.hot.StreamInfo(r.Context(), audit.HotLogKey, audit.BridgeGroup)
	if err != nil {
		return info, apierr.Wrap(apierr.Unavailable, "hot_tier_unavailable", "could not read the hot log tier", err)
	}
	return info, nil
}

func (a *API) redis(r *http.Request) (any, error) {
	info, err := a.hotInfo(r)
	if err != nil {
		return nil, err
	}
	out := RedisStatus{Success: true, Stream: audit.HotLogKey, Group: audit.BridgeGroup, Length: info.Length,
		Pending: info.Pending, Undelivered: info.Undelivered, Backlog: info.Backlog(), Consumers: []Consumer{},
		OldestPendingAgeS: info.Lag(a.Now()).Seconds()}
	for _, c := range info.Consumers {
		out.Consumers = append(out.Consumers, Consumer{Name: c.Name, Pending: c.Pending, IdleS: c.Idle.Seconds()})
	}
	return out, nil
}

// HybridStatus is the answer of GET /api/hybrid: both tiers.
type HybridStatus struct {
	Success bool `json:"success"`
	Hot     struct {
		Length  int64 `json:"length"`
		Backlog int64 `json:"backlog"`
	} `json:"hot"`
	LongTerm struct {
		Entries   int64      `json:"entries"`
		LastWrite *time.Time `json:"last_write"`
	} `json:"long_term"`
	// LagS is the age of the oldest entry not yet written (0: none).
	LagS   float64 `json:"lag_s"`
	Bridge Status  `json:"bridge"`
}

func (a *API) hybrid(r *http.Request) (any, error) {
	info, err := a.hotInfo(r)
	if err != nil {
		return nil, err
	}
	_, total, err := a.Store.QueryLogs(r.Context(), audit.Query{Limit: 1})
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "store_error", "could not count the long-term log", err)
	}
	out := HybridStatus{Success: true, Bridge: a.Bridge.Status()}
	out.Hot.Length, out.Hot.Backlog = info.Length, info.Backlog()
	out.LongTerm.Entries = total
	if lw := out.Bridge.LastWrite; !lw.IsZero() {
		out.LongTerm.LastWrite = &lw
	}
	out.LagS = info.Lag(a.Now()).Seconds()
	return out, nil
}
