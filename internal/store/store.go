// Package store defines the building blocks of hot state (Values, Counters,
// Logs, Bus; KV is all of them with Ping and Close, as the wiring holds the
// one store) and the sentinel errors of all stores. Each consumer defines
// the interface it needs from these blocks; store/memkv and store/rediskv
// implement them all, and store/storetest has one conformance suite per
// block. Durable record interfaces are owned by the domains that consume
// them (auth, keyvault, audit, route), with their SQL beside them over the
// shared plumbing of store/sqlstore.
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

// The hot-state building blocks. Each consumer defines the interface it
// needs, composed of these (or of some of their methods), and receives the
// one store that implements them all: memkv in-process, rediskv on Redis.
// storetest has one conformance suite per block.
//
// Hot state may be flushed at any time without losing a record. A zero ttl
// means "no expiry". Keys are namespaced by the implementation's prefix, so
// tests and tenants sharing one server do not collide.

// Values are plain values with a time-to-live.
type Values interface {
	// Get returns the value at key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value at key with the given ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes keys; missing keys are not an error.
	Delete(ctx context.Context, keys ...string) error
}

// Counters are integer counters and sliding windows changed only by atomic
// operations, so that they hold across every process sharing the store. A
// counter shares the key space of Values: it is a decimal integer value, which
// Get reads (as consumers read spend and figures back) and which a Set of a
// decimal integer starts.
type Counters interface {
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
	// Admit runs several sliding-window admissions and an optional
	// reservation as one atomic operation (one round trip on Redis): all or
	// nothing. Each window is checked as Window checks it and the
	// reservation as AdmitRequest.Reserve describes; when every one has room,
	// every cost is admitted and the amount reserved, else nothing is
	// counted. The result reports each window's state and which refused.
	// Window keys follow Window's rules (not used by other operations) and
	// must be distinct. On Redis Cluster every key of one call must hash to
	// the same slot: give them one hash tag ({…}) in the key or the prefix.
	Admit(ctx context.Context, req AdmitRequest) (AdmitResult, error)
	// Settle applies the end-of-call corrections of an Admit as one atomic
	// operation (one round trip on Redis): it rewrites admitted window
	// entries and adjusts a counter. Each SettleRequest.Windows entry sets
	// the cost of one admitted entry (WindowResult.Entry from Window or
	// Admit) to Cost ≥ 0, keeping its admission time: the window's count
	// changes by the difference and stays exact, and no entry is added. When
	// the entry has already left the window (or Entry is "", nothing was
	// admitted), the excess of Cost over the entry's original cost, if any,
	// is admitted now as a new entry, never refused. Window must be the
	// window the entry was admitted with. The counter adjustment always
	// applies, as Reserve with no cap does. Keys follow Admit's rules.
	Settle(ctx context.Context, req SettleRequest) (SettleResult, error)
}

// Logs are time-ordered, bounded logs.
type Logs interface {
	// AppendLog appends values, in order, to the time-ordered log at key and
	// then trims it to lim: entries older than lim.MaxAge are dropped, and the
	// oldest beyond lim.MaxLen (approximately, on Redis). The log as a whole
	// expires MaxAge after the last append. Zero limits do not trim.
	AppendLog(ctx context.Context, key string, lim LogLimit, values ...[]byte) error
	// ReadLog returns up to limit entries appended at or after since, oldest first.
	ReadLog(ctx context.Context, key string, since time.Time, limit int) ([][]byte, error)
}

// Bus carries notifications between the processes sharing the store.
type Bus interface {
	// Publish sends msg to every current subscriber of channel, in every process
	// sharing the store.
	Publish(ctx context.Context, channel string, msg []byte) error
	// Subscribe starts receiving messages published on channel. A slow
	// subscriber whose buffer is full misses a message, and its subscription
	// ends (Subscription).
	Subscribe(ctx context.Context, channel string) (Subscription, error)
}

// KV is the whole hot-state store as the wiring holds it: every building
// block, and its lifecycle. Consumers never take a KV; they take the blocks
// they use.
type KV interface {
	Values
	Counters
	Logs
	Bus
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
	// Entry identifies the entry this call admitted (Allowed, cost > 0), for
	// Settle; "" when it admitted none. Opaque, meaningful to the same store.
	Entry string
}

// WindowCheck is one sliding window of an Admit call; the fields mean what
// Window's parameters mean.
type WindowCheck struct {
	Key    string
	Window time.Duration
	Limit  int64
	Cost   int64
}

// Reservation is the reservation of an Admit call: Amount ≥ 0 added to the
// integer counter at Key (a missing key counts as 0 and gets TTL on
// creation, ≤ 0: no expiry). With Cap > 0 it is refused when the counter
// plus Amount would exceed Cap or the counter is already at or above Cap (so
// a zero amount is refused once the cap is reached); Cap ≤ 0 never refuses.
type Reservation struct {
	Key    string
	Amount int64
	Cap    int64
	TTL    time.Duration
}

// AdmitRequest is the input of KV.Admit: windows, checked in order, and an
// optional reservation.
type AdmitRequest struct {
	Windows []WindowCheck
	Reserve *Reservation
}

// AdmitResult is the outcome of KV.Admit.
type AdmitResult struct {
	// Allowed is true when every window and the reservation had room, and
	// so everything was counted.
	Allowed bool
	// Windows has one result per AdmitRequest.Windows, in order: Allowed
	// says whether that window had room; Used includes the call's cost only
	// when the whole admission was Allowed; Entry is set only then.
	Windows []WindowResult
	// Reserved says whether the reservation had room (true without one).
	Reserved bool
	// Total is the reservation counter's value after the call (unchanged
	// when refused); 0 without a reservation.
	Total int64
}

// Amendment is one window entry to rewrite in a Settle call.
type Amendment struct {
	Key    string
	Window time.Duration
	Entry  string // WindowResult.Entry of the admission
	Cost   int64  // the entry's actual cost, ≥ 0
}

// Adjustment adds Delta (any sign, never refused) to the integer counter at
// Key in a Settle call; a missing key counts as 0 and gets TTL on creation
// (≤ 0: no expiry).
type Adjustment struct {
	Key   string
	Delta int64
	TTL   time.Duration
}

// SettleRequest is the input of KV.Settle.
type SettleRequest struct {
	Windows []Amendment
	Counter *Adjustment
}

// SettleResult is the outcome of KV.Settle: each window's state after (with
// the amended entry's new id in Entry, "" when it was removed or not found
// and nothing added), and the counter's value after (0 without one).
type SettleResult struct {
	Windows []WindowResult
	Total   int64
}

// Refused returns the index of the first window that refused, or -1 when
// every window had room.
func (r AdmitResult) Refused() int {
	for i, w := range r.Windows {
		if !w.Allowed {
			return i
		}
	}
	return -1
}

// LogLimit bounds a KV log by age and by number of entries.
type LogLimit struct {
	MaxAge time.Duration
	MaxLen int
}

// Subscription is a live subscription to one channel. It delivers every
// message published while it lasts, or ends: a subscription that could
// have missed one (its buffer was full, its connection was lost) ends
// rather than go on, so a follower (Follow) that drops what it cached when
// a subscription ends never trusts a cache a lost message should have
// changed.
type Subscription interface {
	// C delivers messages; it is closed when the subscription ends.
	C() <-chan []byte
	// Close ends the subscription.
	Close() error
}

// Streams are append-only logs drained by a consumer group: every entry
// appended reaches a consumer at least once, and stays in the stream until
// a consumer acknowledged it (the audit hot tier, drained by the bridge into
// SQL). They are what Logs are not: never trimmed past an unacknowledged
// entry. rediskv implements them with a Redis stream and a consumer group
// (XADD, XREADGROUP, XAUTOCLAIM, XACK); the embedded default's counterpart
// is the local spool (internal/spool), which has one consumer.
type Streams interface {
	// StreamAppend appends values, in order, to the stream at key. It never
	// trims.
	StreamAppend(ctx context.Context, key string, values ...[]byte) error
	// StreamRead delivers up to count entries of the stream at key to
	// consumer of group (created on first use, reading from the stream's
	// start): first the consumer's own entries delivered before and not
	// acknowledged (a restarted consumer of the same name resumes them),
	// then entries pending for another consumer for longer than
	// claimIdle (claimed: that consumer died), then new entries, waiting up
	// to block for some when there are none (0: no wait). Entries come in
	// stream order within each of those three sets.
	StreamRead(ctx context.Context, key, group, consumer string, count int, claimIdle, block time.Duration) ([]StreamEntry, error)
	// StreamAck acknowledges entries by ID: they are never delivered again
	// and may be trimmed. Unknown or repeated IDs are not an error.
	StreamAck(ctx context.Context, key, group string, ids ...string) error
	// StreamTrim removes acknowledged entries beyond lim — older than
	// lim.MaxAge, or the oldest beyond lim.MaxLen entries — and never an
	// entry group has not acknowledged. It returns how many it removed. A
	// stream with no group keeps everything.
	StreamTrim(ctx context.Context, key, group string, lim LogLimit) (int64, error)
	// StreamInfo describes the stream and group.
	StreamInfo(ctx context.Context, key, group string) (StreamInfo, error)
	// StreamUnacked returns up to limit of the newest entries group has not
	// acknowledged (pending or never delivered), newest first. It may also
	// return acknowledged entries newer than the oldest unacknowledged one.
	StreamUnacked(ctx context.Context, key, group string, limit int) ([]StreamEntry, error)
}

// StreamEntry is one entry of a stream: its ID (opaque, ordered within the
// stream; on Redis "<ms>-<seq>") and value.
type StreamEntry struct {
	ID string
	// Value is the caller's: the store neither keeps nor reuses its bytes
	// (audit.RecordFromJSON's record shares them).
	Value []byte
	// Time is when the entry was appended (the store's clock).
	Time time.Time
}

// StreamInfo is the state of a stream and its consumer group.
type StreamInfo struct {
	Length int64 // entries in the stream, acknowledged ones not yet trimmed included
	// Pending are delivered and not acknowledged; Undelivered were never
	// delivered to group. Their sum is the backlog.
	Pending     int64
	Undelivered int64
	// OldestUnacked is the append time of the oldest entry not acknowledged
	// (zero when there is none).
	OldestUnacked time.Time
	Consumers     []StreamConsumer
}

// Backlog is the number of entries not acknowledged.
func (i StreamInfo) Backlog() int64 { return i.Pending + i.Undelivered }

// Lag is the age at now of the oldest entry not acknowledged (0 when there
// is none).
func (i StreamInfo) Lag(now time.Time) time.Duration {
	if i.OldestUnacked.IsZero() {
		return 0
	}
	return max(now.Sub(i.OldestUnacked), 0)
}

// StreamConsumer is one consumer of a group.
type StreamConsumer struct {
	Name    string
	Pending int64
	Idle    time.Duration // since its last read
}
