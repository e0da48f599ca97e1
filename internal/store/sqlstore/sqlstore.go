// Package sqlstore is the shared plumbing of svc's SQL record stores on
// SQLite (modernc.org/sqlite, pure Go: the embedded default) and PostgreSQL
// (pgx): Open picks the dialect from the URL and applies the schema (one
// sequence of embedded, numbered goose migrations per dialect, for every
// domain's tables); DB runs statements written once with ? placeholders,
// rebound to $n for PostgreSQL (Exec, Query, QueryRow, Begin; Prepare for a
// statement run many times); errors are
// classified by driver code (IsUniqueViolation, IsDataError); times convert
// to the stored form (Micros, FromMicros); text a database cannot hold is
// escaped (EscapeText, EscapeJSON, ASCIIText, ASCIIJSON).
//
// The record stores themselves live beside the interfaces their domains
// define: auth.SQLKeyStore, keyvault.SQLStore, audit.SQLStore,
// route.SQLConfigStore, each over a *DB. sqlstore imports no domain package
// (internal/archtest holds it to that), so a new domain adds its SQL in its
// own package and its tables as a migration here. sqlstore also keeps the
// in-process KV's durable counters (Counters, memkv.Durable on SQL), the
// one store of a store package's own.
//
// Times are stored as Unix microseconds (BIGINT) and read back as UTC
// time.Time values: precision beyond the microsecond is dropped.
//
// The domains' SQL implementations, the wiring (internal/wire) and tests
// import sqlstore.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect names, as Dialect returns them.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// sqliteBusyTimeout is how long an SQLite writer waits for another writer's
// lock before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 10 * time.Second

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// DB is a connection pool to one SQLite or PostgreSQL database holding svc's
// records. All methods are safe for concurrent use.
type DB struct {
	db      *sql.DB
	dialect string
}

// Open connects to the database at url and applies pending migrations.
//
// url is postgres://… or postgresql://… for PostgreSQL (any pgx connection
// parameter, e.g. search_path, may be given in the query), or for SQLite
// sqlite:///abs/path.db, sqlite://relative/path.db, a bare file path, or
// ":memory:" (one connection, gone when closed). A new SQLite database file
// is created 0600 (its -wal and -shm files follow its mode); an existing
// file keeps its mode. SQLite databases run in WAL
// mode with a busy timeout, foreign keys on and write transactions that take
// the write lock at BEGIN, so concurrent writers wait instead of failing.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenWith(ctx, url, Options{})
}

// Options tune a connection pool.
type Options struct {
	// MaxConns bounds the pool's open connections to PostgreSQL (0:
	// DefaultMaxConns). A request waits for a connection rather than
	// opening one past the bound, so a burst of requests cannot take the
	// database past its own connection limit (max_connections, shared by
	// every replica). SQLite pools are sized by Open.
	MaxConns int
}

// DefaultMaxConns is the PostgreSQL pool bound of a process. It does not
// grow with the host's CPUs: the bound exists for the database, whose
// max_connections (100 by default) every replica shares; the request path
// reads keys from a cache, so a few connections serve many cores.
const DefaultMaxConns = 10

// pgIdleTime is how long an idle PostgreSQL connection is kept: a burst's
// connections are given back to the database when it has passed.
const pgIdleTime = 5 * time.Minute

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, o Options) (*DB, error) {
	dialect, dsn, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	driver := "pgx"
	if dialect == DialectSQLite {
		driver = "sqlite"
		if err := createSQLiteFile(dsn); err != nil {
			return nil, err
		}
	}
	sqldb, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open %s: %w", dialect, err)
	}
	if dialect == DialectPostgres {
		n := o.MaxConns
		if n <= 0 {
			n = DefaultMaxConns
		}
		sqldb.SetMaxOpenConns(n)
		sqldb.SetMaxIdleConns(n)
		sqldb.SetConnMaxIdleTime(pgIdleTime)
	}
	if dialect == DialectSQLite {
		if dsn == ":memory:" || strings.HasPrefix(dsn, ":memory:?") {
			// Every connection to :memory: is its own database: keep one.
			sqldb.SetMaxOpenConns(1)
			sqldb.SetMaxIdleConns(1)
			sqldb.SetConnMaxLifetime(0)
			sqldb.SetConnMaxIdleTime(0)
		} else {
			n := max(4, runtime.GOMAXPROCS(0))
			sqldb.SetMaxOpenConns(n)
			sqldb.SetMaxIdleConns(n)
		}
	}
	d := &DB{db: sqldb, dialect: dialect}
	if err := d.Ping(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	if err := d.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	return d, nil
}

// sqliteFileMode is the mode of a database file Open creates: it holds key
// hashes, sealed provider keys and the audit log. SQLite gives the -wal and
// -shm files the database file's mode.
const sqliteFileMode = 0o600

// createSQLiteFile creates the database file of dsn, empty (an empty file is
// an empty SQLite database), with sqliteFileMode when it does not exist yet,
// since SQLite would create it 0644 (less the umask). An existing file keeps
// its mode. In-memory databases and file: URIs are left to the driver.
func createSQLiteFile(dsn string) error {
	path, _, _ := strings.Cut(dsn, "?")
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlstore: create sqlite database: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlstore: create sqlite database: %w", err)
	}
	return nil
}

// parseURL picks the dialect for url and returns the driver's DSN.
func parseURL(raw string) (dialect, dsn string, err error) {
	if raw == "" {
		return "", "", errors.New("sqlstore: empty database url")
	}
	scheme, _, hasScheme := strings.Cut(raw, "://")
	switch {
	case hasScheme && (scheme == "postgres" || scheme == "postgresql"):
		return DialectPostgres, raw, nil
	case hasScheme && scheme == "sqlite":
		u, err := url.Parse(raw)
		if err != nil {
			return "", "", fmt.Errorf("sqlstore: parse sqlite url: %w", err)
		}
		path := u.Host + u.Path
		if path == "" {
			return "", "", errors.New("sqlstore: sqlite url has no path")
		}
		dsn, err := sqliteDSN(path, u.RawQuery)
		return DialectSQLite, dsn, err
	case hasScheme && !strings.ContainsAny(scheme, `/\.`):
		return "", "", fmt.Errorf("sqlstore: unsupported database url scheme %q", scheme)
	default:
		path, query, _ := strings.Cut(raw, "?")
		dsn, err := sqliteDSN(path, query)
		return DialectSQLite, dsn, err
	}
}

// sqliteDSN adds svc's connection settings to path's query; settings the
// caller gave in query win.
func sqliteDSN(path, query string) (string, error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("sqlstore: parse sqlite parameters: %w", err)
	}
	pragmas := map[string]string{
		"busy_timeout": "busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")",
		"journal_mode": "journal_mode(WAL)",
		"foreign_keys": "foreign_keys(1)",
		"synchronous":  "synchronous(NORMAL)",
		// 8 MiB of page cache per connection (SQLite's default is 2 MiB):
		// a batch of the audit bridge on a log of many users and
		// conversations dirties ~1,200 index pages, which overflowed the
		// default cache mid-transaction (pages written out and read back:
		// 34 → 27 µs of CPU per entry, read calls ÷11: BenchmarkDrainPages'
		// varied-after-200k against its -cache-2MiB).
		"cache_size": "cache_size(-8192)",
	}
	for _, p := range q["_pragma"] {
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "(")
		name, _, _ = strings.Cut(name, "=")
		delete(pragmas, strings.TrimSpace(name))
	}
	// The driver's shorthand keys set the same pragmas.
	for key, name := range map[string]string{
		"_busy_timeout": "busy_timeout", "_timeout": "busy_timeout",
		"_journal_mode": "journal_mode", "_journal": "journal_mode",
		"_foreign_keys": "foreign_keys", "_fk": "foreign_keys",
		"_synchronous": "synchronous", "_sync": "synchronous",
	} {
		if q.Has(key) {
			delete(pragmas, name)
		}
	}
	for _, name := range []string{"busy_timeout", "cache_size", "foreign_keys", "journal_mode", "synchronous"} {
		if p, ok := pragmas[name]; ok {
			q.Add("_pragma", p)
		}
	}
	if !q.Has("_txlock") {
		// BEGIN IMMEDIATE: a transaction takes the write lock up front, where
		// the busy timeout applies, instead of failing to upgrade a read lock.
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode(), nil
}

// migrate applies the embedded migrations of d's dialect. On PostgreSQL a
// session advisory lock, keyed by the current schema, serialises processes
// that start together.
func (d *DB) migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations/"+d.dialect)
	if err != nil {
		return fmt.Errorf("sqlstore: migrations: %w", err)
	}
	gd := goose.DialectSQLite3
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if d.dialect == DialectPostgres {
		gd = goose.DialectPostgres
		var schema sql.NullString
		if err := d.db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return fmt.Errorf("sqlstore: migrations: current schema: %w", err)
		}
		if !schema.Valid {
			return errors.New("sqlstore: migrations: no schema selected (check search_path)")
		}
		h := fnv.New64a()
		h.Write([]byte("svc-migrations:" + schema.String))
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(int64(h.Sum64())),
			lock.WithLockTimeout(1, 300),
		)
		if err != nil {
			return fmt.Errorf("sqlstore: migrations: locker: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gd, d.db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("sqlstore: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlstore: migrate %s: %w", d.dialect, err)
	}
	return nil
}

// Dialect returns DialectSQLite or DialectPostgres.
func (d *DB) Dialect() string { return d.dialect }

// Ping reports whether the database answers.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlstore: ping %s: %w", d.dialect, err)
	}
	return nil
}

// Close closes the connection pool.
func (d *DB) Close() error {
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("sqlstore: close: %w", err)
	}
	return nil
}

// q returns query, written with ? placeholders, in d's dialect.
func (d *DB) q(query string) string {
	if d.dialect == DialectPostgres {
		return rebind(query)
	}
	return query
}

// rebind turns ? placeholders outside quoted strings and identifiers into
// PostgreSQL's $1, $2, ….
func rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// IsUniqueViolation reports whether err is a unique or primary key violation,
// by driver error code.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505" // unique_violation
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return true
		}
	}
	return false
}

// Micros is t in the stored form: Unix microseconds.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros is the UTC time of a stored Unix microsecond count.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
