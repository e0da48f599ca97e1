// Package kerberos verifies Kerberos SPNEGO sign-ins (HTTP Negotiate,
// RFC 4559) into an sso.Identity: the AP-REQ a client sends in
// "Authorization: Negotiate <token>" is checked against the service's
// keytab with gokrb5 (ticket decryption, times, authenticator, gokrb5's
// replay cache, optionally the Microsoft PAC), the client principal becomes
// the username (without its realm when it is the service's own; a trusted
// partner realm's principal keeps it), and the mutual-authentication answer
// (AP-REP) is built when the client asked for one. Failures are
// *apierr.Error values (401) naming the check, never carrying the token.
//
// It owns no routes and no storage: internal/sso's sign-in endpoint
// imports it; it imports, of svc, only sso and apierr.
package kerberos

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Limits on what is read: the decoded token, and the keytab file.
const (
	MaxTokenBytes  = 64 << 10
	MaxKeytabBytes = 1 << 20
)

// DefaultMaxClockSkew is the clock skew allowed when Config leaves it zero
// (Kerberos' customary five minutes).
const DefaultMaxClockSkew = 5 * time.Minute

// Config is a Verifier's configuration (the server-side file settings
// sso.kerberos.service_principal and sso.kerberos.keytab_path).
type Config struct {
	// KeytabPath is the keytab file with the service principal's keys.
	KeytabPath string
	// ServicePrincipal is the principal tickets must be issued for, in
	// the form "HTTP/svc.example.com@REALM" (the realm is required).
	ServicePrincipal string
	// DecodePAC turns on decoding and checking of a Microsoft PAC in the
	// ticket, whose group SIDs then become Identity.Groups. Off by
	// default: MIT KDCs (1.20 and later) put a PAC without the logon
	// information gokrb5 requires in every ticket, and with decoding on
	// each such ticket fails as ticket_invalid. Turn it on for Active
	// Directory.
	DecodePAC bool
	// MaxClockSkew is the largest difference allowed between our clock and
	// the authenticator's time or the ticket's start and end times; zero
	// means DefaultMaxClockSkew.
	MaxClockSkew time.Duration
	// Replay, when set, records each accepted authenticator until it could
	// no longer pass the clock-skew check, in a store every replica shares:
	// gokrb5's own replay cache is per process, so without it a token
	// captured on its way to one replica passes once at every other.
	Replay Replay
}

// Replay records accepted authenticators (saml.KVReplay is one).
type Replay interface {
	// Claim records id until the given time and reports whether it was
	// fresh: false when id was claimed before and has not expired.
	Claim(ctx context.Context, id string, until time.Time) (fresh bool, err error)
}

// Verifier verifies Negotiate tokens for one service principal. It is safe
// for concurrent use; Reload swaps the keytab under running verifications.
type Verifier struct {
	cfg    Config
	sname  types.PrincipalName
	realm  string
	skew   time.Duration
	logger *log.Logger
	kt     atomic.Pointer[keytab.Keytab]
}

// New checks cfg and loads the keytab, which must hold a key for the
// service principal.
func New(cfg Config) (*Verifier, error) {
	sname, realm, err := parsePrincipal(cfg.ServicePrincipal)
	if err != nil {
		return nil, err
	}
	if cfg.MaxClockSkew < 0 {
		return nil, fmt.Errorf("kerberos: negative max clock skew %v", cfg.MaxClockSkew)
	}
	v := &Verifier{
		cfg: cfg, sname: sname, realm: realm, skew: cfg.MaxClockSkew,
		logger: log.New(io.Discard, "", 0), // gokrb5 needs one for PAC decoding
	}
	if v.skew == 0 {
		v.skew = DefaultMaxClockSkew
	}
	if err := v.Reload(); err != nil {
		return nil, err
	}
	return v, nil
}

// ServicePrincipal is the principal this Verifier accepts tickets for.
func (v *Verifier) ServicePrincipal() string {
	return v.sname.PrincipalNameString() + "@" + v.realm
}

// Reload reads the keytab file again (after a key rotation). On failure
// the keytab in use is kept and the error, of reason keytab, returned.
func (v *Verifier) Reload() error {
	kt, err := loadKeytab(v.cfg.KeytabPath)
	if err != nil {
		return err
	}
	if !hasPrincipal(kt, v.sname, v.realm) {
		return &Error{Reason: ReasonKeytab, Detail: fmt.Sprintf("keytab %s has no key for %s", v.cfg.KeytabPath, v.ServicePrincipal())}
	}
	v.kt.Store(kt)
	return nil
}

// parsePrincipal splits "HTTP/host@REALM" into its name and realm.
func parsePrincipal(s string) (types.PrincipalName, string, error) {
	name, realm, ok := cutLast(s, "@")
	if !ok || name == "" || realm == "" {
		return types.PrincipalName{}, "", fmt.Errorf("kerberos: service principal %q: want the form HTTP/host.example.com@REALM", s)
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" {
			return types.PrincipalName{}, "", fmt.Errorf("kerberos: service principal %q has an empty component", s)
		}
	}
	pn, _ := types.ParseSPNString(name)
	return pn, realm, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// loadKeytab reads and parses a keytab file of at most MaxKeytabBytes.
func loadKeytab(path string) (kt *keytab.Keytab, err error) {
	if path == "" {
		return nil, &Error{Reason: ReasonKeytab, Detail: "no keytab path configured"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Reason: ReasonKeytab, Detail: "cannot open the keytab", Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxKeytabBytes+1))
	if err != nil {
		return nil, &Error{Reason: ReasonKeytab, Detail: "cannot read the keytab", Err: err}
	}
	if len(b) > MaxKeytabBytes {
		return nil, &Error{Reason: ReasonKeytab, Detail: fmt.Sprintf("keytab %s is larger than %d bytes", path, MaxKeytabBytes)}
	}
	defer func() {
		if r := recover(); r != nil { // gokrb5's parser indexes without bounds checks
			kt, err = nil, &Error{Reason: ReasonKeytab, Detail: "keytab " + path + " is corrupt", Err: fmt.Errorf("%v", r)}
		}
	}()
	kt = keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		return nil, &Error{Reason: ReasonKeytab, Detail: "keytab " + path + " is not a keytab", Err: err}
	}
	return kt, nil
}

// hasPrincipal reports whether kt holds a key for name@realm.
func hasPrincipal(kt *keytab.Keytab, name types.PrincipalName, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && slices.Equal(e.Principal.Components, name.NameString) {
			return true
		}
	}
	return false
}
