package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/store/rediskv"
)

// Environment variables naming the shared test servers.
const (
	DatabaseURLEnv = "SVC_TEST_DATABASE_URL"
	RedisURLEnv    = "SVC_TEST_REDIS_URL"
)

// setupTimeout bounds the set-up and clean-up calls to the shared servers.
const setupTimeout = 30 * time.Second

// PostgresURL returns a PostgreSQL URL for a schema of its own: it creates a
// schema with a random name on the server named by SVC_TEST_DATABASE_URL,
// returns that URL with search_path set to the schema (pgx sends it as a
// run-time parameter on every connection), and drops the schema with
// everything in it when the test ends. Without SVC_TEST_DATABASE_URL the
// test is skipped.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(DatabaseURLEnv)
	if base == "" {
		t.Skip("set " + DatabaseURLEnv + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run PostgreSQL tests")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL, got %q (%v)", DatabaseURLEnv, base, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", DatabaseURLEnv, err)
	}
	admin.SetMaxOpenConns(1)
	schema := "svctest_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		admin.Close()
		t.Fatalf("create test schema on %s: %v", DatabaseURLEnv, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RedisKV returns a rediskv.KV on the server named by SVC_TEST_REDIS_URL
// whose keys and channels carry a random prefix, and deletes every key under
// that prefix when the test ends. The KV does not own its client (the helper
// closes it after clean-up), so the test may Close the KV or not. Without
// SVC_TEST_REDIS_URL the test is skipped.
func RedisKV(t testing.TB) *rediskv.KV {
	t.Helper()
	raw := os.Getenv(RedisURLEnv)
	if raw == "" {
		t.Skip("set " + RedisURLEnv + "=redis://127.0.0.1:6379/0 to run Redis tests")
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", RedisURLEnv, err)
	}
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		t.Fatalf("ping %s: %v", RedisURLEnv, err)
	}
	prefix := "svctest:" + randomHex(8) + ":"
	kv := rediskv.New(client, prefix)
	t.Cleanup(func() {
		defer client.Close()
		if err := kv.Close(); err != nil {
			t.Errorf("close test KV: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		var keys []string
		iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scan test keys %s*: %v", prefix, err)
			return
		}
		for len(keys) > 0 {
			n := min(len(keys), 1000)
			if err := client.Del(ctx, keys[:n]...).Err(); err != nil {
				t.Errorf("delete test keys %s*: %v", prefix, err)
				return
			}
			keys = keys[n:]
		}
	})
	return kv
}

// randomHex returns 2n random lowercase hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}
