package kerberos

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/svc-gateway/svc/internal/apierr"
)

// reqOpts shapes a client token the way a client library would, with the
// knobs gokrb5's own SPNEGO client does not expose.
type reqOpts struct {
	skew    time.Duration              // added to the authenticator's time
	mutual  bool                       // AP option mutual-required and the GSS mutual flag
	bare    bool                       // a bare Kerberos GSS-API token, not SPNEGO
	mech    asn1.ObjectIdentifier      // SPNEGO mechanism; the Kerberos OID when nil
	cname   *types.PrincipalName       // the authenticator's client name, when not the ticket's
	addAuth func(*types.Authenticator) // last changes to the authenticator
}

// clientToken is the base64 Negotiate token a client holding tkt and its
// session key sends, and the authenticator in it.
func clientToken(t testing.TB, tkt messages.Ticket, key types.EncryptionKey, crealm string, cname types.PrincipalName, o reqOpts) (string, types.Authenticator) {
	t.Helper()
	if o.cname != nil {
		cname = *o.cname
	}
	auth, err := types.NewAuthenticator(crealm, cname)
	if err != nil {
		t.Fatal(err)
	}
	auth.CTime = auth.CTime.Add(o.skew)
	gssFlags := uint32(gssapi.ContextFlagInteg | gssapi.ContextFlagConf)
	if o.mutual {
		gssFlags |= gssapi.ContextFlagMutual
	}
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: gssChecksum(gssFlags)}
	if o.addAuth != nil {
		o.addAuth(&auth)
	}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		t.Fatal(err)
	}
	if o.mutual {
		types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	}
	tok := gssAPReq(t, req)
	if !o.bare {
		mech := o.mech
		if mech == nil {
			mech = gssapi.OIDKRB5.OID()
		}
		tok = spnegoInit(t, []asn1.ObjectIdentifier{mech}, tok)
	}
	return base64.StdEncoding.EncodeToString(tok), auth
}

// gssChecksum is the RFC 4121 authenticator checksum with flags.
func gssChecksum(f uint32) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[:4], 16)
	binary.LittleEndian.PutUint32(b[20:24], f)
	return b
}

// gssAPReq wraps an AP-REQ in a Kerberos GSS-API token (RFC 4121 4.1).
func gssAPReq(t testing.TB, req messages.APReq) []byte {
	t.Helper()
	rb, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return gssWrap(t, []byte{0x01, 0x00}, rb)
}

func gssWrap(t testing.TB, tokID, msg []byte) []byte {
	t.Helper()
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		t.Fatal(err)
	}
	return asn1tools.AddASNAppTag(append(append(oid, tokID...), msg...), 0)
}

// spnegoInit is an SPNEGO NegTokenInit offering mechs with mechToken.
func spnegoInit(t testing.TB, mechs []asn1.ObjectIdentifier, mechToken []byte) []byte {
	t.Helper()
	st := spnego.SPNEGOToken{Init: true, NegTokenInit: spnego.NegTokenInit{MechTypes: mechs, MechTokenBytes: mechToken}}
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openAnswer does what the client does with the mutual-authentication
// answer: unwraps the NegTokenResp (when wrapped) and the GSS-API token,
// decrypts the AP-REP with the session key and returns its content.
func openAnswer(t *testing.T, answer string, key types.EncryptionKey, wrapped bool) messages.EncAPRepPart {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(answer)
	if err != nil {
		t.Fatalf("answer is not base64: %v", err)
	}
	if wrapped {
		var resp spnego.NegTokenResp
		if err := resp.Unmarshal(b); err != nil {
			t.Fatalf("answer is not an SPNEGO NegTokenResp: %v", err)
		}
		if resp.NegState != asn1.Enumerated(spnego.NegStateAcceptCompleted) || !resp.SupportedMech.Equal(gssapi.OIDKRB5.OID()) {
			t.Fatalf("NegTokenResp: got state %d mech %s, want accept-completed (0) and %s", resp.NegState, resp.SupportedMech, gssapi.OIDKRB5.OID())
		}
		b = resp.ResponseToken
	}
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(b); err != nil || !kt.IsAPRep() {
		t.Fatalf("answer is not a Kerberos AP-REP token (err %v)", err)
	}
	pt, err := crypto.DecryptEncPart(kt.APRep.EncPart, key, keyusage.AP_REP_ENCPART)
	if err != nil {
		t.Fatalf("AP-REP does not decrypt with the session key: %v", err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(pt); err != nil {
		t.Fatalf("EncAPRepPart: %v", err)
	}
	return part
}

// checkAnswer fails unless the AP-REP echoes the authenticator's time, as
// a client checks (RFC 4120 3.2.5).
func checkAnswer(t *testing.T, part messages.EncAPRepPart, auth types.Authenticator) {
	t.Helper()
	want := auth.CTime.UTC().Truncate(time.Second)
	if !part.CTime.Equal(want) || part.Cusec != auth.Cusec {
		t.Errorf("AP-REP time: got %v + %dµs, want the authenticator's %v + %dµs", part.CTime, part.Cusec, want, auth.Cusec)
	}
	if part.SequenceNumber == 0 {
		t.Error("AP-REP has no sequence number")
	}
}

// wantReason fails unless err is a 401 *apierr.Error of reason want, with
// the Negotiate challenge, that does not carry token.
func wantReason(t *testing.T, err error, want Reason, token string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("got %T %v, want an *apierr.Error", err, err)
	}
	if got := ReasonOf(err); got != want {
		t.Fatalf("reason: got %q (%v), want %q", got, err, want)
	}
	if ae.Status() != 401 || ae.Code != "kerberos_"+string(want) {
		t.Errorf("got status %d code %q, want 401 kerberos_%s", ae.Status(), ae.Code, want)
	}
	if ae.Header.Get("WWW-Authenticate") != "Negotiate" {
		t.Errorf("WWW-Authenticate: got %q, want Negotiate", ae.Header.Get("WWW-Authenticate"))
	}
	if len(token) >= 32 {
		piece := token[len(token)/2-8 : len(token)/2+8]
		if strings.Contains(err.Error(), piece) || strings.Contains(ae.Message, piece) {
			t.Errorf("the error carries the token: %v", err)
		}
	}
}
