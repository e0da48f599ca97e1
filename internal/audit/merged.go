package audit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// hotScan bounds the hot-tier entries a merged read looks at: the newest
// entries not yet written (normally well under a second of traffic; after a
// database outage, the newest hotScan of the backlog).
const hotScan = 5000

// exactOffset bounds the offset+limit up to which an offset page merges
// unwritten entries exactly; past it the page is the long-term store's,
// with the unwritten entries (which are the newest) counted in the total.
// Cursor paging (before=) is exact at any depth.
const exactOffset = 5000

// HotReader is what a merged read needs of the hot tier.
type HotReader interface {
	StreamUnacked(ctx context.Context, key, group string, limit int) ([]store.StreamEntry, error)
}

// Reader answers GET /api/vas/logs and /api/vas/metrics over both tiers:
// the long-term store, and the hot-tier entries the bridge has not written
// yet, so an entry is visible as soon as its request ended, whether or not
// it was written. Entries are newest first and each appears once.
type Reader struct {
	Store Store
	Hot   HotReader // nil: the long-term store alone
}

// unwritten returns the hot-tier entries matching q that the long-term
// store does not hold, newest first.
func (r *Reader) unwritten(ctx context.Context, q Query) ([]Record, error) {
	if r.Hot == nil {
		return nil, nil
	}
	es, err := r.Hot.StreamUnacked(ctx, HotLogKey, BridgeGroup, hotScan)
	if err != nil {
		return nil, err
	}
	var (
		recs []Record
		ids  []string
		seen = make(map[string]bool, len(es))
	)
	for _, e := range es {
		rec, err := RecordFromJSON(e.Value)
		if err != nil || seen[rec.RequestID] || !matches(rec, q) {
			continue
		}
		seen[rec.RequestID] = true
		recs = append(recs, rec)
		ids = append(ids, rec.RequestID)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	stored, err := r.Store.StoredIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	recs = slices.DeleteFunc(recs, func(rec Record) bool { return stored[rec.RequestID] })
	slices.SortFunc(recs, newestFirst)
	return recs, nil
}

// newestFirst orders records by descending time, then request id.
func newestFirst(a, b Record) int {
	if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
		return c
	}
	return cmp.Compare(b.RequestID, a.RequestID)
}

// matches reports whether rec passes q's filters (Limit and Offset aside),
// as the SQL store's conditions do.
func matches(rec Record, q Query) bool {
	switch {
	case !q.Since.IsZero() && rec.Timestamp.Before(q.Since),
		!q.Until.IsZero() && !rec.Timestamp.Before(q.Until),
		q.Provider != "" && rec.Provider != q.Provider,
		q.ProviderPrefix != "" && !strings.HasPrefix(rec.Provider, q.ProviderPrefix),
		q.Model != "" && rec.Model != q.Model,
		q.KeyID != "" && rec.KeyID != q.KeyID,
		q.UserID != "" && rec.UserID != q.UserID,
		q.ConversationID != "" && rec.ConversationID != q.ConversationID,
		q.Status != 0 && rec.Status != q.Status,
		q.Outcome == OutcomeSuccess && !rec.Success,
		q.Outcome == OutcomeError && rec.Success:
		return false
	}
	if c := q.Before; c != nil {
		if newestFirst(rec, Record{Timestamp: c.Timestamp, RequestID: c.RequestID}) <= 0 {
			return false
		}
	}
	return true
}

// Locate returns the cursor of the entry requestID, in either tier.
func (r *Reader) Locate(ctx context.Context, requestID string) (Cursor, error) {
	c, err := r.Store.Locate(ctx, requestID)
	if !errors.Is(err, store.ErrNotFound) || r.Hot == nil {
		return c, err
	}
	es, herr := r.Hot.StreamUnacked(ctx, HotLogKey, BridgeGroup, hotScan)
	if herr != nil {
		return Cursor{}, herr
	}
	for _, e := range es {
		if !bytes.Contains(e.Value, []byte(requestID)) {
			continue
		}
		if rec, err := RecordFromJSON(e.Value); err == nil && rec.RequestID == requestID {
			return Cursor{Timestamp: rec.Timestamp, RequestID: requestID}, nil
		}
	}
	return Cursor{}, store.ErrNotFound
}

// Page answers a query over both tiers, from the entry before (a request
// id; "" for the newest): an unknown before is InvalidRequest naming it.
func (r *Reader) Page(ctx context.Context, q Query, before string) (Page, error) {
	if before != "" {
		c, err := r.Locate(ctx, before)
		if errors.Is(err, store.ErrNotFound) {
			return Page{}, apierr.BadParam("before", "before names no entry: %q", before)
		}
		if err != nil {
			return Page{}, apierr.Wrap(apierr.Internal, "store_error", "could not read the logs", err)
		}
		q.Before = &c
	}
	return r.Logs(ctx, q)
}

// Logs answers a query over both tiers.
func (r *Reader) Logs(ctx context.Context, q Query) (Page, error) {
	hot, err := r.unwritten(ctx, q)
	if err != nil {
		return Page{}, apierr.Wrap(apierr.Unavailable, "hot_tier_unavailable", "could not read the hot log tier", err)
	}
	sq := q
	exact := len(hot) > 0 && q.Offset+q.Limit <= exactOffset
	if exact {
		sq.Offset, sq.Limit = 0, q.Offset+q.Limit
	}
	recs, total, err := r.Store.QueryLogs(ctx, sq)
	if err != nil {
		return Page{}, apierr.Wrap(apierr.Internal, "store_error", "could not read the logs", err)
	}
	total += int64(len(hot))
	if exact {
		// An entry the bridge wrote after the hot tier was read is in both
		// lists: it is listed once (and counted once).
		var dups int
		recs, dups = mergeNewest(hot, recs)
		total -= int64(dups)
		recs = recs[min(q.Offset, len(recs)):min(q.Offset+q.Limit, len(recs))]
	}
	p := Page{Success: true, Total: total, Limit: q.Limit, Offset: q.Offset, Data: make([]json.RawMessage, len(recs))}
	for i, rec := range recs {
		p.Data[i] = rec.Entry
	}
	if len(recs) == q.Limit && len(recs) > 0 {
		p.NextBefore = recs[len(recs)-1].RequestID
	}
	return p, nil
}

// mergeNewest merges two newest-first lists, keeping one record per
// request id, and returns how many it left out.
func mergeNewest(a, b []Record) ([]Record, int) {
	out := make([]Record, 0, len(a)+len(b))
	seen := make(map[string]bool, len(a)+len(b))
	dups := 0
	add := func(r Record) {
		if seen[r.RequestID] {
			dups++
			return
		}
		seen[r.RequestID] = true
		out = append(out, r)
	}
	for len(a) > 0 && len(b) > 0 {
		if newestFirst(a[0], b[0]) <= 0 {
			add(a[0])
			a = a[1:]
		} else {
			add(b[0])
			b = b[1:]
		}
	}
	for _, r := range a {
		add(r)
	}
	for _, r := range b {
		add(r)
	}
	return out, dups
}

// Summary answers GET /api/vas/metrics over both tiers, for entries at or
// after since.
func (r *Reader) Summary(ctx context.Context, since time.Time) (MetricsSummary, error) {
	hot, err := r.unwritten(ctx, Query{Since: since})
	if err != nil {
		return MetricsSummary{}, apierr.Wrap(apierr.Unavailable, "hot_tier_unavailable", "could not read the hot log tier", err)
	}
	sum, err := r.Store.SummarizeLogs(ctx, since)
	if err != nil {
		return MetricsSummary{}, apierr.Wrap(apierr.Internal, "store_error", "could not summarise the logs", err)
	}
	if len(hot) > 0 {
		latency := sum.AvgLatencyMS * float64(sum.TotalRequests)
		for _, rec := range hot {
			sum.TotalRequests++
			if rec.Success {
				sum.Successes++
			}
			latency += float64(rec.LatencyMS)
			sum.TotalTokens += rec.Tokens
			sum.TotalCost += rec.Cost
			sum.Providers = addSorted(sum.Providers, rec.Provider)
			sum.Models = addSorted(sum.Models, rec.Model)
		}
		sum.AvgLatencyMS = latency / float64(sum.TotalRequests)
	}
	return summaryOf(sum), nil
}

// Groups answers Store.GroupLogs over both tiers: the long-term store's
// groups with the unwritten entries added. The store is read before the
// hot tier, so an entry written meanwhile is counted at most once (once
// as a rule; an entry written between the two reads is left out of this
// answer).
func (r *Reader) Groups(ctx context.Context, q Query, bucket time.Duration) ([]Group, error) {
	gs, err := r.Store.GroupLogs(ctx, q, bucket)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "store_error", "could not read the logs", err)
	}
	hot, err := r.unwritten(ctx, q)
	if err != nil {
		return nil, apierr.Wrap(apierr.Unavailable, "hot_tier_unavailable", "could not read the hot log tier", err)
	}
	if len(hot) == 0 {
		return gs, nil
	}
	return addGroups(gs, hot, bucket, q.Limit), nil
}

// addGroups adds recs to the groups gs (GroupLogs' order), in that order
// again and at most limit of them when limit > 0. Groups the store left
// out past limit stay out: limit groups of gs come before each of them.
func addGroups(gs []Group, recs []Record, bucket time.Duration, limit int) []Group {
	type key struct {
		bucket          time.Time
		provider, model string
	}
	at := make(map[key]int, len(gs)+len(recs))
	for i, g := range gs {
		at[key{g.Bucket, g.Provider, g.Model}] = i
	}
	for _, rec := range recs {
		var b time.Time
		if us := bucket.Microseconds(); us > 0 {
			b = time.UnixMicro(floorDiv(rec.Timestamp.UnixMicro(), us) * us).UTC()
		}
		k := key{b, rec.Provider, rec.Model}
		i, ok := at[k]
		if !ok {
			i = len(gs)
			at[k] = i
			gs = append(gs, Group{Bucket: b, Provider: rec.Provider, Model: rec.Model})
		}
		g := &gs[i]
		g.Requests++
		if !rec.Success || rec.Status >= 400 {
			g.Errors++
		}
		g.Cost += rec.Cost
		g.LatencySumMS += rec.LatencyMS
	}
	slices.SortFunc(gs, func(a, b Group) int {
		if c := b.Bucket.Compare(a.Bucket); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Model, b.Model))
	})
	if limit > 0 && len(gs) > limit {
		gs = gs[:limit]
	}
	return gs
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// addSorted inserts v into the sorted set s (empty values are not listed).
func addSorted(s []string, v string) []string {
	if v == "" {
		return s
	}
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

// Query answers GET /api/vas/logs from its query parameters.
func (r *Reader) Query(ctx context.Context, params url.Values, now time.Time) (Page, error) {
	q, before, err := ParseQuery(params, now)
	if err != nil {
		return Page{}, err
	}
	return r.Page(ctx, q, before)
}

// Metrics answers GET /api/vas/metrics from its query parameters.
func (r *Reader) Metrics(ctx context.Context, params url.Values, now time.Time) (MetricsSummary, error) {
	since, err := DaysSince(params, now)
	if err != nil {
		return MetricsSummary{}, err
	}
	return r.Summary(ctx, since)
}
