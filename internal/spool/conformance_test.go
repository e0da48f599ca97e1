package spool

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestStreamsConformance runs the store.Streams suite on spools: one spool
// per stream key, as the suite uses several keys in one store and a spool
// is one stream. A spool's group may have several consumers, each entry
// pending to one of them, so the multi-consumer checks run too.
func TestStreamsConformance(t *testing.T) {
	storetest.ExerciseStreams(t, func(t *testing.T) *keyed {
		return &keyed{dir: t.TempDir(), spools: map[string]*Spool{}}
	}, storetest.StreamsCaps{MultiConsumer: true})
}

// keyed is a store.Streams of one spool per key, opened on first use.
type keyed struct {
	dir    string
	mu     sync.Mutex
	closed bool
	spools map[string]*Spool
}

func (k *keyed) spool(key string) (*Spool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, ErrClosed
	}
	if s := k.spools[key]; s != nil {
		return s, nil
	}
	s, err := Open(filepath.Join(k.dir, url.PathEscape(key)), Options{Key: key})
	if err != nil {
		return nil, err
	}
	k.spools[key] = s
	return s, nil
}

func (k *keyed) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	var errs []error
	for _, s := range k.spools {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func (k *keyed) StreamAppend(ctx context.Context, key string, values ...[]byte) error {
	s, err := k.spool(key)
	if err != nil {
		return err
	}
	return s.StreamAppend(ctx, key, values...)
}

func (k *keyed) StreamRead(ctx context.Context, key, group, consumer string, count int, claimIdle, block time.Duration) ([]store.StreamEntry, error) {
	s, err := k.spool(key)
	if err != nil {
		return nil, err
	}
	return s.StreamRead(ctx, key, group, consumer, count, claimIdle, block)
}

func (k *keyed) StreamAck(ctx context.Context, key, group string, ids ...string) error {
	s, err := k.spool(key)
	if err != nil {
		return err
	}
	return s.StreamAck(ctx, key, group, ids...)
}

func (k *keyed) StreamTrim(ctx context.Context, key, group string, lim store.LogLimit) (int64, error) {
	s, err := k.spool(key)
	if err != nil {
		return 0, err
	}
	return s.StreamTrim(ctx, key, group, lim)
}

func (k *keyed) StreamInfo(ctx context.Context, key, group string) (store.StreamInfo, error) {
	s, err := k.spool(key)
	if err != nil {
		return store.StreamInfo{}, err
	}
	return s.StreamInfo(ctx, key, group)
}

func (k *keyed) StreamUnacked(ctx context.Context, key, group string, limit int) ([]store.StreamEntry, error) {
	s, err := k.spool(key)
	if err != nil {
		return nil, err
	}
	return s.StreamUnacked(ctx, key, group, limit)
}
