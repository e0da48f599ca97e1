package cache

import (
	"github.com/svc-gateway/svc/internal/identity"
)

// anonymousScope is the scope of requests without a principal.
const anonymousScope = "anonymous"

// ScopeOf is the scope (Request.Scope) of a request from p: its tenant. A
// nil principal is "anonymous".
func (c *Cache) ScopeOf(p *identity.Principal) string {
	if p == nil {
		return anonymousScope
	}
	return p.Tenant()
}
