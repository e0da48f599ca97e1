package teams_test

import (
	"context"
	"errors"
	"testing"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
	"github.com/svc-gateway/svc/internal/teams"
)

func TestDirectory(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		d := teams.NewDirectory(teams.NewSQLStore(db), nil)
		if _, err := d.Of(&identity.Principal{Kind: identity.User, ID: "u", Groups: []string{"eng"}}); err == nil {
			t.Error("a lookup before the first read found no team instead of failing")
		}
		if err := d.Load(ctx); err != nil {
			t.Fatal(err)
		}
		eng, err := d.Put(ctx, teams.Team{ID: "eng", RPMLimit: 5, ModelAllowlist: []string{"gpt-4o-mini"}, PolicySet: "hipaa"})
		if err != nil || eng.BudgetPeriod != "monthly" {
			t.Fatalf("put: %+v %v", eng, err)
		}
		if _, err := d.Put(ctx, teams.Team{ID: "ops"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			p    *identity.Principal
			want string
		}{
			{&identity.Principal{Kind: identity.User, Groups: []string{"x", "ops", "eng"}}, "ops"}, // the first group that is a team
			{&identity.Principal{Kind: identity.User, TeamID: "eng", Groups: []string{"ops"}}, "eng"},
			{&identity.Principal{Kind: identity.User, Groups: []string{"x"}}, ""},
			{&identity.Principal{Kind: identity.VirtualKey, ID: "k", Groups: []string{"eng"}}, ""},
		} {
			got, err := d.Of(c.p)
			if err != nil || (got == nil) != (c.want == "") || got != nil && got.ID != c.want {
				t.Errorf("%+v: %+v %v, want %q", c.p, got, err, c.want)
			}
		}
		// A replace keeps created_at; a delete removes.
		again, _ := d.Put(ctx, teams.Team{ID: "eng", TPMLimit: 9})
		if !again.CreatedAt.Equal(eng.CreatedAt) || again.RPMLimit != 0 || again.TPMLimit != 9 {
			t.Errorf("replace: %+v (created %v)", again, eng.CreatedAt)
		}
		if err := d.Delete(ctx, "eng"); err != nil {
			t.Fatal(err)
		}
		if err := d.Delete(ctx, "eng"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete twice: %v", err)
		}
	})
}

func TestValidate(t *testing.T) {
	for name, tm := range map[string]teams.Team{
		"no id":        {},
		"comma id":     {ID: "a,b"},
		"negative rpm": {ID: "a", RPMLimit: -1},
		"huge tpm":     {ID: "a", TPMLimit: 1 << 50},
		"bad period":   {ID: "a", BudgetPeriod: "hourly"},
		"empty model":  {ID: "a", ModelAllowlist: []string{""}},
		"budget":       {ID: "a", MaxBudgetUSD: -1},
	} {
		var fe *teams.FieldError
		if err := tm.Validate(); !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a field error", name, err)
		}
	}
}
