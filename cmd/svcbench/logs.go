package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// `svcbench logs` measures the log store at size: it fills a PostgreSQL
// schema of its own with generated audit entries (logsgen.go), written as
// the bridge writes them (audit.SQLStore.Write in batches, the analytics
// rollups in the same transaction, after Maintain made the monthly
// partitions), then starts `svc serve` with
// SERVICE_TYPE=api-server on that schema and times GET /api/vas/logs (and
// the other read endpoints) through HTTP, handler included (logsquery.go).

// logsOptions are the flags of `svcbench logs`.
type logsOptions struct {
	postgres string
	redis    string
	schema   string // "" : a fresh one, dropped at the end
	keep     bool
	gen      genSpec
	batch    int
	writers  int
	requests int
	warmup   int
	svcBin   string
	json     bool
}

// Defaults of the generated fleet: the figures.
const (
	defaultLogEntries = 1_000_000
	defaultLogDays    = 30
	defaultLogKeys    = 2000
	defaultLogUsers   = 5000
)

func parseLogsFlags(args []string, stderr io.Writer) (*logsOptions, error) {
	fs := flag.NewFlagSet("svcbench logs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &logsOptions{}
	fs.StringVar(&o.postgres, "postgres", os.Getenv("SVC_TEST_DATABASE_URL"), "PostgreSQL server URL (default $SVC_TEST_DATABASE_URL); a schema of its own is created in its database")
	fs.StringVar(&o.redis, "redis", os.Getenv("SVC_TEST_REDIS_URL"), "Redis URL for svc's KV store (default $SVC_TEST_REDIS_URL); keys under a prefix of their own")
	fs.StringVar(&o.schema, "schema", "", "use (and keep) this schema: filled when it holds no entries, else measured as it is")
	fs.BoolVar(&o.keep, "keep", false, "keep the generated schema")
	fs.IntVar(&o.gen.entries, "entries", defaultLogEntries, "entries to generate")
	fs.IntVar(&o.gen.days, "days", defaultLogDays, "days the entries span, ending now")
	fs.IntVar(&o.gen.keys, "keys", defaultLogKeys, "virtual keys of the generated fleet")
	fs.IntVar(&o.gen.users, "users", defaultLogUsers, "end users of the generated fleet")
	seed := fs.Uint64("seed", 12, "seed of the generator")
	fs.IntVar(&o.batch, "batch", 1000, "entries per Write (the bridge's batch)")
	fs.IntVar(&o.writers, "writers", 2, "concurrent writers while filling")
	fs.IntVar(&o.requests, "requests", 50, "measured requests per query")
	fs.IntVar(&o.warmup, "warmup", 5, "unmeasured requests per query first")
	fs.StringVar(&o.svcBin, "svc-bin", "", "prebuilt svc binary (default: go build ./cmd/svc)")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON too")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.gen.seed = *seed
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.postgres == "":
		return nil, errors.New("-postgres (or SVC_TEST_DATABASE_URL) is required")
	case o.redis == "":
		return nil, errors.New("-redis (or SVC_TEST_REDIS_URL) is required: svc's api-server alone needs a shared KV store")
	case o.schema != "" && !schemaRe.MatchString(o.schema):
		return nil, fmt.Errorf("-schema %q: want lower-case letters, digits and _", o.schema)
	case o.gen.entries < 1 || o.gen.days < 1 || o.gen.keys < 1 || o.gen.users < 1:
		return nil, errors.New("-entries, -days, -keys and -users must be at least 1")
	case o.batch < 1 || o.batch > 5000 || o.writers < 1 || o.writers > 16:
		return nil, errors.New("-batch must be 1–5000 and -writers 1–16")
	case o.requests < 1 || o.warmup < 0:
		return nil, errors.New("-requests must be at least 1 and -warmup not negative")
	}
	return o, nil
}

// schemaRe is a schema name svcbench accepts (it is put in SQL as is).
var schemaRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// runLogs is `svcbench logs`.
func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseLogsFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "svcbench logs:", err)
		}
		return 2
	}
	rep, err := benchLogs(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench logs:", err)
		return 1
	}
	return emit(stdout, stderr, o.json, rep, func(w io.Writer) error { writeLogsTable(w, rep); return nil }, rep.Failures)
}

// benchLogs fills the schema (unless it holds entries), then measures.
func benchLogs(ctx context.Context, o *logsOptions, progress io.Writer) (_ *logsReport, err error) {
	schema, drop := o.schema, false
	if schema == "" {
		schema, drop = "svcbench_logs_"+randomHex(4), !o.keep
	}
	cleanup, err := createSchema(ctx, o.postgres, schema, drop)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := cleanup(); cerr != nil {
			fmt.Fprintln(progress, "svcbench logs: warning: dropping the schema:", cerr)
		}
	}()
	dbURL, err := withSearchPath(o.postgres, schema)
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	rep := &logsReport{Schema: schema, Requests: o.requests}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_logs`).Scan(&rep.Entries); err != nil {
		return nil, err
	}
	if rep.Entries == 0 {
		if err := fill(ctx, db, o, rep, progress); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(progress, "svcbench logs: schema %s holds %d entries; measuring them as they are\n", schema, rep.Entries)
	}
	if err := db.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
		WHERE inhparent = 'audit_logs'::regclass`).Scan(&rep.TableBytes); err != nil {
		return nil, err
	}
	queries, err := logQueries(ctx, db, o.requests)
	if err != nil {
		return nil, err
	}
	db.Close()

	gw, err := startGateway(ctx, gatewaySpec{bin: o.svcBin, upstream: "http://127.0.0.1:9/v1", serviceType: "api-server", log: progress,
		extraEnv: []string{"DATABASE_URL=" + dbURL, "KEYSTORE_REDIS_URL=" + o.redis, "SVC_REDIS_PREFIX=svcbench:" + schema + ":",
			"SVC_MASTER_KEY=" + randomHex(32)}})
	if err != nil {
		return nil, err
	}
	defer gw.stop(false)
	measureQueries(ctx, gw.mgmtURL, gw.admin, queries, o.warmup, rep, progress)
	return rep, nil
}

// createSchema creates schema on the server of pgURL unless it exists, and
// returns what drops it (when drop is set) at the end.
func createSchema(ctx context.Context, pgURL, schema string, drop bool) (func() error, error) {
	admin, err := sql.Open("pgx", pgURL)
	if err != nil {
		return nil, err
	}
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	return func() error {
		defer admin.Close()
		if !drop {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`)
		return err
	}, nil
}

// withSearchPath is pgURL with its search_path set to schema.
func withSearchPath(pgURL, schema string) (string, error) {
	u, err := url.Parse(pgURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("-postgres: want a postgres:// URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// fill generates the entries and writes them in batches, o.writers at a
// time, with the analytics rollups in each batch's transaction as the
// bridge writes them (Write's hook is Rollups.Add), then vacuums and
// analyses the table (autovacuum would, some time after such a load; the
// measurement should not depend on when).
func fill(ctx context.Context, db *sqlstore.DB, o *logsOptions, rep *logsReport, progress io.Writer) error {
	st := audit.NewSQLStore(db)
	spec := o.gen
	spec.end = time.Now().UTC()
	if _, err := st.Maintain(ctx, spec.end, 400*24*time.Hour); err != nil {
		return err
	}
	fmt.Fprintf(progress, "svcbench logs: generating %d entries over %d days (%d keys, %d users) into schema %s …\n",
		spec.entries, spec.days, spec.keys, spec.users, rep.Schema)
	g := newGenerator(spec)
	start := time.Now()
	// ANALYZE every 100,000 entries, as autovacuum would on a growing
	// table: without statistics the insert's NOT EXISTS probe plans a
	// sequential scan of the partition per batch, and the fill slows to
	// ~1,000 entries/s by 1,000,000 (on a server with autovacuum off).
	analyze := func() error {
		_, err := db.Exec(ctx, `ANALYZE audit_logs`)
		return err
	}
	written, err := writeAll(ctx, st, analytics.NewRollups(db).Add, g, o.batch, o.writers, analyze, progress)
	if err != nil {
		return err
	}
	rep.Generated, rep.Entries = true, written
	rep.FillSeconds = time.Since(start).Seconds()
	fmt.Fprintf(progress, "svcbench logs: wrote %d entries in %.0fs (%.0f/s); VACUUM ANALYZE …\n",
		written, rep.FillSeconds, float64(written)/rep.FillSeconds)
	vstart := time.Now()
	if _, err := db.Exec(ctx, `VACUUM ANALYZE audit_logs`); err != nil {
		return err
	}
	rep.VacuumSeconds = time.Since(vstart).Seconds()
	return nil
}

// writeAll writes every entry of g with then in each transaction, batch at
// a time from writers goroutines, runs analyze every 100,000 entries, and
// returns how many were new.
func writeAll(ctx context.Context, st *audit.SQLStore, then audit.Inserted, g *generator, batch, writers int, analyze func() error, progress io.Writer) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := g.spec.entries
	batches := (n + batch - 1) / batch
	var (
		next, written atomic.Int64
		wg            sync.WaitGroup
		mu            sync.Mutex
		last          = time.Now() // of the last progress line
	)
	for range writers {
		wg.Go(func() {
			recs := make([]audit.Record, 0, batch)
			for ctx.Err() == nil {
				b := int(next.Add(1)) - 1
				if b >= batches {
					return
				}
				recs = recs[:0]
				for i := b * batch; i < min((b+1)*batch, n); i++ {
					r, err := g.record(i)
					if err != nil {
						cancel(err)
						return
					}
					recs = append(recs, r)
				}
				k, err := st.Write(ctx, recs, then)
				if err != nil {
					cancel(fmt.Errorf("writing batch %d: %w", b, err))
					return
				}
				if w := written.Add(int64(k)); w/100_000 != (w-int64(k))/100_000 {
					mu.Lock()
					now := time.Now()
					fmt.Fprintf(progress, "svcbench logs: %d entries written (%.0f/s since the last line)\n", w, 100_000/now.Sub(last).Seconds())
					err := analyze()
					last = time.Now()
					mu.Unlock()
					if err != nil {
						cancel(fmt.Errorf("analyze: %w", err))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return written.Load(), err
	}
	return written.Load(), nil
}
