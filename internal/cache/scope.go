package cache

import (
	"fmt"

	"github.com/svc-gateway/svc/internal/identity"
)

// Sharing settings (Options.Sharing): who shares cached answers.
const (
	// ShareCaller isolates answers per caller: the virtual key, or the
	// signed-in user (the default). "What's my account balance?" is
	// answered for the one who asked.
	ShareCaller = "caller"
	// ShareTeam shares answers among the callers of one team; callers
	// without a team keep their own.
	ShareTeam = "team"
)

// anonymousScope is the scope of requests without a principal.
const anonymousScope = "anonymous"

// ScopeOf is the scope (Request.Scope) of a request from p under the
// cache's sharing setting: the caller, "<kind>:<id>", or with ShareTeam
// the caller's team, "team:<id>". A nil principal is "anonymous".
func (c *Cache) ScopeOf(p *identity.Principal) string {
	if p == nil {
		return anonymousScope
	}
	if c.o.Sharing == ShareTeam && p.TeamID != "" {
		return p.Tenant()
	}
	return p.Caller()
}

// checkSharing validates Options.Sharing, "" meaning ShareCaller.
func checkSharing(s string) (string, error) {
	switch s {
	case "":
		return ShareCaller, nil
	case ShareCaller, ShareTeam:
		return s, nil
	}
	return "", fmt.Errorf("cache: sharing must be %q or %q, not %q", ShareCaller, ShareTeam, s)
}
