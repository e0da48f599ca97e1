package kerberos

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana"
	"github.com/jcmturner/gokrb5/v8/iana/addrtype"
	"github.com/jcmturner/gokrb5/v8/iana/adtype"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/test/testdata"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/svc-gateway/svc/internal/sso"
)

// A realm without a KDC: the service key is derived from a password into a
// keytab, and the tests mint tickets under it as a KDC would, to make the
// tickets a KDC will not issue (expired, not yet valid, with addresses).
const (
	synthRealm = "EXAMPLE.TEST"
	synthSPN   = "HTTP/svc.example.test"
	synthKVNO  = 3
)

type synthRealmT struct {
	kt   *keytab.Keytab
	path string
	v    *Verifier
}

func newSynthRealm(t testing.TB, cfg Config) *synthRealmT {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(synthSPN, synthRealm, "service-Pw-1", time.Now(), synthKVNO, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	path := writeKeytab(t, kt)
	cfg.KeytabPath, cfg.ServicePrincipal = path, synthSPN+"@"+synthRealm
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &synthRealmT{kt: kt, path: path, v: v}
}

func writeKeytab(t testing.TB, kt *keytab.Keytab) string {
	t.Helper()
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "svc.keytab")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ticketSpec is what the minted ticket says.
type ticketSpec struct {
	client       string
	sname, realm string // the service; the synthetic one when empty
	crealm       string // the client's realm; the service's when empty
	start, end   time.Time
	kvno         int // the key version the ticket claims; synthKVNO when 0
	edit         func(*messages.EncTicketPart)
}

// filled is s with its empty service, client realm and key version
// replaced by what they default to.
func (s ticketSpec) filled() ticketSpec {
	if s.sname == "" {
		s.sname, s.realm = synthSPN, synthRealm
	}
	if s.crealm == "" {
		s.crealm = s.realm
	}
	if s.kvno == 0 {
		s.kvno = synthKVNO
	}
	return s
}

// mintTicket encrypts a ticket for s under kt's key, as a KDC does.
func mintTicket(t testing.TB, kt *keytab.Keytab, s ticketSpec) (messages.Ticket, types.EncryptionKey, types.PrincipalName) {
	t.Helper()
	s = s.filled()
	sname, _ := types.ParseSPNString(s.sname)
	cname := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, s.client)
	etype, _ := crypto.GetEtype(etypeID.AES256_CTS_HMAC_SHA1_96)
	session, err := types.GenerateEncryptionKey(etype)
	if err != nil {
		t.Fatal(err)
	}
	part := messages.EncTicketPart{
		Flags: types.NewKrbFlags(), Key: session, CRealm: s.crealm, CName: cname,
		AuthTime: s.start, StartTime: s.start, EndTime: s.end,
	}
	if s.edit != nil {
		s.edit(&part)
	}
	b, err := asn1.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := kt.GetEncryptionKey(sname, s.realm, 0, etypeID.AES256_CTS_HMAC_SHA1_96)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := crypto.GetEncryptedData(asn1tools.AddASNAppTag(b, asnAppTag.EncTicketPart), key, keyusage.KDC_REP_TICKET, s.kvno)
	if err != nil {
		t.Fatal(err)
	}
	return messages.Ticket{TktVNO: iana.PVNO, Realm: s.realm, SName: sname, EncPart: enc}, session, cname
}

// now is a ticket valid for the next hour.
func now(client string) ticketSpec {
	n := time.Now().UTC()
	return ticketSpec{client: client, start: n.Add(-time.Minute), end: n.Add(time.Hour)}
}

// TestTickets: what a KDC-issued ticket of each shape yields.
func TestTickets(t *testing.T) {
	r := newSynthRealm(t, Config{})
	other := keytab.New()
	if err := other.AddEntry(synthSPN, "OTHER.TEST", "service-Pw-1", time.Now(), synthKVNO, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	n := time.Now().UTC()
	tests := []struct {
		name   string
		kt     *keytab.Keytab
		spec   ticketSpec
		opts   reqOpts
		tamper func(*messages.Ticket)
		want   string // username, or
		fail   Reason
	}{
		{name: "valid", spec: now("alice"), want: "alice"},
		{name: "two-component client", spec: now("alice/admin"), want: "alice/admin"},
		// Through a cross-realm trust: the realm stays in the username, so
		// bob@PARTNER is not this realm's bob (grants, budgets, sessions).
		{name: "a trusted partner realm's client", spec: withCRealm(now("bob"), "PARTNER.TEST"), want: "bob@PARTNER.TEST"},
		{name: "expired", spec: ticketSpec{client: "alice", start: n.Add(-2 * time.Hour), end: n.Add(-time.Hour)}, fail: ReasonExpired},
		{name: "not yet valid", spec: ticketSpec{client: "alice", start: n.Add(time.Hour), end: n.Add(2 * time.Hour)}, fail: ReasonClockSkew},
		{name: "ended within the skew", spec: ticketSpec{client: "alice", start: n.Add(-time.Hour), end: n.Add(-time.Minute)}, want: "alice"},
		{name: "client addresses", spec: withEdit(now("alice"), func(p *messages.EncTicketPart) {
			p.CAddr = types.HostAddresses{{AddrType: addrtype.IPv4, Address: []byte{192, 0, 2, 1}}}
		}), fail: ReasonTicketInvalid},
		{name: "another realm", kt: other, spec: ticketSpec{client: "alice", sname: synthSPN, realm: "OTHER.TEST", start: n.Add(-time.Minute), end: n.Add(time.Hour)}, fail: ReasonWrongService},
		{name: "unknown key version", spec: withKVNO(now("alice"), 9), fail: ReasonKeytab},
		{name: "tampered ticket", spec: now("alice"), tamper: func(tk *messages.Ticket) { tk.EncPart.Cipher[20] ^= 1 }, fail: ReasonTicketInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kt := r.kt
			if tt.kt != nil {
				kt = tt.kt
			}
			spec := tt.spec.filled()
			tkt, key, cname := mintTicket(t, kt, spec)
			if tt.tamper != nil {
				tt.tamper(&tkt)
			}
			tok, _ := clientToken(t, tkt, key, spec.crealm, cname, tt.opts)
			id, _, err := r.v.Verify(context.Background(), tok)
			if tt.fail != "" {
				wantReason(t, err, tt.fail, tok)
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if diff := cmp.Diff(sso.Identity{Username: tt.want, Method: sso.MethodKerberos, Subject: spec.client + "@" + spec.crealm}, id); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

func withEdit(s ticketSpec, f func(*messages.EncTicketPart)) ticketSpec { s.edit = f; return s }
func withKVNO(s ticketSpec, kvno int) ticketSpec                        { s.kvno = kvno; return s }
func withCRealm(s ticketSpec, realm string) ticketSpec                  { s.crealm = realm; return s }

// TestPACGroups: with DecodePAC on, an Active Directory PAC (gokrb5's
// recorded Windows PAC, signed with its test keytab's key) gives the group
// SIDs and full name; off, it is not read.
func TestPACGroups(t *testing.T) {
	ktb, err := hex.DecodeString(testdata.KEYTAB_SYSHTTP_TEST_GOKRB5)
	if err != nil {
		t.Fatal(err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(ktb); err != nil {
		t.Fatal(err)
	}
	pacb, err := hex.DecodeString(testdata.MarshaledPAC_AD_WIN2K_PAC)
	if err != nil {
		t.Fatal(err)
	}
	path := writeKeytab(t, kt)
	ad := []string{"513", "1108", "1109", "1115", "1116", "1114", "1111"} // gokrb5's own test of this PAC
	var groups []string
	for _, rid := range ad {
		groups = append(groups, "S-1-5-21-3167651404-3865080224-2280184895-"+rid)
	}
	tampered := append([]byte(nil), pacb...)
	tampered[len(tampered)/2] ^= 1
	tests := []struct {
		name   string
		pac    []byte
		decode bool
		want   sso.Identity
		fail   Reason
	}{
		{name: "decoded", pac: pacb, decode: true, want: sso.Identity{Username: "testuser1", DisplayName: "Test1 User1", Groups: groups, Method: sso.MethodKerberos, Subject: "testuser1@TEST.GOKRB5"}},
		{name: "not decoded", pac: pacb, decode: false, want: sso.Identity{Username: "testuser1", Method: sso.MethodKerberos, Subject: "testuser1@TEST.GOKRB5"}},
		{name: "tampered, decoded", pac: tampered, decode: true, fail: ReasonTicketInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := New(Config{KeytabPath: path, ServicePrincipal: "sysHTTP@TEST.GOKRB5", DecodePAC: tt.decode})
			if err != nil {
				t.Fatal(err)
			}
			tkt, key, cname := mintTicket(t, kt, pacTicket(t, tt.pac))
			tok, _ := clientToken(t, tkt, key, "TEST.GOKRB5", cname, reqOpts{})
			id, _, err := v.Verify(context.Background(), tok)
			if tt.fail != "" {
				wantReason(t, err, tt.fail, tok)
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if diff := cmp.Diff(tt.want, id); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

// pacTicket is a ticket for sysHTTP@TEST.GOKRB5 (gokrb5's test keytab, key
// version 2) whose authorization data holds pac, as AD issues it.
func pacTicket(t *testing.T, pac []byte) ticketSpec {
	t.Helper()
	inner, err := asn1.Marshal(types.AuthorizationData{{ADType: adtype.ADWin2KPAC, ADData: pac}})
	if err != nil {
		t.Fatal(err)
	}
	n := time.Now().UTC()
	return ticketSpec{client: "testuser1", sname: "sysHTTP", realm: "TEST.GOKRB5", kvno: 2, start: n.Add(-time.Minute), end: n.Add(time.Hour),
		edit: func(p *messages.EncTicketPart) {
			p.AuthorizationData = types.AuthorizationData{{ADType: adtype.ADIfRelevant, ADData: inner}}
		}}
}
