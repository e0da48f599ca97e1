// Package store defines the hot-state key-value interface (KV) shared by every
// component and the sentinel errors of all stores. Durable record interfaces are
// owned by the packages that consume them (auth, keyvault, audit); their SQL
// implementation lives in store/sqlstore, the KV implementations in store/memkv
// and store/rediskv, and one conformance suite per interface in store/storetest.
//
// Any internal package may import store; store imports nothing of svc.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned when a key or record does not exist (or has expired).
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a record with the same identity already exists.
var ErrConflict = errors.New("store: conflict")

// KV holds hot state: counters, cache entries, the hot log tier, health figures
// and config-change notifications. It may be flushed at any time without losing
// a record. Implementations: memkv (in-process) and rediskv (Redis).
//
// A zero ttl means "no expiry". Keys are namespaced by the implementation's
// prefix, so tests and tenants sharing one server do not collide.
type KV interface {
	// Get returns the value at key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value at key with the given ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes keys; missing keys are not an error.
	Delete(ctx context.Context, keys ...string) error
	// IncrBy adds delta to the integer at key atomically and returns the new
	// value. A missing key counts as 0; ttl is applied when the key is created.
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)

	// Window admits cost units into the sliding window at key when the units
	// counted within the last window plus cost stay ≤ limit, atomically across
	// every process sharing the store. Refused costs are not counted. A unit
	// counts from its admission until window later, exactly (no
	// approximation); the store keeps one entry per admitted call, so its
	// memory is bounded by the calls admitted within one window. A cost of 0
	// counts nothing and reports the window's state; a negative cost is an
	// error. A key used for a window must not be used by other operations
	// (implementations may store it differently).
	Window(ctx context.Context, key string, window time.Duration, limit, cost int64) (WindowResult, error)
	// Reserve adds amount to the integer counter at key when the result stays
	// ≤ cap (cap ≤ 0: no cap), atomically, and returns whether it did and the
	// counter's value after. The cap is checked only for a positive amount:
	// zero and negative amounts (settlements, refunds) always apply. A missing
	// key counts as 0; ttl applies on creation (≤ 0: no expiry), and a refused
	// reservation does not create the key.
	Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (ok bool, total int64, err error)

	// AppendLog appends values, in order, to the time-ordered log at key and
	// then trims it to lim: entries older than lim.MaxAge are dropped, and the
	// oldest beyond lim.MaxLen (approximately, on Redis). The log as a whole
	// expires MaxAge after the last append. Zero limits do not trim.
	AppendLog(ctx context.Context, key string, lim LogLimit, values ...[]byte) error
	// ReadLog returns up to limit entries appended at or after since, oldest first.
	ReadLog(ctx context.Context, key string, since time.Time, limit int) ([][]byte, error)

	// Publish sends msg to every current subscriber of channel, in every process
	// sharing the store.
	Publish(ctx context.Context, channel string, msg []byte) error
	// Subscribe starts receiving messages published on channel. Messages sent
	// while a slow subscriber's buffer is full may be dropped; consumers that
	// need certainty pair notifications with a TTL.
	Subscribe(ctx context.Context, channel string) (Subscription, error)

	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
	// Close releases connections and stops subscriptions.
	Close() error
}

// WindowResult is the state of a sliding window after KV.Window.
type WindowResult struct {
	Allowed bool  // the cost was admitted
	Used    int64 // units counted in the window (after admission when Allowed)
	Limit   int64
	// ResetIn is the time until the oldest counted unit leaves the window
	// (0 when the window is empty).
	ResetIn time.Duration
}

// LogLimit bounds a KV log by age and by number of entries.
type LogLimit struct {
	MaxAge time.Duration
	MaxLen int
}

// Subscription is a live subscription to one channel.
type Subscription interface {
	// C delivers messages; it is closed when the subscription ends.
	C() <-chan []byte
	// Close ends the subscription.
	Close() error
}
