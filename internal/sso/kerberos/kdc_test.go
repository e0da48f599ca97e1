package kerberos

import "github.com/svc-gateway/svc/internal/sso/kerberos/kdctest"

// The realm the tests run (kdctest.Start): a real MIT KDC (Debian's
// krb5-kdc) on a free loopback port, its database, stash and keytabs in a
// temp dir.
const (
	testRealm    = kdctest.Realm
	testUser     = kdctest.User
	testPassword = kdctest.Password
	testService  = kdctest.Service
)
