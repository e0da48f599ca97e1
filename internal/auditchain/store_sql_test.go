package auditchain_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const testKey = "audit-chain-test-key-0123456789abcdef"

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// clock returns a Now that advances a second per call.
func clock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

func newStore(db *sqlstore.DB, key string) *auditchain.SQLStore {
	return auditchain.NewSQLStore(db, auditchain.Options{Key: []byte(key), Now: clock()})
}

// appendN appends n events: event types alternate a and b, actors x, y, z.
func appendN(t *testing.T, s *auditchain.SQLStore, n int) []auditchain.Entry {
	t.Helper()
	var out []auditchain.Entry
	for i := range n {
		e, err := s.Append(t.Context(), auditchain.Event{Type: []string{"a", "b"}[i%2], Actor: []string{"x", "y", "z"}[i%3],
			Subject: fmt.Sprintf("s%d", i+1), Details: map[string]any{"i": i + 1, "tag": "t"}})
		if err != nil {
			t.Fatalf("Append %d: %v", i+1, err)
		}
		out = append(out, e)
	}
	return out
}

func verify(t *testing.T, s *auditchain.SQLStore) auditchain.Report {
	t.Helper()
	r, err := s.Verify(t.Context())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return r
}

// wantBroken checks that r reports seq as the first broken one, for reason.
func wantBroken(t *testing.T, r auditchain.Report, seq int64, reason string) {
	t.Helper()
	if r.OK || r.FirstBrokenSeq == nil || *r.FirstBrokenSeq != seq || r.Reason != reason {
		got := "nil"
		if r.FirstBrokenSeq != nil {
			got = fmt.Sprint(*r.FirstBrokenSeq)
		}
		t.Errorf("Verify = ok %v, first_broken_seq %s, reason %q; want broken at %d (%s)", r.OK, got, r.Reason, seq, reason)
	}
	if r.Entries != seq-1 {
		t.Errorf("Verify: entries %d, want %d (those before the broken one)", r.Entries, seq-1)
	}
}

func wantOK(t *testing.T, r auditchain.Report, entries int64) {
	t.Helper()
	if !r.OK || r.FirstBrokenSeq != nil || r.Entries != entries || r.HeadSeq != entries {
		t.Errorf("Verify = %+v; want ok with %d entries", r, entries)
	}
}

func exec(t *testing.T, db *sqlstore.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestSQLStore(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		reg := prometheus.NewRegistry()
		s := auditchain.NewSQLStore(db, auditchain.Options{Now: clock(), Metrics: auditchain.NewMetrics(reg)})
		wantOK(t, verify(t, s), 0)
		if got := verify(t, s).HeadHash; got != auditchain.GenesisHash {
			t.Errorf("empty chain's head hash %q, want the genesis hash", got)
		}
		es := appendN(t, s, 7)
		prev := auditchain.GenesisHash
		for i, e := range es {
			if e.Seq != int64(i+1) || e.PrevHash != prev || len(e.Hash) != 64 || e.Alg != auditchain.AlgSHA256 {
				t.Errorf("entry %d: seq %d prev %q hash %q alg %q", i+1, e.Seq, e.PrevHash, e.Hash, e.Alg)
			}
			prev = e.Hash
		}
		if got, want := string(es[0].Details), `{"i":1,"tag":"t"}`; got != want {
			t.Errorf("details %s, want %s", got, want)
		}
		r := verify(t, s)
		wantOK(t, r, 7)
		if r.HeadHash != es[6].Hash {
			t.Errorf("head hash %q, want the last entry's %q", r.HeadHash, es[6].Hash)
		}

		list := func(f auditchain.Filter) []int64 {
			t.Helper()
			got, err := s.List(t.Context(), f)
			if err != nil {
				t.Fatalf("List(%+v): %v", f, err)
			}
			seqs := []int64{}
			for _, e := range got {
				seqs = append(seqs, e.Seq)
			}
			return seqs
		}
		for _, c := range []struct {
			f    auditchain.Filter
			want []int64
		}{
			{auditchain.Filter{}, []int64{7, 6, 5, 4, 3, 2, 1}},
			{auditchain.Filter{Limit: 2}, []int64{7, 6}},
			{auditchain.Filter{Limit: 2, Before: 6}, []int64{5, 4}},
			{auditchain.Filter{EventType: "b"}, []int64{6, 4, 2}},
			{auditchain.Filter{Actor: "x"}, []int64{7, 4, 1}},
			{auditchain.Filter{EventType: "a", Actor: "x", Before: 7}, []int64{1}},
			{auditchain.Filter{EventType: "none"}, []int64{}},
			{auditchain.Filter{Before: 1}, []int64{}},
		} {
			if got := list(c.f); !slices.Equal(got, c.want) {
				t.Errorf("List(%+v) = %v, want %v", c.f, got, c.want)
			}
		}
		got, err := s.List(t.Context(), auditchain.Filter{Limit: 1})
		if err != nil || len(got) != 1 || got[0].Hash != es[6].Hash || !got[0].Timestamp.Equal(es[6].Timestamp) ||
			string(got[0].Details) != string(es[6].Details) || got[0].Subject != "s7" {
			t.Errorf("List read back %+v, %v; want %+v", got, err, es[6])
		}

		if _, err := s.Append(t.Context(), auditchain.Event{}); !errors.Is(err, auditchain.ErrInvalid) {
			t.Errorf("Append of an event without a type: %v, want ErrInvalid", err)
		}
		counts := map[string]float64{}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			counts[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
		if counts["svc_audit_chain_entries_total"] != 7 || counts["svc_audit_chain_failures_total"] != 1 {
			t.Errorf("metrics %v, want 7 appended and 1 failure", counts)
		}
		wantOK(t, verify(t, s), 7)
	})
}

// rehash recomputes seq's hash as someone without the key would (plain
// SHA-256 of its stored fields) and stores it.
func rehash(t *testing.T, db *sqlstore.DB, s *auditchain.SQLStore, seq int64, prev string) string {
	t.Helper()
	es, err := s.List(t.Context(), auditchain.Filter{Before: seq + 1, Limit: 1})
	if err != nil || len(es) != 1 || es[0].Seq != seq {
		t.Fatalf("read entry %d: %v %v", seq, es, err)
	}
	e := es[0]
	e.Alg, e.PrevHash = auditchain.AlgSHA256, prev
	sum := sha256.Sum256(e.Canonical())
	h := hex.EncodeToString(sum[:])
	exec(t, db, `UPDATE audit_chain SET alg = ?, prev_hash = ?, hash = ? WHERE seq = ?`, e.Alg, prev, h, seq)
	return h
}

// TestTamper changes a stored chain of six entries the ways someone with
// write access to the database could, and checks the seq Verify names.
func TestTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, db *sqlstore.DB, s *auditchain.SQLStore)
		seq    int64
		reason string
	}{
		{"details", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET details = ? WHERE seq = 3`, `{"i":3,"tag":"u"}`)
		}, 3, auditchain.ReasonHash},
		{"actor", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET actor = 'mallory' WHERE seq = 2`)
		}, 2, auditchain.ReasonHash},
		{"event type", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET event_type = 'c' WHERE seq = 4`)
		}, 4, auditchain.ReasonHash},
		{"timestamp", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET created_at = created_at + 1 WHERE seq = 5`)
		}, 5, auditchain.ReasonHash},
		{"swap contents", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET seq = 100 WHERE seq = 2`)
			exec(t, db, `UPDATE audit_chain SET seq = 2 WHERE seq = 4`)
			exec(t, db, `UPDATE audit_chain SET seq = 4 WHERE seq = 100`)
		}, 2, auditchain.ReasonPrevHash},
		{"swap neighbours", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET seq = 100 WHERE seq = 5`)
			exec(t, db, `UPDATE audit_chain SET seq = 5 WHERE seq = 6`)
			exec(t, db, `UPDATE audit_chain SET seq = 6 WHERE seq = 100`)
		}, 5, auditchain.ReasonPrevHash},
		{"delete middle", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `DELETE FROM audit_chain WHERE seq = 3`)
		}, 3, auditchain.ReasonMissing},
		{"delete first", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `DELETE FROM audit_chain WHERE seq = 1`)
		}, 1, auditchain.ReasonMissing},
		{"delete last", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `DELETE FROM audit_chain WHERE seq = 6`)
		}, 6, auditchain.ReasonMissing},
		{"prev hash", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET prev_hash = ? WHERE seq = 4`, auditchain.GenesisHash)
		}, 4, auditchain.ReasonPrevHash},
		{"rehashed entry", func(t *testing.T, db *sqlstore.DB, s *auditchain.SQLStore) {
			// Its own hash recomputes: the next entry's link does not.
			exec(t, db, `UPDATE audit_chain SET subject = 'other' WHERE seq = 3`)
			var prev string
			if err := db.QueryRow(t.Context(), `SELECT hash FROM audit_chain WHERE seq = 2`).Scan(&prev); err != nil {
				t.Fatal(err)
			}
			rehash(t, db, s, 3, prev)
		}, 4, auditchain.ReasonPrevHash},
		{"alg", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain SET alg = ? WHERE seq = 2`, auditchain.AlgHMAC)
		}, 2, auditchain.ReasonAlg},
		{"head hash", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `UPDATE audit_chain_head SET hash = ? WHERE id = 1`, auditchain.GenesisHash)
		}, 6, auditchain.ReasonHead},
		{"row past the head", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			exec(t, db, `INSERT INTO audit_chain (seq, event_type, actor, subject, details, created_at, prev_hash, hash, alg)
				SELECT 9, event_type, actor, subject, details, created_at, hash, hash, alg FROM audit_chain WHERE seq = 6`)
		}, 7, auditchain.ReasonHead},
		{"truncated with the head moved back", func(t *testing.T, db *sqlstore.DB, _ *auditchain.SQLStore) {
			// Undetectable without a copy of the head kept elsewhere: the
			// chain is a valid, shorter one.
			exec(t, db, `DELETE FROM audit_chain WHERE seq = 6`)
			exec(t, db, `UPDATE audit_chain_head SET seq = 5, hash = (SELECT hash FROM audit_chain WHERE seq = 5) WHERE id = 1`)
		}, 0, ""},
	}
	for _, b := range storetest.SQLBackends {
		for _, c := range cases {
			t.Run(b.Name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				db := storetest.OpenSQL(t, b.URL(t))
				s := newStore(db, "")
				appendN(t, s, 6)
				wantOK(t, verify(t, s), 6)
				c.tamper(t, db, s)
				if c.seq == 0 {
					wantOK(t, verify(t, s), 5)
					return
				}
				wantBroken(t, verify(t, s), c.seq, c.reason)
			})
		}
	}
}

// TestKey covers SVC_AUDIT_CHAIN_KEY: keyed entries, a chain keyed later,
// and rewrites that need the key.
func TestKey(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		plain := newStore(db, "")
		appendN(t, plain, 3)
		keyed := newStore(db, testKey)
		es := appendN(t, keyed, 3)
		if es[0].Alg != auditchain.AlgHMAC || es[0].Seq != 4 {
			t.Fatalf("keyed append: seq %d alg %q, want 4 hmac-sha256", es[0].Seq, es[0].Alg)
		}
		wantOK(t, verify(t, keyed), 6)
		wantBroken(t, verify(t, plain), 4, auditchain.ReasonKeyRequired)
		// Another key: the keyed mark does not hold under it, so every entry
		// must be keyed, and the first is not.
		wantBroken(t, verify(t, newStore(db, testKey+"-other")), 1, auditchain.ReasonAlg)
		if _, err := plain.Append(t.Context(), auditchain.Event{Type: "a"}); !errors.Is(err, auditchain.ErrKeyRequired) {
			t.Errorf("append without the key to a keyed chain: %v, want ErrKeyRequired", err)
		}
		wantOK(t, verify(t, keyed), 6)

		// Rewriting from seq 4 on with plain SHA-256, consistently, and
		// moving the keyed mark past it.
		prev := es[0].PrevHash
		for seq := int64(4); seq <= 6; seq++ {
			prev = rehash(t, db, keyed, seq, prev)
		}
		exec(t, db, `UPDATE audit_chain_head SET hash = ?, keyed_from = 7 WHERE id = 1`, prev)
		wantBroken(t, verify(t, keyed), 1, auditchain.ReasonAlg)
		exec(t, db, `UPDATE audit_chain_head SET keyed_from = 0, keyed_mark = '' WHERE id = 1`)
		wantBroken(t, verify(t, keyed), 1, auditchain.ReasonAlg)
		// Without the key the rewrite passes: what the key is for.
		wantOK(t, verify(t, plain), 6)
	})
}

// TestKeyedFromStart: a chain keyed from its first entry, rewritten whole
// with plain SHA-256, is reported at seq 1.
func TestKeyedFromStart(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := newStore(db, testKey)
		appendN(t, s, 4)
		wantOK(t, verify(t, s), 4)
		prev := auditchain.GenesisHash
		for seq := int64(1); seq <= 4; seq++ {
			prev = rehash(t, db, s, seq, prev)
		}
		exec(t, db, `UPDATE audit_chain_head SET hash = ?, keyed_from = 0, keyed_mark = '' WHERE id = 1`, prev)
		wantBroken(t, verify(t, s), 1, auditchain.ReasonAlg)
		exec(t, db, `UPDATE audit_chain SET alg = ? `, auditchain.AlgHMAC)
		wantBroken(t, verify(t, s), 1, auditchain.ReasonHash)
	})
}

// TestConcurrentAppends appends from goroutines through two handles on one
// database, as two replicas would: seq 1..N with no gap, and the chain
// verifies.
func TestConcurrentAppends(t *testing.T) {
	const workers, each = 8, 25
	for _, b := range storetest.SQLBackends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			url := b.URL(t)
			replicas := []*auditchain.SQLStore{newStore(storetest.OpenSQL(t, url), ""), newStore(storetest.OpenSQL(t, url), "")}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for w := range workers {
				wg.Go(func() {
					s := replicas[w%2]
					for i := range each {
						if _, err := s.Append(ctx, auditchain.Event{Type: "c", Actor: fmt.Sprint(w), Subject: fmt.Sprint(i)}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("Append: %v", err)
			}
			es, err := replicas[0].List(t.Context(), auditchain.Filter{Limit: auditchain.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != workers*each {
				t.Fatalf("%d entries, want %d", len(es), workers*each)
			}
			for i, e := range es {
				if want := int64(workers*each - i); e.Seq != want {
					t.Fatalf("entry %d has seq %d, want %d", i, e.Seq, want)
				}
			}
			wantOK(t, verify(t, replicas[1]), workers*each)
		})
	}
}

// TestVerifyPages verifies a chain longer than one page and finds a break
// in a later page.
func TestVerifyPages(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := newStore(db, "")
		appendN(t, s, 1203)
		wantOK(t, verify(t, s), 1203)
		exec(t, db, `UPDATE audit_chain SET subject = 'x' WHERE seq = 1101`)
		wantBroken(t, verify(t, s), 1101, auditchain.ReasonHash)
	})
}
