package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// States keeps pending authorizations between the initiate and the callback,
// which another replica may serve.
type States interface {
	// Put keeps value at key for ttl.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Take returns the value at key and removes it, once: a second Take of
	// the same key, even a concurrent one on another replica, and a Take of
	// an expired or unknown key return store.ErrNotFound.
	Take(ctx context.Context, key string) ([]byte, error)
}

// StateKV is what KVStates needs of svc's KV store (memkv, rediskv): values
// with a TTL and the capped counter that makes a take single-use.
type StateKV interface {
	store.Values
	Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (ok bool, total int64, err error)
}

// KVStates is States over the KV store, shared by every replica. Keys are
// prefixed "mcp:oauth:state:"; a take marks its key used with a capped
// counter (Reserve of 1 under a cap of 1) before it deletes the value, so
// two takes racing on different replicas cannot both succeed.
type KVStates struct {
	kv StateKV
}

// NewKVStates returns States over kv.
func NewKVStates(kv StateKV) *KVStates { return &KVStates{kv: kv} }

const statePrefix = "mcp:oauth:state:"

// Put stores value for ttl.
func (s *KVStates) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("oauth: a pending authorization needs a positive ttl")
	}
	if err := s.kv.Set(ctx, statePrefix+key, value, ttl); err != nil {
		return fmt.Errorf("oauth: keep pending authorization: %w", err)
	}
	return nil
}

// Take returns the value once. The used marker lives as long as a state
// may, so a replay within its lifetime finds it.
func (s *KVStates) Take(ctx context.Context, key string) ([]byte, error) {
	v, err := s.kv.Get(ctx, statePrefix+key)
	if err != nil {
		return nil, fmt.Errorf("oauth: pending authorization: %w", err)
	}
	ok, _, err := s.kv.Reserve(ctx, statePrefix+key+":used", 1, 1, stateTTL)
	if err != nil {
		return nil, fmt.Errorf("oauth: take pending authorization: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("oauth: pending authorization already taken: %w", store.ErrNotFound)
	}
	if err := s.kv.Delete(ctx, statePrefix+key); err != nil {
		return nil, fmt.Errorf("oauth: take pending authorization: %w", err)
	}
	return v, nil
}

var _ States = (*KVStates)(nil)
