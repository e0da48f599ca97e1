package identity_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/identity"
)

func TestIsAdmin(t *testing.T) {
	for _, c := range []struct {
		p    *identity.Principal
		want bool
	}{
		{nil, false},
		{&identity.Principal{Kind: identity.Admin}, true},
		{&identity.Principal{Kind: identity.User, Roles: []string{"admin", "user"}}, true},
		{&identity.Principal{Kind: identity.User, Roles: []string{"user"}}, false},
		// Only a signed-in user's roles count.
		{&identity.Principal{Kind: identity.VirtualKey, Roles: []string{"admin"}}, false},
	} {
		if got := c.p.IsAdmin(); got != c.want {
			t.Errorf("%+v: IsAdmin %v", c.p, got)
		}
	}
}

func TestActor(t *testing.T) {
	for want, p := range map[string]*identity.Principal{
		"anonymous":       nil,
		"admin":           {Kind: identity.Admin, ID: "admin"},
		"user:alice":      {Kind: identity.User, ID: "alice"},
		"virtual_key:vk1": {Kind: identity.VirtualKey, ID: "vk1"},
	} {
		if got := p.Actor(); got != want {
			t.Errorf("%+v: Actor %q, want %q", p, got, want)
		}
	}
}
