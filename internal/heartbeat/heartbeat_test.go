package heartbeat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/heartbeat"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock, safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// eachKV runs f on the in-process KV and, when SVC_TEST_REDIS_URL is set,
// on Redis under a prefix of its own.
func eachKV(t *testing.T, f func(t *testing.T, kv heartbeat.Log)) {
	t.Run("memkv", func(t *testing.T) {
		kv := memkv.New()
		t.Cleanup(func() { kv.Close() })
		f(t, kv)
	})
	t.Run("redis", func(t *testing.T) { f(t, storetest.RedisKV(t)) })
}

func TestReadLatestPerComponentAndInstance(t *testing.T) {
	eachKV(t, func(t *testing.T, kv heartbeat.Log) {
		ca, cb := &clock{now: t0}, &clock{now: t0}
		a := heartbeat.New(kv, heartbeat.Options{Instance: "host-a-1-aaaaaa", Version: "v1.2.3", Now: ca.Now})
		b := heartbeat.New(kv, heartbeat.Options{Instance: "host-b-2-bbbbbb", Interval: 2 * time.Second, Now: cb.Now})
		lag := 0.5
		aProxy := a.Component("proxy", nil)
		aBridge := a.Component("bridge", func() map[string]any { return map[string]any{"lag_seconds": lag, "backlog": 3} })
		bProxy := b.Component("proxy", nil)
		ctx := t.Context()
		for _, c := range []*heartbeat.Component{aProxy, aBridge, bProxy} {
			if err := c.Beat(ctx); err != nil {
				t.Fatalf("%s: Beat: %v", c.Name(), err)
			}
		}
		ca.Set(t0.Add(4 * time.Second))
		lag = 1.5
		if err := aBridge.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		if err := aProxy.Beat(ctx); err != nil {
			t.Fatal(err)
		}

		got, err := heartbeat.Read(ctx, kv, time.Time{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		type row struct {
			Component, Instance string
			Time                time.Time
			Interval            time.Duration
			Details             map[string]any
		}
		var rows []row
		for _, g := range got {
			rows = append(rows, row{g.Component, g.Instance, g.Time.UTC(), g.Interval(), g.Details})
		}
		want := []row{
			{"bridge", "host-a-1-aaaaaa", t0.Add(4 * time.Second), 5 * time.Second, map[string]any{"lag_seconds": 1.5, "backlog": 3.0}},
			{"proxy", "host-a-1-aaaaaa", t0.Add(4 * time.Second), 5 * time.Second, nil},
			{"proxy", "host-b-2-bbbbbb", t0, 2 * time.Second, nil},
		}
		if d := cmp.Diff(want, rows); d != "" {
			t.Errorf("Read (-want +got):\n%s", d)
		}
		first := got[0]
		if first.Version != "v1.2.3" || first.PID != os.Getpid() || first.Host == "" || !first.StartedAt.Equal(t0) {
			t.Errorf("beat = %+v, want version v1.2.3, pid %d, a host, started_at %v", first, os.Getpid(), t0)
		}
		if got := a.Process().Components; !cmp.Equal(got, []string{"proxy", "bridge"}) {
			t.Errorf("Process().Components = %v, want [proxy bridge]", got)
		}
	})
}

func TestStale(t *testing.T) {
	eachKV(t, func(t *testing.T, kv heartbeat.Log) {
		ca, cb := &clock{now: t0}, &clock{now: t0}
		a := heartbeat.New(kv, heartbeat.Options{Instance: "a", Now: ca.Now}).Component("proxy", nil)
		b := heartbeat.New(kv, heartbeat.Options{Instance: "b", Now: cb.Now}).Component("proxy", nil)
		ctx := t.Context()
		if err := a.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		cb.Set(t0.Add(10 * time.Second))
		if err := b.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		beats, err := heartbeat.Read(ctx, kv, time.Time{})
		if err != nil || len(beats) != 2 {
			t.Fatalf("Read = %d beats, %v; want 2", len(beats), err)
		}
		for _, tc := range []struct {
			now          time.Time
			wantA, wantB string
		}{
			{t0.Add(15 * time.Second), heartbeat.StatusOK, heartbeat.StatusOK}, // exactly 3 intervals: not yet
			{t0.Add(15*time.Second + time.Millisecond), heartbeat.StatusStale, heartbeat.StatusOK},
			{t0.Add(26 * time.Second), heartbeat.StatusStale, heartbeat.StatusStale},
		} {
			if got := beats[0].Status(tc.now); got != tc.wantA {
				t.Errorf("a at +%v: %s, want %s", tc.now.Sub(t0), got, tc.wantA)
			}
			if got := beats[1].Status(tc.now); got != tc.wantB {
				t.Errorf("b at +%v: %s, want %s", tc.now.Sub(t0), got, tc.wantB)
			}
		}
		if got := beats[1].Age(t0); got != 0 {
			t.Errorf("Age before the beat = %v, want 0", got)
		}
	})
}

// signalLog passes appends to Log and reports each on appended.
type signalLog struct {
	heartbeat.Log
	fail     error
	appended chan struct{}
	mu       sync.Mutex
	limits   []store.LogLimit
}

func (s *signalLog) AppendLog(ctx context.Context, key string, lim store.LogLimit, values ...[]byte) error {
	s.mu.Lock()
	s.limits = append(s.limits, lim)
	s.mu.Unlock()
	defer func() {
		select {
		case s.appended <- struct{}{}:
		default:
		}
	}()
	if s.fail != nil {
		return s.fail
	}
	return s.Log.AppendLog(ctx, key, lim, values...)
}

func TestRunBeatsAtOnceAndSaysStopped(t *testing.T) {
	eachKV(t, func(t *testing.T, kv heartbeat.Log) {
		sl := &signalLog{Log: kv, appended: make(chan struct{}, 1)}
		c := heartbeat.New(sl, heartbeat.Options{Instance: "i", Interval: time.Hour}).Component("management", nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		<-sl.appended // the first beat, long before the first tick
		beats, err := heartbeat.Read(t.Context(), kv, time.Time{})
		if err != nil || len(beats) != 1 || beats[0].Stopped {
			t.Fatalf("after the first beat: %+v, %v; want one running beat", beats, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		beats, err = heartbeat.Read(t.Context(), kv, time.Time{})
		if err != nil || len(beats) != 1 || beats[0].Status(time.Now()) != heartbeat.StatusStopped {
			t.Fatalf("after Run: %+v, %v; want one stopped beat", beats, err)
		}
		want := store.LogLimit{MaxAge: 2 * time.Minute, MaxLen: 100 * 6 * (int(2*time.Minute/time.Hour) + 1)}
		if sl.limits[0] != want {
			t.Errorf("limit = %+v, want %+v", sl.limits[0], want)
		}
	})
}

func TestRunSurvivesAFailingStore(t *testing.T) {
	sl := &signalLog{Log: memkv.New(), fail: errors.New("store down"), appended: make(chan struct{}, 1)}
	c := heartbeat.New(sl, heartbeat.Options{Instance: "i", Interval: time.Hour}).Component("proxy", nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-sl.appended
	select {
	case err := <-done:
		t.Fatalf("Run returned %v while the store failed; want it to go on", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

func TestLogLimitFollowsInterval(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		want     int
	}{
		{0, 100 * 6 * 25}, // the default, 5 s: 24 beats in two minutes, and one
		{time.Second, 100 * 6 * 121},
		{time.Minute, 100 * 6 * 3},
	} {
		sl := &signalLog{Log: memkv.New(), appended: make(chan struct{}, 1)}
		if err := heartbeat.New(sl, heartbeat.Options{Interval: tc.interval}).Component("proxy", nil).Beat(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := sl.limits[0]; got.MaxLen != tc.want || got.MaxAge != heartbeat.MaxAge {
			t.Errorf("interval %v: limit %+v, want MaxLen %d, MaxAge %v", tc.interval, got, tc.want, heartbeat.MaxAge)
		}
	}
}

func TestDefaultInstanceAndBadEntries(t *testing.T) {
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	p := heartbeat.New(kv, heartbeat.Options{})
	host, _ := os.Hostname()
	re := regexp.MustCompile("^" + regexp.QuoteMeta(host) + fmt.Sprintf("-%d-[0-9a-f]{6}$", os.Getpid()))
	if inst := p.Process().Instance; !re.MatchString(inst) {
		t.Errorf("instance %q, want hostname-pid-6 hex", inst)
	}
	if other := heartbeat.New(kv, heartbeat.Options{}).Process().Instance; other == p.Process().Instance {
		t.Errorf("two publishers share the instance %q", other)
	}
	lim := store.LogLimit{MaxAge: time.Minute}
	for _, v := range []string{`not json`, `{"component":"proxy"}`, `{"instance":"x"}`, `[]`} {
		if err := kv.AppendLog(t.Context(), heartbeat.Key, lim, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Component("proxy", func() map[string]any { return map[string]any{"bad": func() {}} }).Beat(t.Context()); err != nil {
		t.Fatalf("Beat with details that do not encode: %v", err)
	}
	beats, err := p.Read(t.Context(), time.Time{})
	if err != nil || len(beats) != 1 || beats[0].Details != nil {
		t.Fatalf("Read = %+v, %v; want the one beat, without details", beats, err)
	}
}
