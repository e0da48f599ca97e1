package saml

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

func TestMemoryReplay(t *testing.T) {
	now := testNow
	r := NewMemoryReplay(2)
	r.now = func() time.Time { return now }
	ctx := context.Background()
	claim := func(id string, until time.Time) bool {
		t.Helper()
		fresh, err := r.Claim(ctx, id, until)
		if err != nil {
			t.Fatalf("claim %s: %v", id, err)
		}
		return fresh
	}
	if !claim("a", now.Add(time.Minute)) || claim("a", now.Add(time.Minute)) {
		t.Fatal("a claimed twice, or not at all")
	}
	if !claim("b", now.Add(time.Hour)) {
		t.Fatal("b not fresh")
	}
	if _, err := r.Claim(ctx, "c", now.Add(time.Minute)); !errors.Is(err, ErrReplayFull) {
		t.Fatalf("over capacity: %v; want ErrReplayFull", err)
	}
	now = now.Add(2 * time.Minute) // a expires and makes room
	if !claim("a", now.Add(time.Minute)) {
		t.Fatal("an expired id is not fresh again")
	}
	if claim("b", now.Add(time.Hour)) {
		t.Fatal("b fresh again before it expired")
	}
}

func TestKVReplayIsSingleUseAcrossReplicas(t *testing.T) {
	kv := memkv.New()
	t.Cleanup(func() { _ = kv.Close() })
	replicas := []*KVReplay{NewKVReplay(kv), NewKVReplay(kv)}
	until := time.Now().Add(time.Minute)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		fresh int
	)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(r *KVReplay) {
			defer wg.Done()
			ok, err := r.Claim(context.Background(), "_assertion-1", until)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		}(replicas[i%2])
	}
	wg.Wait()
	if fresh != 1 {
		t.Fatalf("%d concurrent claims succeeded; want 1", fresh)
	}
	if ok, err := replicas[0].Claim(context.Background(), "_assertion-2", until); err != nil || !ok {
		t.Fatalf("another id: %v %v", ok, err)
	}
}

// TestVerifyReplayAcrossReplicas: two verifiers over one KV store accept
// an assertion once between them.
func TestVerifyReplayAcrossReplicas(t *testing.T) {
	kv := memkv.New()
	t.Cleanup(func() { _ = kv.Close() })
	value := signed(t, validSpec(testNow))
	var refused int
	for i := 0; i < 2; i++ {
		v, err := New(Config{SPEntityID: testSP, Certificates: idpCerts(t), Replay: NewKVReplay(kv), Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), value); err != nil {
			wantRefused(t, err, ReasonReplayed)
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("%d of two replicas refused; want 1", refused)
	}
}

type brokenKV struct{}

func (brokenKV) Reserve(context.Context, string, int64, int64, time.Duration) (bool, int64, error) {
	return false, 0, errors.New("connection refused")
}

func TestVerifyReplayStoreDown(t *testing.T) {
	v, err := New(Config{SPEntityID: testSP, Certificates: idpCerts(t), Replay: NewKVReplay(brokenKV{}), Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), signed(t, validSpec(testNow)))
	wantRefused(t, err, ReasonReplayUnavailable)
	if got := apierr.From(err).Status(); got != http.StatusServiceUnavailable {
		t.Errorf("status %d; want 503", got)
	}
}

// recordingReplay records the claims it is asked for.
type recordingReplay struct {
	ids   []string
	until []time.Time
}

func (r *recordingReplay) Claim(_ context.Context, id string, until time.Time) (bool, error) {
	r.ids, r.until = append(r.ids, id), append(r.until, until)
	return true, nil
}

// TestVerifyClaimsUntilExpiry: the ID is kept until the earliest
// NotOnOrAfter plus the skew, the last moment it could be accepted.
func TestVerifyClaimsUntilExpiry(t *testing.T) {
	rec := &recordingReplay{}
	v, err := New(Config{SPEntityID: testSP, Certificates: idpCerts(t), Replay: rec, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	s := validSpec(testNow)
	s.NotOnOrAfter, s.SCDNotOnOrAf = testNow.Add(10*time.Minute), testNow.Add(3*time.Minute)
	if _, err := v.Verify(context.Background(), signed(t, s)); err != nil {
		t.Fatal(err)
	}
	if len(rec.ids) != 1 || rec.ids[0] != s.ID {
		t.Fatalf("claimed %v; want [%s]", rec.ids, s.ID)
	}
	if want := testNow.Add(3*time.Minute + DefaultSkew); !rec.until[0].Equal(want) {
		t.Errorf("claimed until %v; want %v", rec.until[0], want)
	}
}

// BenchmarkVerify is one sign-in: a signed assertion with a few
// attributes, decoded, checked and verified (the replay cache records
// without refusing).
func BenchmarkVerify(b *testing.B) {
	s := validSpec(testNow)
	s.Attrs = []attr{{"email", []string{"alice@example.com"}}, {"groups", []string{"g1", "g2", "g3"}}}
	value := signed(b, s)
	v, err := New(Config{SPEntityID: testSP, Certificates: idpCerts(b), Replay: &recordingReplay{}, Now: func() time.Time { return testNow }})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), value); err != nil {
			b.Fatal(err)
		}
	}
}
