package route

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Failure is a failed attempt of a provider call; GET /api/routing/status
// shows the fleet's last one.
type Failure struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Chain is the fallback chain the attempt belonged to ("intelligent" for
	// the intelligent router's); "" when the plan had none.
	Chain string `json:"chain"`
	// Status is the provider's HTTP status; 0 when it did not answer.
	Status int `json:"status"`
	// Message is the client-safe message of the attempt's error.
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// FailureStore is where Failures keeps the last failure: store.Values' Get
// and Set, shared by every process (memkv, rediskv).
type FailureStore interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

const (
	// failureKey holds the fleet's last failure, as JSON.
	failureKey = "route:last_failure"
	// failureTTL forgets a last failure a day after it was written.
	failureTTL = 24 * time.Hour
	// failureEvery is how often Run writes the newest failure noted here.
	failureEvery = time.Second
)

// Failures keeps the last failed provider attempt of the whole fleet in the
// store, so that a management API in another process shows it. Note is
// called on the request path and does no I/O; Run writes the newest failure
// noted in this process at most once a second (a provider outage at any
// request rate costs one store write per process per second), and never
// replaces a newer failure another process wrote.
type Failures struct {
	kv  FailureStore
	log *slog.Logger

	pending atomic.Pointer[Failure] // newest noted here, not yet written
	mu      sync.Mutex              // serialises Flush
}

// NewFailures returns the fleet's last failure over kv.
func NewFailures(kv FailureStore, log *slog.Logger) *Failures {
	if log == nil {
		log = slog.Default()
	}
	return &Failures{kv: kv, log: log}
}

// Note records a failed attempt (At defaults to now). It keeps the newest
// in memory for Run to write; it takes no lock and does no I/O.
func (f *Failures) Note(fl Failure) {
	if fl.At.IsZero() {
		fl.At = time.Now().UTC()
	}
	for {
		cur := f.pending.Load()
		if cur != nil && cur.At.After(fl.At) {
			return
		}
		if f.pending.CompareAndSwap(cur, &fl) {
			return
		}
	}
}

// Flush writes the newest failure noted here unless the store already holds
// a newer one; on a store error the failure stays pending.
func (f *Failures) Flush(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.pending.Swap(nil)
	if fl == nil {
		return nil
	}
	stored, err := f.read(ctx)
	if err == nil && stored != nil && stored.At.After(fl.At) {
		return nil
	}
	b, err := json.Marshal(fl)
	if err == nil {
		err = f.kv.Set(ctx, failureKey, b, failureTTL)
	}
	if err != nil {
		f.pending.CompareAndSwap(nil, fl)
		return fmt.Errorf("route: write the last failure: %w", err)
	}
	return nil
}

// Last returns the fleet's last failure: the newer of the stored one and
// one noted here and not yet written; nil when none is known.
func (f *Failures) Last(ctx context.Context) (*Failure, error) {
	stored, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	if p := f.pending.Load(); p != nil && (stored == nil || p.At.After(stored.At)) {
		c := *p
		return &c, nil
	}
	return stored, nil
}

func (f *Failures) read(ctx context.Context) (*Failure, error) {
	b, err := f.kv.Get(ctx, failureKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("route: read the last failure: %w", err)
	}
	var fl Failure
	if err := json.Unmarshal(b, &fl); err != nil {
		return nil, fmt.Errorf("route: read the last failure: %w", err)
	}
	return &fl, nil
}

// Run writes the newest failure noted here every second until ctx ends,
// then once more. It returns nil.
func (f *Failures) Run(ctx context.Context) error {
	tick := time.NewTicker(failureEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := f.Flush(fctx); err != nil {
				f.log.Warn("routing: last failure not written at shutdown", "err", err)
			}
			return nil
		case <-tick.C:
			if err := f.Flush(ctx); err != nil && ctx.Err() == nil {
				f.log.Warn("routing: last failure not written", "err", err)
			}
		}
	}
}
