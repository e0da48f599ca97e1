package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store/memkv"
)

// counterBatch is how many rows one statement of SaveCounters carries.
const counterBatch = 300

// Counters is memkv's Durable store on SQL: the kv_counters table, one row
// per counter (its key's bytes, value, expiry in Unix microseconds, 0 for
// none). The in-process KV is its only writer.
type Counters struct {
	db *DB
}

// NewCounters returns the durable counters over db.
func NewCounters(db *DB) *Counters { return &Counters{db: db} }

// LoadCounters returns every counter that has not expired at now.
func (c *Counters) LoadCounters(ctx context.Context, now time.Time) ([]memkv.Counter, error) {
	rows, err := c.db.Query(ctx, `SELECT key, value, expires_at FROM kv_counters WHERE expires_at = 0 OR expires_at > ?`,
		Micros(now))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: load counters: %w", err)
	}
	defer rows.Close()
	var out []memkv.Counter
	for rows.Next() {
		var (
			key     []byte
			cnt     memkv.Counter
			expires int64
		)
		if err := rows.Scan(&key, &cnt.Value, &expires); err != nil {
			return nil, fmt.Errorf("sqlstore: load counters: %w", err)
		}
		cnt.Key = string(key)
		if expires != 0 {
			cnt.Expires = FromMicros(expires)
		}
		out = append(out, cnt)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: load counters: %w", err)
	}
	return out, nil
}

// SaveCounters replaces the rows of set, deletes those of gone and those
// expired at now, in one transaction.
func (c *Counters) SaveCounters(ctx context.Context, set []memkv.Counter, gone []string, now time.Time) error {
	tx, err := c.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: save counters: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for len(set) > 0 {
		batch := set[:min(len(set), counterBatch)]
		set = set[len(batch):]
		args := make([]any, 0, 3*len(batch))
		for _, cnt := range batch {
			var expires int64
			if !cnt.Expires.IsZero() {
				expires = Micros(cnt.Expires)
			}
			args = append(args, []byte(cnt.Key), cnt.Value, expires)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO kv_counters (key, value, expires_at) VALUES `+
			Placeholders(len(batch), "(?, ?, ?)")+
			` ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, args...); err != nil {
			return fmt.Errorf("sqlstore: save counters: %w", err)
		}
	}
	for len(gone) > 0 {
		batch := gone[:min(len(gone), counterBatch)]
		gone = gone[len(batch):]
		args := make([]any, len(batch))
		for i, k := range batch {
			args[i] = []byte(k)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM kv_counters WHERE key IN (`+Placeholders(len(batch), "?")+`)`, args...); err != nil {
			return fmt.Errorf("sqlstore: save counters: delete: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM kv_counters WHERE expires_at > 0 AND expires_at <= ?`, Micros(now)); err != nil {
		return fmt.Errorf("sqlstore: save counters: expire: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: save counters: commit: %w", err)
	}
	return nil
}

// Placeholders returns n copies of one ("?" or a row such as "(?, ?)"),
// comma-separated, for IN lists and multi-row INSERTs.
func Placeholders(n int, one string) string {
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}

var _ memkv.Durable = (*Counters)(nil)
