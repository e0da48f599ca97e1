package analytics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Report is the answer of GET /api/analytics:
//
//	{success, period, from, to, bucket_seconds,
//	 totals{requests, errors, error_rate, tokens, prompt_tokens, completion_tokens, cost_usd},
//	 volume:[{start, requests, errors, tokens, cost_usd}],
//	 cost_by_provider:[{provider, cost_usd, requests}],
//	 cost_by_model:[{model, requests, tokens, cost_usd}],
//	 cache:{hits, hit_rate, tokens_saved, cost_saved_usd},
//	 top_models:[{model, requests, tokens, cost_usd}],
//	 top_users:[{user_id, requests, tokens, cost_usd}],
//	 top_keys:[{key_id, key, requests, tokens, cost_usd}],
//	 error_rate_by_provider:[{provider, requests, errors, error_rate}],
//	 latency_ms:{p50, p95, avg}}
//
// period is "24h", "7d", "30d" or "custom" (from/to); from and to are the
// window after widening to whole buckets (RFC 3339, UTC). Rates are
// fractions from 0 to 1, costs USD, latencies milliseconds. volume has
// every bucket of the window, oldest first, zeros included; lists are []
// when empty, never null. An error is an entry with status >= 400 or not
// successful. cost_by_provider and cost_by_model are by cost, highest
// first, at most MaxListed; top_* by requests, at most TopN;
// error_rate_by_provider by error rate, at most MaxListed. Users and keys
// count only entries that had one. key is the key's masked prefix, never
// its secret. p50 and p95 are estimates within the bound documented in
// histogram.go (a factor of 1.5 between 5 ms and 189 s); avg is exact.
type Report struct {
	Success             bool             `json:"success"`
	Period              string           `json:"period"`
	From                time.Time        `json:"from"`
	To                  time.Time        `json:"to"`
	BucketSeconds       int64            `json:"bucket_seconds"`
	Totals              Totals           `json:"totals"`
	Volume              []VolumePoint    `json:"volume"`
	CostByProvider      []ProviderCost   `json:"cost_by_provider"`
	CostByModel         []ModelUsage     `json:"cost_by_model"`
	Cache               Cache            `json:"cache"`
	TopModels           []ModelUsage     `json:"top_models"`
	TopUsers            []UserUsage      `json:"top_users"`
	TopKeys             []KeyUsage       `json:"top_keys"`
	ErrorRateByProvider []ProviderErrors `json:"error_rate_by_provider"`
	LatencyMS           Latency          `json:"latency_ms"`
}

// Sizes of the report's lists.
const (
	TopN      = 10
	MaxListed = 100
)

// Totals sum the window.
type Totals struct {
	Requests         int64   `json:"requests"`
	Errors           int64   `json:"errors"`
	ErrorRate        float64 `json:"error_rate"`
	Tokens           int64   `json:"tokens"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// VolumePoint is one bucket of the window, starting at Start.
type VolumePoint struct {
	Start    time.Time `json:"start"`
	Requests int64     `json:"requests"`
	Errors   int64     `json:"errors"`
	Tokens   int64     `json:"tokens"`
	CostUSD  float64   `json:"cost_usd"`
}

// ProviderCost is a provider's cost.
type ProviderCost struct {
	Provider string  `json:"provider"`
	CostUSD  float64 `json:"cost_usd"`
	Requests int64   `json:"requests"`
}

// ModelUsage is a model's use, over every provider that served it.
type ModelUsage struct {
	Model    string  `json:"model"`
	Requests int64   `json:"requests"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
}

// UserUsage is a user's use.
type UserUsage struct {
	UserID   string  `json:"user_id"`
	Requests int64   `json:"requests"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
}

// KeyUsage is a virtual key's use; Key is its masked prefix.
type KeyUsage struct {
	KeyID    string  `json:"key_id"`
	Key      string  `json:"key"`
	Requests int64   `json:"requests"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
}

// ProviderErrors is a provider's error rate.
type ProviderErrors struct {
	Provider  string  `json:"provider"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
}

// Cache is what the semantic cache answered and saved.
type Cache struct {
	Hits         int64   `json:"hits"`
	HitRate      float64 `json:"hit_rate"`
	TokensSaved  int64   `json:"tokens_saved"`
	CostSavedUSD float64 `json:"cost_saved_usd"`
}

// Latency are the window's latency figures, ms.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Avg float64 `json:"avg"`
}

// maxReportBuckets bounds the volume of a Window given to Report.
const maxReportBuckets = 10000

// check reports whether w can be served: buckets of whole minutes (whole
// hours from an hour up), From and To on bucket edges, a bounded count.
func (w Window) check() error {
	b := w.Bucket
	switch {
	case b < time.Minute || b%time.Minute != 0 || (b >= time.Hour && b%time.Hour != 0):
		return fmt.Errorf("analytics: bucket %v is not whole minutes, or whole hours from an hour", b)
	case !w.From.Before(w.To):
		return errors.New("analytics: window is empty")
	case !floorTime(w.From, b).Equal(w.From) || !floorTime(w.To, b).Equal(w.To):
		return errors.New("analytics: window is not aligned to its buckets")
	case w.To.Sub(w.From)/b > maxReportBuckets:
		return errors.New("analytics: window has too many buckets")
	}
	return nil
}

// Report reads the rollups of w: minute rows when its Bucket is under an
// hour, else the coarsest rows that fit (segments: week rows of keys and
// users, day rows, hour rows at the edges), the volume from day rows when
// the Bucket is whole days. Its four reads run at once on their own
// connections, not in one snapshot: a report taken while a batch commits
// may count that batch in some of its parts only (the next one is whole).
func (r *Rollups) Report(ctx context.Context, w Window) (Report, error) {
	if err := w.check(); err != nil {
		return Report{}, err
	}
	rep := Report{
		Success: true, Period: cmp.Or(w.Period, "custom"), From: w.From.UTC(), To: w.To.UTC(),
		BucketSeconds: int64(w.Bucket / time.Second),
	}
	from, to := sqlstore.Micros(w.From), sqlstore.Micros(w.To)
	modelSegs, principalSegs, volumeGrain := segments(modelGrains, from, to), segments(principalGrains, from, to), grainHour
	switch {
	case w.Bucket < time.Hour:
		modelSegs = []segment{{grainMinute, from, to}}
		principalSegs, volumeGrain = modelSegs, grainMinute
	case w.Bucket%(24*time.Hour) == 0:
		volumeGrain = grainDay
	}
	// Four queries at once, on connections of their own; each fills its
	// own fields of rep.
	var keys, users []principal
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.readModels(gctx, modelSegs, &rep) })
	g.Go(func() error { return r.readVolume(gctx, volumeGrain, w, &rep) })
	g.Go(func() (err error) {
		keys, err = r.top(gctx, keysTable, principalSegs)
		return err
	})
	g.Go(func() (err error) {
		users, err = r.top(gctx, usersTable, principalSegs)
		return err
	})
	if err := g.Wait(); err != nil {
		return Report{}, err
	}
	rep.TopKeys = make([]KeyUsage, len(keys))
	for i, k := range keys {
		rep.TopKeys[i] = KeyUsage{KeyID: k.id, Key: k.mask, Requests: k.requests, Tokens: k.tokens, CostUSD: k.cost}
	}
	rep.TopUsers = make([]UserUsage, len(users))
	for i, u := range users {
		rep.TopUsers[i] = UserUsage{UserID: u.id, Requests: u.requests, Tokens: u.tokens, CostUSD: u.cost}
	}
	return rep, nil
}

// sumExpr is SUM(col) typed alike in both dialects.
func sumExpr(col string) string {
	typ := "BIGINT"
	if col == "cost" || col == "cost_saved" {
		typ = "DOUBLE PRECISION"
	}
	return "CAST(COALESCE(SUM(" + col + "), 0) AS " + typ + ")"
}

// readModels reads the provider/model rows of segs and fills the totals,
// the cache, the latency and the provider and model lists of rep.
func (r *Rollups) readModels(ctx context.Context, segs []segment, rep *Report) error {
	sums := make([]string, len(modelSumColumns))
	for i, c := range modelSumColumns {
		sums[i] = sumExpr(c)
	}
	from, args := unionOf("analytics_models", "provider, model, "+strings.Join(modelSumColumns, ", "), segs)
	rows, err := r.db.Query(ctx, "SELECT provider, model, "+strings.Join(sums, ", ")+from+" GROUP BY provider, model", args...)
	if err != nil {
		return fmt.Errorf("analytics: report: models: %w", err)
	}
	defer rows.Close()
	var (
		total     modelSums
		providers = map[string]*modelSums{}
		models    = map[string]*modelSums{}
	)
	for rows.Next() {
		var (
			provider, model string
			s               modelSums
		)
		dest := []any{&provider, &model, &s.requests, &s.errors, &s.promptTokens, &s.completionTokens, &s.tokens,
			&s.cost, &s.cacheHits, &s.tokensSaved, &s.costSaved, &s.latencySum}
		for i := range s.lat {
			dest = append(dest, &s.lat[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("analytics: report: models: %w", err)
		}
		total.merge(&s)
		mergeInto(providers, provider, &s)
		mergeInto(models, model, &s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("analytics: report: models: %w", err)
	}
	rep.Totals = Totals{Requests: total.requests, Errors: total.errors, ErrorRate: rate(total.errors, total.requests),
		Tokens: total.tokens, PromptTokens: total.promptTokens, CompletionTokens: total.completionTokens, CostUSD: total.cost}
	rep.Cache = Cache{Hits: total.cacheHits, HitRate: rate(total.cacheHits, total.requests),
		TokensSaved: total.tokensSaved, CostSavedUSD: total.costSaved}
	rep.LatencyMS = Latency{P50: total.lat.quantile(0.50), P95: total.lat.quantile(0.95)}
	if total.requests > 0 {
		rep.LatencyMS.Avg = float64(total.latencySum) / float64(total.requests)
	}
	fillProviders(rep, providers)
	fillModels(rep, models)
	return nil
}

func (s *modelSums) merge(o *modelSums) {
	s.requests += o.requests
	s.errors += o.errors
	s.promptTokens += o.promptTokens
	s.completionTokens += o.completionTokens
	s.tokens += o.tokens
	s.cost += o.cost
	s.cacheHits += o.cacheHits
	s.tokensSaved += o.tokensSaved
	s.costSaved += o.costSaved
	s.latencySum += o.latencySum
	s.lat.add(&o.lat)
}

func mergeInto(m map[string]*modelSums, name string, s *modelSums) {
	t := m[name]
	if t == nil {
		t = &modelSums{}
		m[name] = t
	}
	t.merge(s)
}

// rate is n/of, 0 when of is 0.
func rate(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

func fillProviders(rep *Report, providers map[string]*modelSums) {
	rep.CostByProvider = make([]ProviderCost, 0, len(providers))
	rep.ErrorRateByProvider = make([]ProviderErrors, 0, len(providers))
	for name, s := range providers {
		rep.CostByProvider = append(rep.CostByProvider, ProviderCost{Provider: name, CostUSD: s.cost, Requests: s.requests})
		rep.ErrorRateByProvider = append(rep.ErrorRateByProvider,
			ProviderErrors{Provider: name, Requests: s.requests, Errors: s.errors, ErrorRate: rate(s.errors, s.requests)})
	}
	slices.SortFunc(rep.CostByProvider, func(a, b ProviderCost) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Provider, b.Provider))
	})
	slices.SortFunc(rep.ErrorRateByProvider, func(a, b ProviderErrors) int {
		return cmp.Or(cmp.Compare(b.ErrorRate, a.ErrorRate), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Provider, b.Provider))
	})
	rep.CostByProvider = rep.CostByProvider[:min(len(rep.CostByProvider), MaxListed)]
	rep.ErrorRateByProvider = rep.ErrorRateByProvider[:min(len(rep.ErrorRateByProvider), MaxListed)]
}

func fillModels(rep *Report, models map[string]*modelSums) {
	all := make([]ModelUsage, 0, len(models))
	for name, s := range models {
		all = append(all, ModelUsage{Model: name, Requests: s.requests, Tokens: s.tokens, CostUSD: s.cost})
	}
	slices.SortFunc(all, func(a, b ModelUsage) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Model, b.Model))
	})
	rep.CostByModel = slices.Clone(all[:min(len(all), MaxListed)])
	slices.SortFunc(all, func(a, b ModelUsage) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(b.CostUSD, a.CostUSD), strings.Compare(a.Model, b.Model))
	})
	rep.TopModels = all[:min(len(all), TopN)]
}

// readVolume fills rep.Volume with every bucket of w.
func (r *Rollups) readVolume(ctx context.Context, grain int64, w Window, rep *Report) error {
	n := int(w.To.Sub(w.From) / w.Bucket)
	rep.Volume = make([]VolumePoint, n)
	for i := range rep.Volume {
		rep.Volume[i].Start = w.From.Add(time.Duration(i) * w.Bucket).UTC()
	}
	from, step := sqlstore.Micros(w.From), w.Bucket.Microseconds()
	rows, err := r.db.Query(ctx, "SELECT bucket_start, "+sumExpr("requests")+", "+sumExpr("errors")+", "+
		sumExpr("tokens")+", "+sumExpr("cost")+
		" FROM analytics_models WHERE grain = ? AND bucket_start >= ? AND bucket_start < ? GROUP BY bucket_start",
		grain, from, sqlstore.Micros(w.To))
	if err != nil {
		return fmt.Errorf("analytics: report: volume: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			start int64
			p     VolumePoint
		)
		if err := rows.Scan(&start, &p.Requests, &p.Errors, &p.Tokens, &p.CostUSD); err != nil {
			return fmt.Errorf("analytics: report: volume: %w", err)
		}
		i := int((start - from) / step)
		if i < 0 || i >= n {
			continue
		}
		v := &rep.Volume[i]
		v.Requests += p.Requests
		v.Errors += p.Errors
		v.Tokens += p.Tokens
		v.CostUSD += p.CostUSD
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("analytics: report: volume: %w", err)
	}
	return nil
}

// unionOf is the FROM clause of cols (a select list) over the rows of
// table in segs, and its arguments.
func unionOf(table, cols string, segs []segment) (string, []any) {
	parts := make([]string, len(segs))
	args := make([]any, 0, 3*len(segs)+1)
	for i, s := range segs {
		parts[i] = "SELECT " + cols + " FROM " + table + " WHERE grain = ? AND bucket_start >= ? AND bucket_start < ?"
		args = append(args, s.grain, s.from, s.to)
	}
	return " FROM (" + strings.Join(parts, " UNION ALL ") + ") AS s", args
}

// segment is a range [from, to) of one grain's rows.
type segment struct{ grain, from, to int64 }

// segments covers [from, to), multiples of grains[0], with the coarsest
// rows that fit: rows of the last grain for its whole buckets inside the
// window, and the finer grains' for the rest either side. grains are finest
// first, each a multiple of the one before.
func segments(grains []int64, from, to int64) []segment {
	if from >= to {
		return nil
	}
	last := len(grains) - 1
	if last == 0 {
		return []segment{{grains[0], from, to}}
	}
	step := grains[last] * 1e6
	c1, c2 := -floorDiv(-from, step)*step, floorDiv(to, step)*step // from rounded up, to down
	if c1 >= c2 {
		return segments(grains[:last], from, to)
	}
	segs := segments(grains[:last], from, c1)
	segs = append(segs, segment{grains[last], c1, c2})
	return append(segs, segments(grains[:last], c2, to)...)
}

// principal is a key's or a user's sums over a window.
type principal struct {
	id, mask         string
	requests, tokens int64
	cost             float64
}

// top reads the TopN keys or users of segs by requests (then cost, then
// id).
func (r *Rollups) top(ctx context.Context, t principalTable, segs []segment) ([]principal, error) {
	cols, mask := t.idColumn+" AS id, requests, tokens, cost", "''"
	if t.mask {
		cols, mask = cols+", key_mask", "MAX(key_mask)"
	}
	from, args := unionOf(t.name, cols, segs)
	rows, err := r.db.Query(ctx, "SELECT id, "+mask+", "+sumExpr("requests")+" AS n_requests, "+sumExpr("tokens")+", "+
		sumExpr("cost")+" AS n_cost"+from+" GROUP BY id ORDER BY n_requests DESC, n_cost DESC, id LIMIT ?",
		append(args, TopN)...)
	if err != nil {
		return nil, fmt.Errorf("analytics: report: top %s: %w", t.name, err)
	}
	defer rows.Close()
	out := []principal{}
	for rows.Next() {
		var p principal
		if err := rows.Scan(&p.id, &p.mask, &p.requests, &p.tokens, &p.cost); err != nil {
			return nil, fmt.Errorf("analytics: report: top %s: %w", t.name, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analytics: report: top %s: %w", t.name, err)
	}
	return out, nil
}
