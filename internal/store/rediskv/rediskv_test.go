package rediskv_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// open is a KV under a prefix of its own; RedisKV skips the test when no
// server is configured.
func open(t *testing.T) *rediskv.KV { return storetest.RedisKV(t) }

func TestValues(t *testing.T) {
	storetest.RedisKV(t) // skips the whole suite when no server is configured
	storetest.ExerciseValues(t, open)
}

func TestCounters(t *testing.T) {
	storetest.RedisKV(t)
	storetest.ExerciseCounters(t, open)
}

func TestLogs(t *testing.T) {
	storetest.RedisKV(t)
	storetest.ExerciseLogs(t, open)
}

func TestBus(t *testing.T) {
	storetest.RedisKV(t)
	storetest.ExerciseBus(t, open)
}

// TestPrefixIsolation checks that two KVs with different prefixes on one
// server see neither each other's keys nor each other's channels.
func TestPrefixIsolation(t *testing.T) {
	a, b := storetest.RedisKV(t), storetest.RedisKV(t)
	ctx := t.Context()
	if err := a.Set(ctx, "k", []byte("a"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get through another prefix: got error %v, want store.ErrNotFound", err)
	}
	sb, err := b.Subscribe(ctx, "ch")
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sb.Close()
	if err := a.Publish(ctx, "ch", []byte("for a")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := b.Publish(ctx, "ch", []byte("for b")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	select {
	case got := <-sb.C():
		if string(got) != "for b" {
			t.Errorf("first message through prefix b: got %q, want %q", got, "for b")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no message through prefix b within 5s")
	}
}

// TestOpen checks that Open parses the URL, that the KV it returns owns its
// client, and that a bad URL is an error rather than a panic.
func TestOpen(t *testing.T) {
	if _, err := rediskv.Open("not a url", "p:"); err == nil {
		t.Errorf("Open(bad url): got nil error, want an error")
	}
	raw := os.Getenv(storetest.RedisURLEnv)
	if raw == "" {
		t.Skip("set " + storetest.RedisURLEnv + "=redis://127.0.0.1:6379/0 to run Redis tests")
	}
	kv, err := rediskv.Open(raw, "svctest:open:")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := kv.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := kv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := kv.Ping(context.Background()); err == nil {
		t.Errorf("Ping after Close: got nil error, want an error")
	}
}

// BenchmarkScripts measures one round trip of each atomic script against
// IncrBy's, in parallel over 64 keys.
func BenchmarkScripts(b *testing.B) {
	kv := storetest.RedisKV(b)
	ops := []struct {
		name string
		op   func(ctx context.Context, key string) error
	}{
		{"IncrBy", func(ctx context.Context, key string) error {
			_, err := kv.IncrBy(ctx, key, 1, time.Hour)
			return err
		}},
		{"Window", func(ctx context.Context, key string) error {
			_, err := kv.Window(ctx, key, time.Minute, 1<<40, 1)
			return err
		}},
		{"Reserve", func(ctx context.Context, key string) error {
			_, _, err := kv.Reserve(ctx, key, 1, 1<<40, time.Hour)
			return err
		}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if err := o.op(ctx, o.name+strconv.FormatInt(n.Add(1)%64, 10)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestAdmitOneSlot checks that Admit refuses keys that Redis Cluster would
// place in different slots, and accepts keys sharing a hash tag.
func TestAdmitOneSlot(t *testing.T) {
	kv := storetest.RedisKV(t)
	tests := []struct {
		name    string
		windows []string
		reserve string
		err     error
	}{
		{"one untagged window", []string{"rpm"}, "", nil},
		{"shared tag", []string{"l:{k1}:rpm", "l:{k1}:tpm"}, "l:{k1}:spend", nil},
		{"two untagged windows", []string{"rpm", "tpm"}, "", rediskv.ErrCrossSlot},
		{"tags differ", []string{"l:{k1}:rpm"}, "l:{k2}:spend", rediskv.ErrCrossSlot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req store.AdmitRequest
			for _, k := range tt.windows {
				req.Windows = append(req.Windows, store.WindowCheck{Key: k, Window: time.Minute, Limit: 10, Cost: 1})
			}
			if tt.reserve != "" {
				req.Reserve = &store.Reservation{Key: tt.reserve, Amount: 1, Cap: 10, TTL: time.Minute}
			}
			_, err := kv.Admit(t.Context(), req)
			if !errors.Is(err, tt.err) {
				t.Errorf("Admit: got error %v, want %v", err, tt.err)
			}
		})
	}
}

// TestSubscriptionEndsWithItsConnection: when Redis drops a subscription's
// connection, go-redis would subscribe again on a new one and the messages
// published in between would be lost unnoticed; the subscription ends
// instead, and a new one works.
func TestSubscriptionEndsWithItsConnection(t *testing.T) {
	storetest.RedisKV(t) // skips without a server
	raw := os.Getenv(storetest.RedisURLEnv)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", storetest.RedisURLEnv, err)
	}
	name := "svctest-sub-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	q := u.Query()
	q.Set("client_name", name)
	u.RawQuery = q.Encode()
	kv, err := rediskv.Open(u.String(), name+":")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer kv.Close()
	ctx := t.Context()
	sub, err := kv.Subscribe(ctx, "ch")
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()

	admin, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	other := redis.NewClient(admin)
	defer other.Close()
	killed, err := other.Do(ctx, "CLIENT", "KILL", "ID", pubsubClientID(t, other, name)).Int64()
	if err != nil || killed != 1 {
		t.Fatalf("CLIENT KILL of the subscription's connection: %d killed, %v", killed, err)
	}
	select {
	case msg, ok := <-sub.C():
		if ok {
			t.Fatalf("after its connection was killed: got message %q, want the subscription ended", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not end within 10s of its connection being killed")
	}

	again, err := kv.Subscribe(ctx, "ch")
	if err != nil {
		t.Fatalf("Subscribe after the loss: %v", err)
	}
	defer again.Close()
	if err := kv.Publish(ctx, "ch", []byte("back")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	select {
	case msg := <-again.C():
		if string(msg) != "back" {
			t.Errorf("new subscription: got %q, want %q", msg, "back")
		}
	case <-time.After(5 * time.Second):
		t.Error("new subscription: no message within 5s")
	}
}

// pubsubClientID is the id of the one connection named name that is
// subscribed to a channel.
func pubsubClientID(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	list, err := c.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	var ids []string
	for line := range strings.SplitSeq(list, "\n") {
		f := map[string]string{}
		for kv := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] == "1" {
			ids = append(ids, f["id"])
		}
	}
	if len(ids) != 1 {
		t.Fatalf("connections named %s subscribed to a channel: %v, want one", name, ids)
	}
	return ids[0]
}

// TestSubscriptionEndsWhenRedisFallsSilent: a connection that stays open
// but carries nothing (a network partition, a frozen server) is pinged,
// and when the ping goes unanswered the subscription ends.
func TestSubscriptionEndsWhenRedisFallsSilent(t *testing.T) {
	storetest.RedisKV(t) // skips without a server
	// Pings every 300 ms: an answer may be up to 300 ms late before the
	// subscription ends, which a loaded CI machine's scheduling stays under
	// (at 100 ms it once did not).
	defer rediskv.SetPingEvery(300 * time.Millisecond)()
	u, err := url.Parse(os.Getenv(storetest.RedisURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	relay := newFreezableRelay(t, u.Host)
	u.Host = relay.addr
	kv, err := rediskv.Open(u.String(), "svctest-silent-"+strconv.FormatInt(time.Now().UnixNano(), 36)+":")
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	sub, err := kv.Subscribe(t.Context(), "ch")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	select { // pinged and answered: still subscribed after many pings
	case _, ok := <-sub.C():
		t.Fatalf("a quiet but answering connection: got a message or an end (%v)", ok)
	case <-time.After(2 * time.Second):
	}
	relay.freeze()
	select {
	case _, ok := <-sub.C():
		if ok {
			t.Fatal("got a message through a frozen connection")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription did not end within 5s of its connection falling silent")
	}
}

// freezableRelay copies bytes between clients and a server until frozen,
// then carries nothing either way while keeping every connection open.
// With freezeOn set, it freezes itself when a client sends those bytes
// (which it then drops).
type freezableRelay struct {
	addr     string
	frozen   atomic.Bool
	freezeOn atomic.Pointer[[]byte]
}

func newFreezableRelay(t *testing.T, server string) *freezableRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &freezableRelay{addr: ln.Addr().String()}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go r.copy(s, c)
			go r.copy(c, s)
		}
	}()
	return r
}

func (r *freezableRelay) freeze() { r.frozen.Store(true) }

// copy copies src to dst, dropping what it reads once frozen.
func (r *freezableRelay) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if on := r.freezeOn.Load(); on != nil && bytes.Contains(bytes.ToLower(buf[:n]), *on) {
			r.freeze()
		}
		if !r.frozen.Load() {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
	}
}

// TestSubscribeEndsWithItsContext: a Subscribe whose confirmation never
// comes (the server froze after the handshake) returns when its context
// ends; go-redis alone would wait for ever.
func TestSubscribeEndsWithItsContext(t *testing.T) {
	storetest.RedisKV(t) // skips without a server
	u, err := url.Parse(os.Getenv(storetest.RedisURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	relay := newFreezableRelay(t, u.Host)
	on := []byte("subscribe")
	relay.freezeOn.Store(&on)
	u.Host = relay.addr
	kv, err := rediskv.Open(u.String(), "svctest-frozen-"+strconv.FormatInt(time.Now().UnixNano(), 36)+":")
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	// Cancelled, not timed out: go-redis takes a context's deadline as
	// the read's, but followers subscribe with contexts that have none.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		sub, err := kv.Subscribe(ctx, "ch")
		if err == nil {
			sub.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Subscribe through a frozen server: got a subscription, want an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Subscribe did not return within 5s of its context ending")
	}
}
