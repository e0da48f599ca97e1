package audit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func entry(i int) *audit.Entry {
	start := time.Now().Add(-time.Second)
	x := &pipeline.Exchange{ID: "req-" + strconv.Itoa(i), Start: start, End: start.Add(10 * time.Millisecond),
		Endpoint: pipeline.Chat, Provider: "openai", Model: "gpt-4o-mini", Status: 200, Cost: 0.001}
	return audit.FromExchange(x, 5*time.Millisecond)
}

// downable is a hot tier that refuses appends while down is set (Redis
// away).
type downable struct {
	store.Streams
	down atomic.Bool
}

func (d *downable) StreamAppend(ctx context.Context, key string, values ...[]byte) error {
	if d.down.Load() {
		return errors.New("connection refused")
	}
	return d.Streams.StreamAppend(ctx, key, values...)
}

// TestRecordIsInTheSpoolWhenItReturns checks the durability promise: once
// Record returned, the entry is in the spool's file, so a process that
// dies then loses nothing (the spool reopened finds every entry).
func TestRecordIsInTheSpoolWhenItReturns(t *testing.T) {
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Options{Key: audit.HotLogKey})
	if err != nil {
		t.Fatal(err)
	}
	l := audit.NewLogger(metrics.New(nil), quiet, audit.Options{Spool: sp})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				l.Record(entry(g*1000 + i))
			}
		}()
	}
	wg.Wait()
	l.Close()
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := spool.Open(dir, spool.Options{Key: audit.HotLogKey})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	info, err := again.StreamInfo(t.Context(), audit.HotLogKey, audit.BridgeGroup)
	if err != nil || info.Backlog() != 800 {
		t.Fatalf("reopened spool: backlog %d (%v), want 800", info.Backlog(), err)
	}
}

// TestForwarderSpillsWhileTheHotTierIsDown checks the forwarder over real
// Redis: entries move from the spool to the stream; while Redis refuses
// them they wait in the spool (nothing lost, requests never wait) and move
// when it returns, each once.
func TestForwarderSpillsWhileTheHotTierIsDown(t *testing.T) {
	url := os.Getenv(storetest.RedisURLEnv)
	if url == "" {
		t.Skip("set " + storetest.RedisURLEnv + " to run the forwarder's Redis test")
	}
	kv, err := rediskv.Open(url, fmt.Sprintf("svcfwdtest:%d:", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	hot := &downable{Streams: kv}
	sp, err := spool.Open(t.TempDir(), spool.Options{Key: audit.HotLogKey})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	m := metrics.New(nil)
	l := audit.NewLogger(m, quiet, audit.Options{Spool: sp, Hot: hot, FlushInterval: 5 * time.Millisecond})
	defer l.Close()
	length := func() int64 {
		info, err := kv.StreamInfo(t.Context(), audit.HotLogKey, audit.BridgeGroup)
		if err != nil {
			t.Fatal(err)
		}
		return info.Length
	}
	waitFor := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for length() != want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := length(); got != want {
			t.Fatalf("hot tier holds %d entries, want %d", got, want)
		}
	}
	for i := range 300 {
		l.Record(entry(i))
	}
	waitFor(300)
	hot.down.Store(true)
	for i := 300; i < 800; i++ {
		l.Record(entry(i))
	}
	// The forwarder may still be acknowledging the last of the first 300
	// in the spool: wait for the backlog to settle at the 500 held back.
	storetest.Eventually(t, 10*time.Second, func() error {
		info, err := sp.StreamInfo(t.Context(), audit.HotLogKey, "forward")
		if err != nil || info.Backlog() != 500 {
			return fmt.Errorf("spool backlog while Redis is down: %d (%v), want 500", info.Backlog(), err)
		}
		return nil
	})
	hot.down.Store(false)
	waitFor(800)
	if length() != 800 {
		t.Errorf("entries forwarded more than once")
	}
}
