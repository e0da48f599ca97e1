package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/store"
)

// ExerciseResponseStore checks that s behaves as responses.Store documents:
// records round-trip, only their owner sees them, they vanish when they
// expire and Purge removes them. Ids carry a random token, so s may hold
// other records. Subtests run in order and share s.
func ExerciseResponseStore(t *testing.T, s responses.Store) {
	t.Helper()
	tok := randomHex(6)
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	text, args := "Hello\x00 wörld \xff", `{"city":"Paris"}`
	rec := func(id, owner string, expires time.Time) *responses.Record {
		return &responses.Record{
			ID: id + "-" + tok, Owner: owner, Provider: "anthropic", Native: id == "native", Previous: "resp_prev-" + tok,
			Input: []responses.Item{{Type: "message", Role: "user", Content: &responses.Content{IsParts: true,
				Parts: []responses.Part{{Type: "input_text", Text: &text}}}}},
			Response: &responses.Response{ID: id + "-" + tok, Object: "response", Status: "completed", Model: "claude-x", ToolChoice: json.RawMessage(`"auto"`),
				Output: []responses.Item{{Type: "function_call", ID: "fc_1", CallID: "call_1", Name: "weather", Arguments: &args}},
				Usage:  &responses.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}},
			Created: now, Expires: expires,
		}
	}
	ctx := t.Context()

	t.Run("SaveLoad", func(t *testing.T) {
		for _, r := range []*responses.Record{rec("a", "virtual_key:k1", now.Add(time.Hour)), rec("native", "virtual_key:k1", now.Add(time.Hour))} {
			if err := s.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx, r.Owner, r.ID, now)
			if err != nil {
				t.Fatal(err)
			}
			want := *r
			// Invalid UTF-8 is stored as JSON stores it: replaced.
			fixed := "Hello\x00 wörld \ufffd"
			want.Input = []responses.Item{{Type: "message", Role: "user", Content: &responses.Content{IsParts: true,
				Parts: []responses.Part{{Type: "input_text", Text: &fixed}}}}}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("Load after Save (-want +got):\n%s", diff)
			}
		}
	})

	t.Run("OnlyTheOwner", func(t *testing.T) {
		id := "a-" + tok
		if _, err := s.Load(ctx, "virtual_key:k2", id, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Load by another owner: got %v, want store.ErrNotFound", err)
		}
		if err := s.Delete(ctx, "virtual_key:k2", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete by another owner: got %v, want store.ErrNotFound", err)
		}
		if _, err := s.Load(ctx, "virtual_key:k1", id, now); err != nil {
			t.Errorf("the owner's record is gone after another's Delete: %v", err)
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		r := rec("old", "virtual_key:k1", now.Add(time.Minute))
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, r.Owner, r.ID, now.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Load past expiry: got %v, want store.ErrNotFound", err)
		}
		n, err := s.Purge(ctx, now.Add(2*time.Minute))
		if err != nil || n < 1 {
			t.Errorf("Purge: %d, %v; want at least the expired record", n, err)
		}
		if _, err := s.Load(ctx, r.Owner, r.ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Load after Purge: got %v, want store.ErrNotFound", err)
		}
		if _, err := s.Load(ctx, "virtual_key:k1", "a-"+tok, now); err != nil {
			t.Errorf("Purge removed a live record: %v", err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		id := "a-" + tok
		if err := s.Delete(ctx, "virtual_key:k1", id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, "virtual_key:k1", id, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Load after Delete: got %v, want store.ErrNotFound", err)
		}
		if err := s.Delete(ctx, "virtual_key:k1", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete again: got %v, want store.ErrNotFound", err)
		}
	})
}
