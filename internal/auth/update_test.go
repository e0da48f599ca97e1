package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	. "github.com/svc-gateway/svc/internal/auth"
)

func ptr[T any](v T) *T { return &v }

// TestUpdate: only the fields given change, the change is validated as at
// creation, the cached record and principal see it at once, and a revoked
// key cannot be changed.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	k, _ := newKeys(t, time.Hour)
	vk, secret, err := k.Create(ctx, CreateParams{Alias: "a", RPMLimit: 10, ModelRestrictions: []string{"gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(ctx, Credentials{Bearer: secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Record(ctx, vk.ID); err != nil { // cached now
		t.Fatal(err)
	}
	got, err := k.Update(ctx, vk.ID, Patch{PolicySet: ptr("preset-hipaa"), TeamID: ptr("team-1")})
	if err != nil {
		t.Fatal(err)
	}
	if got.PolicySet != "preset-hipaa" || got.TeamID != "team-1" || got.RPMLimit != 10 || got.Alias != "a" || len(got.ModelRestrictions) != 1 {
		t.Errorf("updated %+v: want policy set and team changed, the rest kept", got)
	}
	rec, err := k.Record(ctx, vk.ID)
	if err != nil || rec.PolicySet != "preset-hipaa" {
		t.Errorf("Record after update = %+v, %v; want the new policy set", rec, err)
	}
	p, err := k.Authenticate(ctx, Credentials{Bearer: secret})
	if err != nil || p.TeamID != "team-1" {
		t.Errorf("principal after update = %+v, %v; want team-1", p, err)
	}
	tests := []struct {
		name  string
		patch Patch
		param string
	}{
		{"negative rpm", Patch{RPMLimit: ptr(-1)}, "rpm_limit"},
		{"bad period", Patch{BudgetPeriod: ptr("hourly")}, "budget_period"},
		{"long policy set", Patch{PolicySet: ptr(string(make([]byte, 201)))}, "policy_set"},
		{"NUL in alias", Patch{Alias: ptr("a\x00b")}, "alias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Update(ctx, vk.ID, tt.patch)
			if e := apierr.From(err); e.Kind != apierr.InvalidRequest || e.Param != tt.param {
				t.Errorf("Update = %v, want 400 naming %s", err, tt.param)
			}
		})
	}
	if _, err := k.Update(ctx, "vk-nope", Patch{}); apierr.KindOf(err) != apierr.NotFound {
		t.Errorf("Update(unknown) = %v, want 404", err)
	}
	if _, err := k.Revoke(ctx, vk.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Update(ctx, vk.ID, Patch{Alias: ptr("b")}); apierr.KindOf(err) != apierr.Conflict {
		t.Errorf("Update(revoked) = %v, want 409", err)
	}
}
