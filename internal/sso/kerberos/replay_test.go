package kerberos

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// sharedReplay is the store replicas share: ids claimed until a time.
type sharedReplay struct {
	mu    sync.Mutex
	ids   map[string]time.Time
	err   error
	calls int
}

func (r *sharedReplay) Claim(_ context.Context, id string, until time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.err != nil {
		return false, r.err
	}
	if _, seen := r.ids[id]; seen {
		return false, nil
	}
	if r.ids == nil {
		r.ids = map[string]time.Time{}
	}
	r.ids[id] = until
	return true, nil
}

// TestSharedReplay: an authenticator is claimed in the shared store until
// it would fail the clock skew anyway; one another replica already claimed
// is refused as a replay though this process never saw it (gokrb5's own
// cache is per process); a store that cannot answer refuses with 503.
func TestSharedReplay(t *testing.T) {
	store := &sharedReplay{}
	r := newSynthRealm(t, Config{Replay: store})
	tkt, key, cname := mintTicket(t, r.kt, now("alice"))
	tok, auth := clientToken(t, tkt, key, synthRealm, cname, reqOpts{})
	if _, _, err := r.v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if len(store.ids) != 1 {
		t.Fatalf("claims %v, want one", store.ids)
	}
	// On the wire the authenticator's time has whole seconds (cusec apart).
	wantUntil := auth.CTime.Truncate(time.Second).Add(DefaultMaxClockSkew)
	for id, until := range store.ids {
		if !strings.Contains(id, "alice@"+synthRealm) || !until.Equal(wantUntil) {
			t.Errorf("claimed %q until %v, want alice's authenticator until its time + the skew (%v)", id, until, wantUntil)
		}
	}

	// A token another replica accepted (the store holds its claim) is
	// refused here though gokrb5's cache in this process never saw it.
	other := newSynthRealm(t, Config{Replay: takenStore{}})
	tkt2, key2, cname2 := mintTicket(t, other.kt, now("bob"))
	tok2, _ := clientToken(t, tkt2, key2, synthRealm, cname2, reqOpts{})
	_, _, err := other.v.Verify(context.Background(), tok2)
	wantReason(t, err, ReasonReplay, tok2)

	down := newSynthRealm(t, Config{Replay: &sharedReplay{err: errors.New("redis: connection refused")}})
	tkt3, key3, cname3 := mintTicket(t, down.kt, now("carol"))
	tok3, _ := clientToken(t, tkt3, key3, synthRealm, cname3, reqOpts{})
	_, _, err = down.v.Verify(context.Background(), tok3)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status() != 503 || ae.Code != "kerberos_replay_unavailable" {
		t.Fatalf("replay store down: %v, want 503 kerberos_replay_unavailable", err)
	}
}

// takenStore answers that every id was claimed already (by another
// replica).
type takenStore struct{}

func (takenStore) Claim(context.Context, string, time.Time) (bool, error) { return false, nil }
