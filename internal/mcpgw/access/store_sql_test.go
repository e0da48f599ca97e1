package access_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// clock is a settable time source, one microsecond further at each read
// so that records are ordered.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func newRequest(user, server string, tools ...string) access.Request {
	return access.Request{ServerID: server, UserID: user, Justification: "needed for " + server, ToolsRequested: tools}
}

func mustCreate(t *testing.T, s access.Store, r access.Request) access.Request {
	t.Helper()
	got, err := s.Create(t.Context(), r)
	if err != nil {
		t.Fatalf("Create(%+v): %v", r, err)
	}
	return got
}

func wantState(t *testing.T, err error, have, want access.Status) {
	t.Helper()
	var se *access.StateError
	if !errors.As(err, &se) || se.Have != have || se.Want != want {
		t.Fatalf("got error %v, want a StateError (have %s, want %s)", err, have, want)
	}
}

func TestSQLStoreCreateGet(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := access.NewSQLStore(db, newClock().now)
		ctx := t.Context()
		in := newRequest("alice", "github", "create_issue", "list_issues", "create_issue")
		in.Justification = "triage ünïcode\nacross lines"
		in.Status = access.StatusApproved // ignored
		in.ID = "chosen"                  // ignored
		r := mustCreate(t, s, in)
		if !strings.HasPrefix(r.ID, access.IDPrefix) || r.Status != access.StatusPending || r.UserID != "user:alice" {
			t.Errorf("Create = %+v; want a generated id, pending, user:alice", r)
		}
		if diff := cmp.Diff([]string{"create_issue", "list_issues"}, r.ToolsRequested); diff != "" {
			t.Errorf("ToolsRequested (-want +got):\n%s", diff)
		}
		got, err := s.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("Get differs from Create (-create +get):\n%s", diff)
		}
		for _, id := range []string{"mcpreq_unknown", "", "\xff\xfe", strings.Repeat("x", 100), "a\x00b"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%q) = %v, want store.ErrNotFound", id, err)
			}
		}
		var ve *access.ValidationError
		if _, err := s.Create(ctx, newRequest("alice", "github")); !errors.As(err, &ve) || ve.Field != "tools_requested" {
			t.Errorf("Create without tools = %v, want a ValidationError on tools_requested", err)
		}
	})
}

func TestSQLStoreStateMachine(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := access.NewSQLStore(db, newClock().now)
		ctx := t.Context()
		const admin = "admin:admin"

		a := mustCreate(t, s, newRequest("virtual_key:k1", "github", "create_issue"))
		approved, err := s.Approve(ctx, a.ID, admin)
		if err != nil {
			t.Fatal(err)
		}
		if approved.Status != access.StatusApproved || approved.DecidedBy != admin || approved.DecidedAt == nil || approved.RevokedAt != nil {
			t.Errorf("Approve = %+v", approved)
		}
		if got, _ := s.Get(ctx, a.ID); !cmp.Equal(got, approved) {
			t.Errorf("Get after Approve = %+v, want %+v", got, approved)
		}
		_, err = s.Approve(ctx, a.ID, admin)
		wantState(t, err, access.StatusApproved, access.StatusPending)
		_, err = s.Deny(ctx, a.ID, admin, "no")
		wantState(t, err, access.StatusApproved, access.StatusPending)

		revoked, err := s.Revoke(ctx, a.ID, "admin:other", "left the team")
		if err != nil {
			t.Fatal(err)
		}
		if revoked.Status != access.StatusRevoked || revoked.RevokedBy != "admin:other" || revoked.Reason != "left the team" ||
			revoked.RevokedAt == nil || revoked.DecidedBy != admin || !revoked.DecidedAt.Equal(*approved.DecidedAt) {
			t.Errorf("Revoke = %+v; want the approval kept and the revocation recorded", revoked)
		}
		_, err = s.Revoke(ctx, a.ID, admin, "")
		wantState(t, err, access.StatusRevoked, access.StatusApproved)
		_, err = s.Approve(ctx, a.ID, admin)
		wantState(t, err, access.StatusRevoked, access.StatusPending)

		d := mustCreate(t, s, newRequest("virtual_key:k1", "github", "delete_repo"))
		_, err = s.Revoke(ctx, d.ID, admin, "")
		wantState(t, err, access.StatusPending, access.StatusApproved)
		denied, err := s.Deny(ctx, d.ID, admin, "too dangerous")
		if err != nil {
			t.Fatal(err)
		}
		if denied.Status != access.StatusDenied || denied.Reason != "too dangerous" || denied.DecidedBy != admin || denied.DecidedAt == nil {
			t.Errorf("Deny = %+v", denied)
		}
		_, err = s.Approve(ctx, d.ID, admin)
		wantState(t, err, access.StatusDenied, access.StatusPending)
		_, err = s.Revoke(ctx, d.ID, admin, "")
		wantState(t, err, access.StatusDenied, access.StatusApproved)

		for name, f := range map[string]func() error{
			"Approve": func() error { _, err := s.Approve(ctx, "mcpreq_nope", admin); return err },
			"Deny":    func() error { _, err := s.Deny(ctx, "mcpreq_nope", admin, ""); return err },
			"Revoke":  func() error { _, err := s.Revoke(ctx, "\xff", admin, ""); return err },
		} {
			if err := f(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s(unknown) = %v, want store.ErrNotFound", name, err)
			}
		}
		var ve *access.ValidationError
		p := mustCreate(t, s, newRequest("virtual_key:k1", "github", "x"))
		if _, err := s.Deny(ctx, p.ID, admin, strings.Repeat("r", access.MaxReason+1)); !errors.As(err, &ve) || ve.Field != "reason" {
			t.Errorf("Deny with a long reason = %v, want a ValidationError on reason", err)
		}
		if _, err := s.Approve(ctx, p.ID, ""); !errors.As(err, &ve) {
			t.Errorf("Approve by nobody = %v, want a ValidationError", err)
		}
		if got, _ := s.Get(ctx, p.ID); got.Status != access.StatusPending {
			t.Errorf("refused decisions changed the request: %+v", got)
		}
	})
}

// TestSQLStoreRace decides one request from many goroutines at once:
// exactly one decision wins; every other gets a StateError.
func TestSQLStoreRace(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := access.NewSQLStore(db, nil)
		r := mustCreate(t, s, newRequest("user:bob", "github", "create_issue"))
		const n = 8
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			wins, conflicts int
			winner          access.Status
		)
		for i := range n {
			wg.Go(func() {
				var (
					got access.Request
					err error
				)
				if i%2 == 0 {
					got, err = s.Approve(context.Background(), r.ID, fmt.Sprintf("admin:%d", i))
				} else {
					got, err = s.Deny(context.Background(), r.ID, fmt.Sprintf("admin:%d", i), "race")
				}
				var se *access.StateError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
					winner = got.Status
				case errors.As(err, &se):
					conflicts++
				default:
					t.Errorf("decision %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || conflicts != n-1 {
			t.Fatalf("got %d wins and %d conflicts, want 1 and %d", wins, conflicts, n-1)
		}
		if got, _ := s.Get(t.Context(), r.ID); got.Status != winner {
			t.Errorf("stored status %s, the winner's %s", got.Status, winner)
		}
	})
}

func TestSQLStoreList(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := access.NewSQLStore(db, newClock().now)
		ctx := t.Context()
		var all []access.Request // in creation order
		for i := range 6 {
			user := []string{"user:a", "user:b"}[i%2]
			server := []string{"github", "jira", "slack"}[i%3]
			all = append(all, mustCreate(t, s, newRequest(user, server, "t")))
		}
		if _, err := s.Approve(ctx, all[0].ID, "admin:admin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Deny(ctx, all[1].ID, "admin:admin", ""); err != nil {
			t.Fatal(err)
		}
		ids := func(rs []access.Request) []string {
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for _, c := range []struct {
			name string
			f    access.Filter
			want []int // indexes into all, newest first
		}{
			{"all", access.Filter{}, []int{5, 4, 3, 2, 1, 0}},
			{"pending", access.Filter{Status: access.StatusPending}, []int{5, 4, 3, 2}},
			{"approved", access.Filter{Status: access.StatusApproved}, []int{0}},
			{"user", access.Filter{UserID: "user:b"}, []int{5, 3, 1}},
			{"server", access.Filter{ServerID: "github"}, []int{3, 0}},
			{"user and server and status", access.Filter{UserID: "user:b", ServerID: "jira", Status: access.StatusDenied}, []int{1}},
			{"limit", access.Filter{Limit: 2}, []int{5, 4}},
			{"nothing", access.Filter{UserID: "user:nobody"}, nil},
			{"unstorable", access.Filter{UserID: "\xff"}, nil},
		} {
			got, err := s.List(ctx, c.f)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			want := []string{}
			for _, i := range c.want {
				want = append(want, all[i].ID)
			}
			if diff := cmp.Diff(want, ids(got)); diff != "" {
				t.Errorf("%s: List(%+v) (-want +got):\n%s", c.name, c.f, diff)
			}
		}
		var ve *access.ValidationError
		for _, f := range []access.Filter{{Limit: -1}, {Limit: access.MaxList + 1}, {Status: "granted"}} {
			if _, err := s.List(ctx, f); !errors.As(err, &ve) {
				t.Errorf("List(%+v) = %v, want a ValidationError", f, err)
			}
		}
	})
}

func TestSQLStoreGrantedTools(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		s := access.NewSQLStore(db, newClock().now)
		ctx := t.Context()
		decide := func(r access.Request, to access.Status) {
			t.Helper()
			var err error
			switch to {
			case access.StatusApproved:
				_, err = s.Approve(ctx, r.ID, "admin:admin")
			case access.StatusDenied:
				_, err = s.Deny(ctx, r.ID, "admin:admin", "")
			case access.StatusRevoked:
				if _, err = s.Approve(ctx, r.ID, "admin:admin"); err == nil {
					_, err = s.Revoke(ctx, r.ID, "admin:admin", "")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		decide(mustCreate(t, s, newRequest("user:a", "github", "create_issue", "list_issues")), access.StatusApproved)
		decide(mustCreate(t, s, newRequest("user:a", "github", "list_issues", "close_issue")), access.StatusApproved)
		decide(mustCreate(t, s, newRequest("user:a", "github", "delete_repo")), access.StatusDenied)
		decide(mustCreate(t, s, newRequest("user:a", "github", "push")), access.StatusRevoked)
		mustCreate(t, s, newRequest("user:a", "github", "merge")) // pending
		decide(mustCreate(t, s, newRequest("user:a", "jira", "create_ticket")), access.StatusApproved)
		decide(mustCreate(t, s, newRequest("user:b", "github", "fork")), access.StatusApproved)

		for _, c := range []struct {
			user, server string
			want         []string
		}{
			{"user:a", "github", []string{"close_issue", "create_issue", "list_issues"}},
			{"user:a", "jira", []string{"create_ticket"}},
			{"user:b", "github", []string{"fork"}},
			{"user:b", "jira", []string{}},
			{"virtual_key:a", "github", []string{}},
			{"\xff", "github", []string{}},
		} {
			got, err := s.GrantedTools(ctx, c.user, c.server)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("GrantedTools(%q, %q) (-want +got):\n%s", c.user, c.server, diff)
			}
		}
	})
}

func TestSQLStoreTooManyPending(t *testing.T) {
	s := access.NewSQLStore(storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t)), nil)
	ctx := t.Context()
	var first access.Request
	for i := range access.MaxPending {
		r := mustCreate(t, s, newRequest("user:spam", "github", fmt.Sprint("t", i)))
		if i == 0 {
			first = r
		}
	}
	if _, err := s.Create(ctx, newRequest("user:spam", "github", "one more")); !errors.Is(err, access.ErrTooManyPending) {
		t.Fatalf("Create past MaxPending = %v, want ErrTooManyPending", err)
	}
	mustCreate(t, s, newRequest("user:other", "github", "t")) // others are not affected
	if _, err := s.Deny(ctx, first.ID, "admin:admin", ""); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newRequest("user:spam", "github", "after a decision"))
}
