package sso

import (
	"strings"

	"github.com/svc-gateway/svc/internal/identity"
)

// RoleUser is every signed-in user's role; identity.RoleAdmin is added for
// members of an admin group.
const RoleUser = "user"

// DefaultAdminGroups are the admin groups when the configuration sets none.
var DefaultAdminGroups = []string{"svc-Admins", "IT-Admins", "Domain Admins"}

// Roles maps groups to roles: [admin, user] when a group matches one of
// the admin patterns, else [user]. Patterns match whole names,
// case-insensitively (directory group names are), with * standing for any
// run of characters; nil patterns are DefaultAdminGroups, an empty list
// makes nobody an admin.
func Roles(groups, adminPatterns []string) []string {
	if adminPatterns == nil {
		adminPatterns = DefaultAdminGroups
	}
	if len(groups) == 0 {
		return []string{RoleUser}
	}
	lower := make([]string, len(adminPatterns))
	for i, p := range adminPatterns {
		lower[i] = strings.ToLower(p)
	}
	for _, g := range groups {
		g = strings.ToLower(g) // no copy when already lower case
		for _, p := range lower {
			if matchGroup(p, g) {
				return []string{identity.RoleAdmin, RoleUser}
			}
		}
	}
	return []string{RoleUser}
}

// matchGroup matches s against p, where * is any run of characters. It is
// linear in len(p)·len(s) at worst (no backtracking blow-up).
func matchGroup(p, s string) bool {
	star, mark := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case i < len(p) && p[i] == s[j]:
			i++
			j++
		case star >= 0:
			i, mark = star+1, mark+1
			j = mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}
