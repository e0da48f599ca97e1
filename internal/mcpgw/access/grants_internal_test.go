package access

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// gatedSource answers tools once release is closed, counting its calls
// and signalling each start on started.
type gatedSource struct {
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
	tools   []string
	err     error
}

func (s *gatedSource) GrantedTools(ctx context.Context, _, _ string) ([]string, error) {
	s.calls.Add(1)
	if s.started != nil {
		s.started <- struct{}{}
	}
	if s.release != nil {
		<-s.release
	}
	return s.tools, s.err
}

// TestGrantsEvictDuringLoad: a load that read the grants before a change
// was announced must not fill the cache with what it read.
func TestGrantsEvictDuringLoad(t *testing.T) {
	src := &gatedSource{started: make(chan struct{}, 1), release: make(chan struct{}), tools: []string{"t"}}
	g := NewGrants(src, memkv.New(), time.Hour, nil)
	Running(t, g)
	p := &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}

	done := make(chan bool)
	go func() {
		ok, _ := g.Granted(context.Background(), p, "s", "t")
		done <- ok
	}()
	<-src.started
	g.evict(grantKey{user: p.Caller(), server: "s"}) // the change lands while the load is in flight
	close(src.release)
	if !<-done {
		t.Fatal("the in-flight load's answer was lost")
	}
	src.started = nil
	if _, err := g.Granted(context.Background(), p, "s", "t"); err != nil {
		t.Fatal(err)
	}
	if n := src.calls.Load(); n != 2 {
		t.Fatalf("source called %d times, want 2: the load begun before the eviction filled the cache", n)
	}
	if _, err := g.Granted(context.Background(), p, "s", "t"); err != nil {
		t.Fatal(err)
	}
	if n := src.calls.Load(); n != 2 {
		t.Fatalf("source called %d times, want 2: a load after the eviction should be cached", n)
	}
}

// TestGrantsSharedLoad: concurrent misses of one set make one load; a
// caller whose context ends stops waiting without failing the others.
func TestGrantsSharedLoad(t *testing.T) {
	src := &gatedSource{started: make(chan struct{}, 8), release: make(chan struct{}), tools: []string{"t"}}
	g := NewGrants(src, memkv.New(), time.Hour, nil)
	Running(t, g)
	p := &identity.Principal{Kind: identity.User, ID: "u"}

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error)
	go func() {
		_, err := g.Granted(ctx, p, "s", "t")
		gone <- err
	}()
	<-src.started
	results := make(chan bool, 4)
	for range 4 {
		go func() {
			ok, err := g.Granted(context.Background(), p, "s", "t")
			results <- ok && err == nil
		}()
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v, want context.Canceled", err)
	}
	time.Sleep(20 * time.Millisecond) // let the others join the load
	close(src.release)
	for range 4 {
		if !<-results {
			t.Error("a caller sharing the load did not get the grant")
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("source called %d times, want 1", n)
	}
}

func TestGrantsSourceError(t *testing.T) {
	src := &gatedSource{err: errors.New("database is down")}
	g := NewGrants(src, memkv.New(), time.Hour, nil)
	p := &identity.Principal{Kind: identity.User, ID: "u"}
	for _, following := range []bool{false, true} {
		if following {
			Running(t, g)
		}
		ok, err := g.Granted(context.Background(), p, "s", "t")
		if ok || apierr.KindOf(err) != apierr.Unavailable {
			t.Errorf("following %v: Granted = %v, %v; want false and a 503", following, ok, err)
		}
	}
}

// TestGrantsNoJoinAcrossEviction: a caller that asks after a change was
// announced does not share a load begun before it (which may have read the
// old grants).
// So does a caller after a flush of the whole cache (a subscription made
// again after an outage of the bus).
func TestGrantsNoJoinAcrossEviction(t *testing.T) {
	for name, change := range map[string]func(g *Grants, p *identity.Principal){
		"eviction": func(g *Grants, p *identity.Principal) { g.evict(grantKey{user: p.Caller(), server: "s"}) },
		"flush":    func(g *Grants, _ *identity.Principal) { g.flush() },
	} {
		t.Run(name, func(t *testing.T) {
			src := &gatedSource{started: make(chan struct{}, 2), release: make(chan struct{}), tools: []string{"t"}}
			g := NewGrants(src, memkv.New(), time.Hour, nil)
			Running(t, g)
			p := &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}
			done := make(chan struct{}, 2)
			ask := func() {
				_, _ = g.Granted(context.Background(), p, "s", "t")
				done <- struct{}{}
			}
			go ask()
			<-src.started
			change(g, p)
			go ask()
			select {
			case <-src.started:
			case <-time.After(5 * time.Second):
				t.Errorf("the caller after the %s joined the load begun before it", name)
			}
			close(src.release)
			<-done
			<-done
		})
	}
}
