// Package analytics owns the rollups behind GET /api/analytics and the
// report built from them: request volume over time, cost by provider and
// by model, the semantic cache's hits and savings, top models, users and
// keys, error rate by provider and latency percentiles, for a period (24h,
// 7d, 30d) or a from/to window, without scanning the audit log.
//
// Rollups are sums per time bucket of a grain (minute, hour, day, and week
// for keys and users), kept in three tables (migration 00007_rollups.sql):
// analytics_models per provider/model, with every sum and a latency
// histogram (histogram.go); analytics_keys per key (with its masked
// prefix) and analytics_users per user, with requests, errors, tokens and
// cost. One row per provider/model/key/user and hour would be about one
// row per entry; split dimensions and coarse grains keep a 30-day report
// to about 40 rows per model and 10 per key or user: a report reads the
// coarsest rows that fit its window (segments).
//
// The bridge calls Rollups.Add in the transaction that inserts a batch of
// audit records, with only the records inserted for the first time, so
// each entry is counted once; Rollups.Purge drops minute rows after
// MinuteRetention and the others after the log retention. Rollups.Report
// answers a Window that ParseWindow reads from the query.
//
// wire builds Rollups (it gives Add to the bridge and the Rollups to mgmt,
// which serves the route). analytics imports audit (its Record), apierr
// and sqlstore.
package analytics

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Grains of the rollups, in seconds (the grain column).
const (
	grainMinute int64 = 60
	grainHour   int64 = 3600
	grainDay    int64 = 86400
	grainWeek   int64 = 604800 // keys and users only: 7 days from a Thursday, as the Unix epoch
)

// Grains a record adds to, coarsest last: models, and keys and users. A
// report over hours reads the coarsest rows that fit (segments); a week
// grain would add little to the few model rows of a day.
var (
	modelGrains     = []int64{grainHour, grainDay}
	principalGrains = []int64{grainHour, grainDay, grainWeek}
)

// Rollups maintains and reads the analytics rollups on SQL. It is safe for
// concurrent use, also by several processes on one database.
type Rollups struct {
	db  *sqlstore.DB
	now func() time.Time
}

// NewRollups returns the rollups on db (migrated by sqlstore.Open).
func NewRollups(db *sqlstore.DB) *Rollups { return &Rollups{db: db, now: time.Now} }

// modelKey and principalKey identify rollup rows; principalKey is a key
// id or a user id.
type modelKey struct {
	grain, bucket   int64
	provider, model string
}

type principalKey struct {
	grain, bucket int64
	id            string
}

// modelSums are the sums of an analytics_models row.
type modelSums struct {
	requests, errors, promptTokens, completionTokens, tokens int64
	cost                                                     float64
	cacheHits, tokensSaved                                   int64
	costSaved                                                float64
	latencySum                                               int64
	lat                                                      histogram
}

// principalSums are the sums of an analytics_keys or analytics_users row;
// mask is the key's masked prefix (keys only).
type principalSums struct {
	mask                     string
	requests, errors, tokens int64
	cost                     float64
}

// batch is a batch of records summed per rollup row.
type batch struct {
	models map[modelKey]*modelSums
	keys   map[principalKey]*principalSums
	users  map[principalKey]*principalSums
}

// Add counts recs in the rollups, within tx (the transaction that inserted
// them into audit_logs; nil runs Add in a transaction of its own). Give it
// only the records inserted for the first time: each call adds, so a
// record given twice is counted twice. The batch is summed first, then
// written with one upsert per table and chunk of rows, rows in key order so
// that concurrent writers lock them in the same order and never deadlock.
// Text is escaped as audit's store escapes it (sqlstore.EscapeText). A
// record older than MinuteRetention adds no minute rows (they would be
// purged).
func (r *Rollups) Add(ctx context.Context, tx *sqlstore.Tx, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if tx == nil {
		own, err := r.db.Begin(ctx)
		if err != nil {
			return fmt.Errorf("analytics: add: begin: %w", err)
		}
		defer own.Rollback() //nolint:errcheck // no-op after Commit
		if err := r.Add(ctx, own, recs); err != nil {
			return err
		}
		if err := own.Commit(); err != nil {
			return fmt.Errorf("analytics: add: commit: %w", err)
		}
		return nil
	}
	b := sumBatch(recs, r.now().Add(-MinuteRetention))
	if err := upsertModels(ctx, tx, b.models); err != nil {
		return err
	}
	if err := upsertPrincipals(ctx, tx, keysTable, b.keys); err != nil {
		return err
	}
	return upsertPrincipals(ctx, tx, usersTable, b.users)
}

// sumBatch sums recs per rollup row; records before minuteSince add no
// minute rows. Empty key and user ids add no key or user rows.
func sumBatch(recs []audit.Record, minuteSince time.Time) batch {
	b := batch{
		models: make(map[modelKey]*modelSums),
		keys:   make(map[principalKey]*principalSums),
		users:  make(map[principalKey]*principalSums),
	}
	for i := range recs {
		rec := &recs[i]
		provider, model := sqlstore.EscapeText(rec.Provider), sqlstore.EscapeText(rec.Model)
		keyID, userID := sqlstore.EscapeText(rec.KeyID), sqlstore.EscapeText(rec.UserID)
		mask := sqlstore.EscapeText(rec.KeyMask)
		us := sqlstore.Micros(rec.Timestamp)
		minute := !rec.Timestamp.Before(minuteSince)
		for _, g := range modelGrains {
			b.addModel(modelKey{g, bucketOf(us, g), provider, model}, rec)
		}
		if minute {
			b.addModel(modelKey{grainMinute, bucketOf(us, grainMinute), provider, model}, rec)
		}
		for _, g := range principalGrains {
			if keyID != "" {
				b.addPrincipal(b.keys, principalKey{g, bucketOf(us, g), keyID}, rec, mask)
			}
			if userID != "" {
				b.addPrincipal(b.users, principalKey{g, bucketOf(us, g), userID}, rec, "")
			}
		}
		if minute && keyID != "" {
			b.addPrincipal(b.keys, principalKey{grainMinute, bucketOf(us, grainMinute), keyID}, rec, mask)
		}
		if minute && userID != "" {
			b.addPrincipal(b.users, principalKey{grainMinute, bucketOf(us, grainMinute), userID}, rec, "")
		}
	}
	return b
}

// bucketOf is the start of the grain's bucket holding us, Unix µs.
func bucketOf(us, grain int64) int64 { return floorDiv(us, grain*1e6) * grain * 1e6 }

func isError(rec *audit.Record) bool { return rec.Status >= 400 || !rec.Success }

func (b batch) addModel(k modelKey, rec *audit.Record) {
	s := b.models[k]
	if s == nil {
		s = &modelSums{}
		b.models[k] = s
	}
	s.requests++
	if isError(rec) {
		s.errors++
	}
	s.promptTokens += rec.PromptTokens
	s.completionTokens += rec.CompletionTokens
	s.tokens += rec.Tokens
	s.cost += rec.Cost
	if rec.CacheHit {
		s.cacheHits++
	}
	s.tokensSaved += rec.TokensSaved
	s.costSaved += rec.CostSaved
	s.latencySum += rec.LatencyMS
	s.lat[latencyBucket(rec.LatencyMS)]++
}

func (b batch) addPrincipal(m map[principalKey]*principalSums, k principalKey, rec *audit.Record, mask string) {
	s := m[k]
	if s == nil {
		s = &principalSums{}
		m[k] = s
	}
	if mask != "" {
		s.mask = mask
	}
	s.requests++
	if isError(rec) {
		s.errors++
	}
	s.tokens += rec.Tokens
	s.cost += rec.Cost
}

// modelSumColumns are analytics_models' sum columns, in modelArgs order.
var modelSumColumns = append([]string{"requests", "errors", "prompt_tokens", "completion_tokens", "tokens",
	"cost", "cache_hits", "tokens_saved", "cost_saved", "latency_sum_ms"}, latencyColumns...)

// principalTable describes analytics_keys or analytics_users.
type principalTable struct {
	name, idColumn string
	mask           bool // has key_mask
}

var (
	keysTable  = principalTable{"analytics_keys", "key_id", true}
	usersTable = principalTable{"analytics_users", "user_id", false}
)

var principalSumColumns = []string{"requests", "errors", "tokens", "cost"}

// maxParams bounds the parameters of one statement: under SQLite's default
// limit (32766) and PostgreSQL's (65535).
const maxParams = 30000

func upsertModels(ctx context.Context, tx *sqlstore.Tx, rows map[modelKey]*modelSums) error {
	keys := make([]modelKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b modelKey) int {
		return cmp.Or(cmp.Compare(a.grain, b.grain), cmp.Compare(a.bucket, b.bucket),
			strings.Compare(a.provider, b.provider), strings.Compare(a.model, b.model))
	})
	cols := append([]string{"grain", "bucket_start", "provider", "model"}, modelSumColumns...)
	return upsertChunks(ctx, tx, "analytics_models", cols, 4, nil, len(keys), func(args []any, i int) []any {
		k, s := keys[i], rows[keys[i]]
		args = append(args, k.grain, k.bucket, k.provider, k.model, s.requests, s.errors, s.promptTokens,
			s.completionTokens, s.tokens, s.cost, s.cacheHits, s.tokensSaved, s.costSaved, s.latencySum)
		for _, c := range s.lat {
			args = append(args, c)
		}
		return args
	})
}

func upsertPrincipals(ctx context.Context, tx *sqlstore.Tx, t principalTable, rows map[principalKey]*principalSums) error {
	keys := make([]principalKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b principalKey) int {
		return cmp.Or(cmp.Compare(a.grain, b.grain), cmp.Compare(a.bucket, b.bucket), strings.Compare(a.id, b.id))
	})
	cols := []string{"grain", "bucket_start", t.idColumn}
	var set []string
	if t.mask {
		cols = append(cols, "key_mask")
		// A row keeps the last non-empty mask it was given.
		set = []string{"key_mask = CASE WHEN excluded.key_mask = '' THEN " + t.name + ".key_mask ELSE excluded.key_mask END"}
	}
	cols = append(cols, principalSumColumns...)
	return upsertChunks(ctx, tx, t.name, cols, 3, set, len(keys), func(args []any, i int) []any {
		k, s := keys[i], rows[keys[i]]
		args = append(args, k.grain, k.bucket, k.id)
		if t.mask {
			args = append(args, s.mask)
		}
		return append(args, s.requests, s.errors, s.tokens, s.cost)
	})
}

// upsertChunks writes n rows into table, as many per statement as
// maxParams allows: cols are the columns, the first nKey of them the
// primary key; the others add up on conflict (sum columns), but those set
// assigns. appendRow appends row i's values in cols order.
func upsertChunks(ctx context.Context, tx *sqlstore.Tx, table string, cols []string, nKey int, set []string,
	n int, appendRow func(args []any, i int) []any) error {
	per := maxParams / len(cols)
	args := make([]any, 0, min(n, per)*len(cols))
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		args = args[:0]
		for i := start; i < end; i++ {
			args = appendRow(args, i)
		}
		if _, err := tx.Exec(ctx, upsertQuery(table, cols, nKey, set, end-start), args...); err != nil {
			return fmt.Errorf("analytics: add to %s: %w", table, err)
		}
	}
	return nil
}

// upsertQuery is the INSERT … ON CONFLICT DO UPDATE of rows rows (SQLite
// 3.24 and later, PostgreSQL 9.5 and later).
func upsertQuery(table string, cols []string, nKey int, set []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	b.WriteString(sqlstore.Placeholders(rows, "("+sqlstore.Placeholders(len(cols), "?")+")"))
	b.WriteString(" ON CONFLICT (" + strings.Join(cols[:nKey], ", ") + ") DO UPDATE SET ")
	assigned := make(map[string]bool, len(set))
	for i, s := range set {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
		name, _, _ := strings.Cut(s, " ")
		assigned[name] = true
	}
	first := len(set) == 0
	for _, c := range cols[nKey:] {
		if assigned[c] {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(c + " = " + table + "." + c + " + excluded." + c)
	}
	return b.String()
}

// Purge deletes the rollup rows past their retention at now: minute rows
// whose bucket ended MinuteRetention (48 h) ago, hour, day and week rows whose
// bucket ended retention ago (the log retention, SVC_LOG_RETENTION_DAYS;
// retention <= 0 keeps them). It returns how many rows it deleted.
func (r *Rollups) Purge(ctx context.Context, now time.Time, retention time.Duration) (int64, error) {
	type cut struct {
		grain int64
		keep  time.Duration
	}
	cuts := []cut{{grainMinute, MinuteRetention}}
	if retention > 0 {
		cuts = append(cuts, cut{grainHour, retention}, cut{grainDay, retention}, cut{grainWeek, retention})
	}
	var deleted int64
	for _, table := range []string{"analytics_models", "analytics_keys", "analytics_users"} {
		for _, c := range cuts {
			// A bucket goes once its end, bucket_start + grain, is at or
			// before now - keep.
			last := sqlstore.Micros(now.Add(-c.keep)) - c.grain*1e6
			res, err := r.db.Exec(ctx, "DELETE FROM "+table+" WHERE grain = ? AND bucket_start <= ?", c.grain, last)
			if err != nil {
				return deleted, fmt.Errorf("analytics: purge %s: %w", table, err)
			}
			if n, err := res.RowsAffected(); err == nil {
				deleted += n
			}
		}
	}
	return deleted, nil
}
