package saml

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Replay records the assertions accepted, so each is accepted once.
type Replay interface {
	// Claim records id until the given time and reports whether it was
	// fresh: false when id was claimed before and has not expired, even
	// by a concurrent Claim on another replica sharing the store.
	Claim(ctx context.Context, id string, until time.Time) (fresh bool, err error)
}

// ErrReplayFull is returned by MemoryReplay.Claim when it holds its
// capacity of unexpired ids.
var ErrReplayFull = errors.New("saml: replay cache full")

// DefaultReplayCapacity is NewMemoryReplay's capacity when given none.
const DefaultReplayCapacity = 100_000

// MemoryReplay is a Replay in this process only (tests, one replica). It
// holds at most its capacity of unexpired ids and refuses (ErrReplayFull,
// so Verify fails closed) rather than forget one early.
type MemoryReplay struct {
	mu       sync.Mutex
	until    map[string]time.Time
	capacity int
	now      func() time.Time
}

// NewMemoryReplay returns an empty MemoryReplay holding at most capacity
// ids (≤ 0: DefaultReplayCapacity).
func NewMemoryReplay(capacity int) *MemoryReplay {
	if capacity <= 0 {
		capacity = DefaultReplayCapacity
	}
	return &MemoryReplay{until: map[string]time.Time{}, capacity: capacity, now: time.Now}
}

// Claim implements Replay.
func (m *MemoryReplay) Claim(_ context.Context, id string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if u, ok := m.until[id]; ok && now.Before(u) {
		return false, nil
	}
	if len(m.until) >= m.capacity {
		for k, u := range m.until {
			if !now.Before(u) {
				delete(m.until, k)
			}
		}
		if len(m.until) >= m.capacity {
			return false, ErrReplayFull
		}
	}
	m.until[id] = until
	return true, nil
}

// ReserveKV is what KVReplay needs of svc's KV store (store/memkv,
// store/rediskv): the capped counter.
type ReserveKV interface {
	Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (ok bool, total int64, err error)
}

// KVReplay is a Replay over svc's shared KV store, so every replica sees
// every claim: a claim is a Reserve of 1 under a cap of 1 on the key
// "sso:saml:replay:" + hex(SHA-256(id)), which lives until the id expires;
// of two claims racing on different replicas only one succeeds.
type KVReplay struct {
	kv  ReserveKV
	now func() time.Time
}

// NewKVReplay returns a Replay over kv.
func NewKVReplay(kv ReserveKV) *KVReplay { return &KVReplay{kv: kv, now: time.Now} }

const replayPrefix = "sso:saml:replay:"

// Claim implements Replay. The key lives at least one second.
func (r *KVReplay) Claim(ctx context.Context, id string, until time.Time) (bool, error) {
	ttl := until.Sub(r.now())
	if ttl < time.Second {
		ttl = time.Second
	}
	sum := sha256.Sum256([]byte(id))
	ok, _, err := r.kv.Reserve(ctx, replayPrefix+hex.EncodeToString(sum[:]), 1, 1, ttl)
	if err != nil {
		return false, fmt.Errorf("saml: replay claim: %w", err)
	}
	return ok, nil
}

var (
	_ Replay = (*MemoryReplay)(nil)
	_ Replay = (*KVReplay)(nil)
)
