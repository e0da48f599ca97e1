package kdctest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Client logs user in to the realm with gokrb5's client (the test fails
// when the KDC refuses); it is destroyed when the test ends.
func (k *KDC) Client(t testing.TB, user, password string) *client.Client {
	t.Helper()
	cfg, err := config.NewFromString(k.Conf)
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithPassword(user, k.Realm, password, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatalf("gokrb5 login of %s: %v", user, err)
	}
	t.Cleanup(cl.Destroy)
	return cl
}

// Token logs user in and returns the base64 SPNEGO token gokrb5's client
// sends for service ("HTTP/localhost", no realm), as the value of
// "Authorization: Negotiate <token>". Each call makes a fresh
// authenticator, so each token passes a replay cache once.
func (k *KDC) Token(t testing.TB, user, password, service string) string {
	t.Helper()
	return ClientToken(t, k.Client(t, user, password), service)
}

// ClientToken is the base64 SPNEGO token cl's gokrb5 SPNEGO client makes
// for service (which does not ask for mutual authentication).
func ClientToken(t testing.TB, cl *client.Client, service string) string {
	t.Helper()
	ct, err := spnego.SPNEGOClient(cl, service).InitSecContext()
	if err != nil {
		t.Fatalf("SPNEGO token for %s: %v", service, err)
	}
	b, err := ct.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// MutualToken is Token asking for mutual authentication (the GSS-API
// mutual flag and the AP option mutual-required, as curl --negotiate and
// browsers send), and the check the client makes of the acceptor's answer
// token: see Mutual.Check.
func (k *KDC) MutualToken(t testing.TB, user, password, service string) (string, *Mutual) {
	t.Helper()
	cl := k.Client(t, user, password)
	tkt, key, err := cl.GetServiceTicket(service)
	if err != nil {
		t.Fatalf("service ticket for %s: %v", service, err)
	}
	kt, err := spnego.NewKRB5TokenAPREQ(cl, tkt, key,
		[]int{gssapi.ContextFlagInteg, gssapi.ContextFlagConf, gssapi.ContextFlagMutual}, []int{flags.APOptionMutualRequired})
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.APReq.DecryptAuthenticator(key); err != nil {
		t.Fatal(err)
	}
	mech, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	st := spnego.SPNEGOToken{Init: true, NegTokenInit: spnego.NegTokenInit{
		MechTypes: []asn1.ObjectIdentifier{gssapi.OIDKRB5.OID()}, MechTokenBytes: mech}}
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b), &Mutual{key: key, auth: kt.APReq.Authenticator}
}

// Mutual is what a client keeps of a token that asked for mutual
// authentication: the session key and its authenticator.
type Mutual struct {
	key  types.EncryptionKey
	auth types.Authenticator
}

// Check does what the client does with the acceptor's answer (the token
// of "WWW-Authenticate: Negotiate <token>"): it unwraps the SPNEGO
// NegTokenResp (accept-completed, Kerberos) and the GSS-API token,
// decrypts the AP-REP with the session key and checks it echoes the
// authenticator's time (RFC 4120 3.2.5). A nil error means the server
// proved it holds the service key.
func (m *Mutual) Check(answer string) error {
	b, err := base64.StdEncoding.DecodeString(answer)
	if err != nil {
		return fmt.Errorf("the answer is not base64: %w", err)
	}
	var resp spnego.NegTokenResp
	if err := resp.Unmarshal(b); err != nil {
		return fmt.Errorf("the answer is not an SPNEGO NegTokenResp: %w", err)
	}
	if resp.NegState != asn1.Enumerated(spnego.NegStateAcceptCompleted) || !resp.SupportedMech.Equal(gssapi.OIDKRB5.OID()) {
		return fmt.Errorf("NegTokenResp: state %d mech %s, want accept-completed (0) and %s", resp.NegState, resp.SupportedMech, gssapi.OIDKRB5.OID())
	}
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(resp.ResponseToken); err != nil {
		return fmt.Errorf("the answer's token: %w", err)
	}
	if !kt.IsAPRep() {
		return errors.New("the answer's token is not a Kerberos AP-REP")
	}
	pt, err := crypto.DecryptEncPart(kt.APRep.EncPart, m.key, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("the AP-REP does not decrypt with the session key: %w", err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(pt); err != nil {
		return fmt.Errorf("EncAPRepPart: %w", err)
	}
	want := m.auth.CTime.UTC().Truncate(time.Second)
	if !part.CTime.Equal(want) || part.Cusec != m.auth.Cusec {
		return fmt.Errorf("the AP-REP's time %v + %dµs is not the authenticator's %v + %dµs", part.CTime, part.Cusec, want, m.auth.Cusec)
	}
	return nil
}
