package access_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// propagation is how soon a decision made in one process must hold in
// another: "about a second".
const propagation = 1500 * time.Millisecond

// countingSource counts the reads that reach the database.
type countingSource struct {
	access.Source
	n atomic.Int32
}

func (c *countingSource) GrantedTools(ctx context.Context, user, server string) ([]string, error) {
	c.n.Add(1)
	return c.Source.GrantedTools(ctx, user, server)
}

func sqliteStore(t *testing.T) *access.SQLStore {
	return access.NewSQLStore(storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t)), nil)
}

var vkey = &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}

func granted(t *testing.T, g *access.Grants, p *identity.Principal, server, tool string) bool {
	t.Helper()
	ok, err := g.Granted(t.Context(), p, server, tool)
	if err != nil {
		t.Fatalf("Granted: %v", err)
	}
	return ok
}

// eventually is storetest.Until, logging how long it took.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	t.Logf("%s after %s", what, storetest.Until(t, within, what, cond).Round(time.Millisecond))
}

func TestGrantsCached(t *testing.T) {
	st := sqliteStore(t)
	src := &countingSource{Source: st}
	g := access.Running(t, access.NewGrants(src, memkv.New(), time.Hour, nil))
	r := mustCreate(t, st, newRequest(vkey.Caller(), "github", "create_issue", "list_issues"))
	if _, err := st.Approve(t.Context(), r.ID, "admin:admin"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if !granted(t, g, vkey, "github", "create_issue") || granted(t, g, vkey, "github", "delete_repo") {
			t.Fatal("wrong answer")
		}
	}
	tools, err := g.Tools(t.Context(), vkey, "github")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create_issue", "list_issues"}, tools); diff != "" {
		t.Errorf("Tools (-want +got):\n%s", diff)
	}
	tools[0] = "mutated" // the caller's copy
	if !granted(t, g, vkey, "github", "create_issue") {
		t.Error("changing Tools' answer changed the cache")
	}
	if n := src.n.Load(); n != 1 {
		t.Errorf("%d database reads for one (requester, server), want 1", n)
	}
	granted(t, g, vkey, "jira", "x")
	granted(t, g, &identity.Principal{Kind: identity.User, ID: "k1"}, "github", "create_issue")
	if n := src.n.Load(); n != 3 {
		t.Errorf("%d database reads for three (requester, server) pairs, want 3", n)
	}
	if granted(t, g, nil, "github", "create_issue") || granted(t, g, &identity.Principal{}, "github", "create_issue") {
		t.Error("granted to no principal")
	}
}

func TestGrantsNotRunning(t *testing.T) {
	st := sqliteStore(t)
	src := &countingSource{Source: st}
	g := access.NewGrants(src, memkv.New(), time.Hour, nil) // no Run: no notices, so no cache
	for range 3 {
		granted(t, g, vkey, "github", "create_issue")
	}
	if n := src.n.Load(); n != 3 {
		t.Errorf("%d database reads without Run, want 3 (uncached)", n)
	}
}

// TestGrantsAcrossProcesses: two proxies' grants over one database and
// one bus, cached for an hour: a decision taken through one reaches the
// other through the bus alone.
func TestGrantsAcrossProcesses(t *testing.T) {
	buses := []struct {
		name string
		open func(t *testing.T) access.Bus
	}{
		{"memkv", func(t *testing.T) access.Bus { kv := memkv.New(); t.Cleanup(func() { kv.Close() }); return kv }},
		{"Redis", func(t *testing.T) access.Bus { return storetest.RedisKV(t) }},
	}
	for _, b := range buses {
		t.Run(b.name, func(t *testing.T) {
			bus := b.open(t)
			st := sqliteStore(t)
			g1 := access.Running(t, access.NewGrants(st, bus, time.Hour, nil))
			g2 := access.Running(t, access.NewGrants(st, bus, time.Hour, nil))
			var decisions []access.Status
			svc := access.NewService(access.Config{Store: st, Grants: g1,
				OnDecision: func(_ context.Context, r access.Request) { decisions = append(decisions, r.Status) }})

			r, err := svc.Create(t.Context(), newRequest(vkey.Caller(), "github", "create_issue"))
			if err != nil {
				t.Fatal(err)
			}
			if granted(t, g1, vkey, "github", "create_issue") || granted(t, g2, vkey, "github", "create_issue") {
				t.Fatal("granted while pending")
			}
			if _, err := svc.Approve(t.Context(), r.ID, "admin:admin"); err != nil {
				t.Fatal(err)
			}
			if !granted(t, g1, vkey, "github", "create_issue") {
				t.Error("not granted at once in the process that approved")
			}
			eventually(t, propagation, "approval seen by the other process", func() bool {
				return granted(t, g2, vkey, "github", "create_issue")
			})
			if granted(t, g2, vkey, "github", "delete_repo") {
				t.Error("a tool not requested is granted")
			}
			if _, err := svc.Revoke(t.Context(), r.ID, "admin:admin", "done"); err != nil {
				t.Fatal(err)
			}
			if granted(t, g1, vkey, "github", "create_issue") {
				t.Error("still granted in the process that revoked")
			}
			eventually(t, propagation, "revocation seen by the other process", func() bool {
				return !granted(t, g2, vkey, "github", "create_issue")
			})
			if diff := cmp.Diff([]access.Status{access.StatusApproved, access.StatusRevoked}, decisions); diff != "" {
				t.Errorf("OnDecision saw (-want +got):\n%s", diff)
			}
		})
	}
}

// flakyBus is a bus whose pings fail while down is set.
type flakyBus struct {
	*memkv.KV
	down atomic.Bool
}

func (b *flakyBus) Ping(ctx context.Context) error {
	if b.down.Load() {
		return errors.New("bus unreachable")
	}
	return b.KV.Ping(ctx)
}

// TestGrantsBusDown: while the bus does not answer, a notice may be lost,
// so every question goes to the database; when it is back the cache is
// used again.
func TestGrantsBusDown(t *testing.T) {
	st := sqliteStore(t)
	src := &countingSource{Source: st}
	bus := &flakyBus{KV: memkv.New()}
	t.Cleanup(func() { bus.KV.Close() })
	g := access.Running(t, access.NewGrants(src, bus, time.Hour, nil))
	granted(t, g, vkey, "github", "t")
	granted(t, g, vkey, "github", "t")
	if n := src.n.Load(); n != 1 {
		t.Fatalf("%d reads with the bus up, want 1", n)
	}
	// A grant made while the bus is down, its notice lost: the cached "no"
	// must not outlive the outage's detection.
	bus.down.Store(true)
	r := mustCreate(t, st, newRequest(vkey.Caller(), "github", "t"))
	if _, err := st.Approve(t.Context(), r.ID, "admin:admin"); err != nil {
		t.Fatal(err)
	}
	eventually(t, propagation+time.Second, "grant seen with the bus down", func() bool {
		return granted(t, g, vkey, "github", "t")
	})
	before := src.n.Load()
	granted(t, g, vkey, "github", "t")
	granted(t, g, vkey, "github", "t")
	if n := src.n.Load() - before; n != 2 {
		t.Errorf("%d reads for 2 questions with the bus down, want 2 (uncached)", n)
	}
	bus.down.Store(false)
	eventually(t, propagation+time.Second, "cache used again with the bus back", func() bool {
		before := src.n.Load()
		granted(t, g, vkey, "github", "t")
		granted(t, g, vkey, "github", "t")
		return src.n.Load()-before <= 1
	})
}

// changes records what an OnChange hook was told.
type changes struct {
	mu  sync.Mutex
	all []string
}

func (c *changes) hook(user, server string) {
	c.mu.Lock()
	c.all = append(c.all, user+"|"+server)
	c.mu.Unlock()
}

func (c *changes) saw(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.all, s)
}

// TestGrantsOnChange: a decision calls the change hooks of the process
// that took it at once and of another process through the bus, naming the
// requester and the server (the tool gateway refreshes the requester's
// live sessions from them).
func TestGrantsOnChange(t *testing.T) {
	bus := memkv.New()
	t.Cleanup(func() { bus.Close() })
	st := sqliteStore(t)
	g1 := access.Running(t, access.NewGrants(st, bus, time.Hour, nil))
	g2 := access.Running(t, access.NewGrants(st, bus, time.Hour, nil))
	var c1, c2 changes
	g1.OnChange(c1.hook)
	g2.OnChange(c2.hook)
	svc := access.NewService(access.Config{Store: st, Grants: g1})
	r, err := svc.Create(t.Context(), newRequest(vkey.Caller(), "github", "create_issue"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(t.Context(), r.ID, "admin:admin"); err != nil {
		t.Fatal(err)
	}
	want := vkey.Caller() + "|github"
	if !c1.saw(want) {
		t.Errorf("the approving process's hook saw %q, want %q at once", c1.all, want)
	}
	eventually(t, propagation, "the other process's hook called", func() bool { return c2.saw(want) })
}
