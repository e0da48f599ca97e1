package kerberos

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/sso"
)

// Verify checks header, the value after "Negotiate " in an Authorization
// header, and returns who the ticket says the client is. responseToken is
// the base64 answer for "WWW-Authenticate: Negotiate <token>" when the
// client asked for mutual authentication, else "". A failure is an
// *apierr.Error (401, code "kerberos_<reason>", wrapping *Error), or the
// context's error when ctx is done.
func (v *Verifier) Verify(ctx context.Context, header string) (id sso.Identity, responseToken string, err error) {
	if err := ctx.Err(); err != nil {
		return sso.Identity{}, "", err
	}
	b, aerr := decodeHeader(header)
	if aerr != nil {
		return sso.Identity{}, "", aerr
	}
	tok, aerr := parseToken(b)
	if aerr != nil {
		return sso.Identity{}, "", aerr
	}
	kt := v.kt.Load()
	if aerr := v.checkService(&tok.apreq, kt); aerr != nil {
		return sso.Identity{}, "", aerr
	}
	creds, aerr := v.verifyAPReq(&tok.apreq, kt)
	if aerr != nil {
		return sso.Identity{}, "", aerr
	}
	if aerr := v.claim(ctx, &tok.apreq); aerr != nil {
		return sso.Identity{}, "", aerr
	}
	id, aerr = v.identity(&tok.apreq, creds)
	if aerr != nil {
		return sso.Identity{}, "", aerr
	}
	if !mutualRequested(&tok.apreq) {
		return id, "", nil
	}
	answer, err := acceptToken(tok)
	if err != nil {
		return sso.Identity{}, "", apierr.Wrap(apierr.Internal, "kerberos_mutual_token", "could not build the Kerberos mutual-authentication token", err)
	}
	return id, base64.StdEncoding.EncodeToString(answer), nil
}

// claim records the verified authenticator in the shared replay store (when
// configured) until it would fail the clock-skew check anyway: the client,
// its time to the microsecond and the service name identify it (RFC 4120
// section 3.2.3). A second presentation anywhere is a replay; a store
// that cannot answer refuses the sign-in (503), never lets it pass.
func (v *Verifier) claim(ctx context.Context, req *messages.APReq) *apierr.Error {
	if v.cfg.Replay == nil {
		return nil
	}
	a := &req.Authenticator
	id := fmt.Sprintf("krb5:%s@%s|%d|%d|%s@%s", a.CName.PrincipalNameString(), a.CRealm,
		a.CTime.UnixNano(), a.Cusec, req.Ticket.SName.PrincipalNameString(), req.Ticket.Realm)
	fresh, err := v.cfg.Replay.Claim(ctx, id, a.CTime.Add(v.skew))
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "kerberos_replay_unavailable", "the Kerberos replay cache could not be reached", err)
	}
	if !fresh {
		return fail(ReasonReplay, "", nil)
	}
	return nil
}

// checkService refuses a ticket for another principal before decryption,
// and tells a missing key (a rotated keytab) from a bad ticket.
func (v *Verifier) checkService(req *messages.APReq, kt *keytab.Keytab) *apierr.Error {
	t := &req.Ticket
	if t.Realm != v.realm || !slices.Equal(t.SName.NameString, v.sname.NameString) {
		return fail(ReasonWrongService, "", fmt.Errorf("ticket for %s@%s, want %s", t.SName.PrincipalNameString(), t.Realm, v.ServicePrincipal()))
	}
	if _, _, err := kt.GetEncryptionKey(t.SName, t.Realm, t.EncPart.KVNO, t.EncPart.EType); err != nil {
		return fail(ReasonKeytab, "", err)
	}
	return nil
}

// verifyAPReq runs gokrb5's service-side checks: ticket decryption with
// the keytab, ticket times, client addresses, authenticator decryption and
// name, clock skew, the replay cache, and the PAC when DecodePAC is on.
// Tickets that list client addresses fail: Verify is not given the
// client's address (MIT and AD issue address-less tickets by default).
func (v *Verifier) verifyAPReq(req *messages.APReq, kt *keytab.Keytab) (creds *credentials.Credentials, aerr *apierr.Error) {
	defer func() {
		if r := recover(); r != nil { // gokrb5 indexes decrypted fields without bounds checks
			creds, aerr = nil, fail(ReasonTicketInvalid, "", fmt.Errorf("verifier panic: %v", r))
		}
	}()
	settings := service.NewSettings(kt,
		service.DecodePAC(v.cfg.DecodePAC),
		service.MaxClockSkew(v.skew),
		service.Logger(v.logger),
	)
	ok, creds, err := service.VerifyAPREQ(req, settings)
	if err != nil {
		return nil, fail(classify(err), "", err)
	}
	if !ok || creds == nil {
		return nil, fail(ReasonTicketInvalid, "", nil)
	}
	return creds, nil
}

// identity is the verified client: its principal name, without the realm
// when it is the service's own (the Subject keeps it), and with the PAC
// decoded, its group SIDs and full name.
func (v *Verifier) identity(req *messages.APReq, creds *credentials.Credentials) (sso.Identity, *apierr.Error) {
	user := req.Ticket.DecryptedEncPart.CName.PrincipalNameString()
	if user == "" {
		return sso.Identity{}, fail(ReasonTicketInvalid, "the ticket names no client", nil)
	}
	// A cross-realm trust lets alice@PARTNER sign in, and she is not
	// alice@CORP: a principal of another realm than the service's keeps
	// its realm in the username (its grants, budgets, sessions and cache
	// are its own), and the Subject always has it (stored roles).
	realm := req.Ticket.DecryptedEncPart.CRealm
	full := user + "@" + realm
	id := sso.Identity{Username: user, Method: sso.MethodKerberos, Subject: full}
	if realm != v.realm {
		id.Username = full
	}
	if v.cfg.DecodePAC {
		ad := creds.GetADCredentials()
		id.DisplayName = ad.FullName
		id.Groups = slices.Clone(ad.GroupMembershipSIDs)
	}
	return id, nil
}

// mutualRequested reports whether the client asked for mutual
// authentication: the AP option mutual-required (RFC 4120), or the GSS-API
// mutual flag in the authenticator's checksum (RFC 4121 section 4.1.1).
func mutualRequested(req *messages.APReq) bool {
	if req.APOptions.At(flags.APOptionMutualRequired) == 1 {
		return true
	}
	c := req.Authenticator.Cksum
	if c.CksumType != chksumtype.GSSAPI || len(c.Checksum) < 24 {
		return false
	}
	return binary.LittleEndian.Uint32(c.Checksum[20:24])&gssapi.ContextFlagMutual != 0
}
