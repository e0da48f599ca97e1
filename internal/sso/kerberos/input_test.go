package kerberos

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

var oidNTLM = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 2, 10}

// TestMalformedTokens: every token that is not a Kerberos initial token is
// refused with the check that caught it, and never reaches a 500.
func TestMalformedTokens(t *testing.T) {
	r := newSynthRealm(t, Config{})
	b64 := base64.StdEncoding.EncodeToString
	resp, err := (&spnego.NegTokenResp{NegState: 1, SupportedMech: gssapi.OIDKRB5.OID()}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, header string
		want         Reason
	}{
		{"empty", "", ReasonNoToken},
		{"blank", "  \t", ReasonNoToken},
		{"not base64", "%%%not-base64%%%", ReasonMalformed},
		{"not ASN.1", b64([]byte("hello, this is not a token")), ReasonMalformed},
		{"larger than the bound", strings.Repeat("A", base64.StdEncoding.EncodedLen(MaxTokenBytes)+4), ReasonMalformed},
		{"larger than the bound, even if valid", oversized(t, r), ReasonMalformed},
		{"a NegTokenResp first", b64(resp), ReasonMalformed},
		{"NTLM offered first", b64(spnegoInit(t, []asn1.ObjectIdentifier{oidNTLM, gssapi.OIDKRB5.OID()}, []byte("NTLMSSP\x00\x01\x00\x00\x00"))), ReasonUnsupportedMechanism},
		{"no mechanism", b64(spnegoInit(t, nil, []byte{1})), ReasonMalformed},
		{"Kerberos without its token", b64(spnegoInit(t, []asn1.ObjectIdentifier{gssapi.OIDKRB5.OID()}, nil)), ReasonMalformed},
		{"Kerberos token of garbage", b64(spnegoInit(t, []asn1.ObjectIdentifier{gssapi.OIDKRB5.OID()}, []byte("garbage"))), ReasonMalformed},
		{"an AP-REP where an AP-REQ belongs", b64(gssWrap(t, []byte{0x02, 0x00}, []byte{0x6f, 0x00})), ReasonMalformed},
		{"an unknown Kerberos token id", b64(gssWrap(t, []byte{0x04, 0x04}, []byte{0x30, 0x00})), ReasonMalformed},
		{"a bare token of another mechanism", b64(otherMechToken(t)), ReasonUnsupportedMechanism},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, answer, err := r.v.Verify(context.Background(), tt.header)
			wantReason(t, err, tt.want, tt.header)
			if answer != "" {
				t.Errorf("got an answer token %q with an error", answer)
			}
		})
	}
}

// oversized is a valid token grown past MaxTokenBytes with an
// authorization-data entry in its authenticator.
func oversized(t *testing.T, r *synthRealmT) string {
	t.Helper()
	tkt, key, cname := mintTicket(t, r.kt, now("alice"))
	tok, _ := clientToken(t, tkt, key, synthRealm, cname, reqOpts{addAuth: func(a *types.Authenticator) {
		a.AuthorizationData = types.AuthorizationData{{ADType: 1, ADData: make([]byte, MaxTokenBytes)}}
	}})
	return tok
}

// otherMechToken is a GSS-API initial token of the NTLM mechanism.
func otherMechToken(t *testing.T) []byte {
	t.Helper()
	oid, err := asn1.Marshal(oidNTLM)
	if err != nil {
		t.Fatal(err)
	}
	return asn1tools.AddASNAppTag(append(oid, "NTLMSSP"...), 0)
}

// TestMutualSynthetic: the answer mirrors the client's wrapping and is
// only sent when asked for, by either of the two signals.
func TestMutualSynthetic(t *testing.T) {
	r := newSynthRealm(t, Config{})
	tests := []struct {
		name   string
		opts   reqOpts
		answer bool
	}{
		{"SPNEGO, mutual", reqOpts{mutual: true}, true},
		{"bare Kerberos, mutual", reqOpts{mutual: true, bare: true}, true},
		{"Microsoft's legacy OID, mutual", reqOpts{mutual: true, mech: gssapi.OIDMSLegacyKRB5.OID()}, true},
		{"GSS mutual flag only", reqOpts{addAuth: setGSSFlags(gssapi.ContextFlagMutual)}, true},
		{"AP option mutual-required only", reqOpts{mutual: true, addAuth: setGSSFlags(0)}, true},
		{"no mutual", reqOpts{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tkt, key, cname := mintTicket(t, r.kt, now("alice"))
			tok, auth := clientToken(t, tkt, key, synthRealm, cname, tt.opts)
			_, answer, err := r.v.Verify(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.answer {
				if answer != "" {
					t.Errorf("got answer %q, want none", answer)
				}
				return
			}
			if answer == "" {
				t.Fatal("no answer token")
			}
			if tt.opts.mech != nil {
				checkSupportedMech(t, answer, tt.opts.mech)
				return
			}
			checkAnswer(t, openAnswer(t, answer, key, !tt.opts.bare), auth)
		})
	}
}

func setGSSFlags(f uint32) func(*types.Authenticator) {
	return func(a *types.Authenticator) { a.Cksum.Checksum = gssChecksum(f) }
}

// checkSupportedMech fails unless the SPNEGO answer names mech.
func checkSupportedMech(t *testing.T, answer string, mech asn1.ObjectIdentifier) {
	t.Helper()
	b, _ := base64.StdEncoding.DecodeString(answer)
	var resp spnego.NegTokenResp
	if err := resp.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if !resp.SupportedMech.Equal(mech) {
		t.Errorf("supportedMech: got %s, want the client's %s", resp.SupportedMech, mech)
	}
}

// TestNew: the configuration errors New reports.
func TestNew(t *testing.T) {
	r := newSynthRealm(t, Config{})
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.keytab")
	if err := os.WriteFile(garbage, []byte{0x05, 0x02, 0xff, 0xff, 0xff, 0x7f, 0x01}, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.keytab")
	if err := os.WriteFile(huge, make([]byte, MaxKeytabBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	spn := synthSPN + "@" + synthRealm
	tests := []struct {
		name   string
		cfg    Config
		keytab bool // a keytab-reason error
	}{
		{"no realm", Config{KeytabPath: r.path, ServicePrincipal: synthSPN}, false},
		{"empty realm", Config{KeytabPath: r.path, ServicePrincipal: synthSPN + "@"}, false},
		{"empty component", Config{KeytabPath: r.path, ServicePrincipal: "HTTP/@" + synthRealm}, false},
		{"negative skew", Config{KeytabPath: r.path, ServicePrincipal: spn, MaxClockSkew: -time.Second}, false},
		{"no keytab path", Config{ServicePrincipal: spn}, true},
		{"missing keytab", Config{KeytabPath: filepath.Join(dir, "absent"), ServicePrincipal: spn}, true},
		{"corrupt keytab", Config{KeytabPath: garbage, ServicePrincipal: spn}, true},
		{"keytab over the bound", Config{KeytabPath: huge, ServicePrincipal: spn}, true},
		{"keytab without the principal", Config{KeytabPath: r.path, ServicePrincipal: "HTTP/elsewhere@" + synthRealm}, true},
		{"keytab of another realm", Config{KeytabPath: r.path, ServicePrincipal: synthSPN + "@OTHER.TEST"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := New(tt.cfg)
			if err == nil {
				t.Fatalf("New accepted %+v", tt.cfg)
			}
			if v != nil {
				t.Error("New returned a Verifier with its error")
			}
			if got := ReasonOf(err) == ReasonKeytab; got != tt.keytab {
				t.Errorf("keytab reason: got %v, want %v (%v)", got, tt.keytab, err)
			}
		})
	}
	v, err := New(Config{KeytabPath: r.path, ServicePrincipal: spn})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.ServicePrincipal(); got != spn {
		t.Errorf("ServicePrincipal: got %q, want %q", got, spn)
	}
}

// TestReloadFailureKeepsKeytab: a broken keytab file on Reload is
// reported and the loaded keys keep verifying.
func TestReloadFailureKeepsKeytab(t *testing.T) {
	r := newSynthRealm(t, Config{})
	if err := os.WriteFile(r.path, []byte("not a keytab"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.v.Reload(); ReasonOf(err) != ReasonKeytab {
		t.Fatalf("Reload of a broken keytab: got %v, want a keytab error", err)
	}
	tkt, key, cname := mintTicket(t, r.kt, now("alice"))
	tok, _ := clientToken(t, tkt, key, synthRealm, cname, reqOpts{})
	if _, _, err := r.v.Verify(context.Background(), tok); err != nil {
		t.Errorf("after a failed Reload: %v", err)
	}
}

// TestContextDone: a done context is reported as itself.
func TestContextDone(t *testing.T) {
	r := newSynthRealm(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tkt, key, cname := mintTicket(t, r.kt, now("alice"))
	tok, _ := clientToken(t, tkt, key, synthRealm, cname, reqOpts{})
	if _, _, err := r.v.Verify(ctx, tok); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestHTTPHelpers: the challenge, the answer header and the
// Authorization parsing.
func TestHTTPHelpers(t *testing.T) {
	w := httptest.NewRecorder()
	w.Header().Add("WWW-Authenticate", `Bearer realm="svc"`)
	Challenge(w)
	Challenge(w)
	if diff := cmp.Diff([]string{`Bearer realm="svc"`, "Negotiate"}, w.Header().Values("WWW-Authenticate")); diff != "" {
		t.Errorf("Challenge (-want +got):\n%s", diff)
	}

	w = httptest.NewRecorder()
	SetResponseToken(w, "")
	if got := w.Header().Get("WWW-Authenticate"); got != "" {
		t.Errorf("SetResponseToken with no token set %q", got)
	}
	SetResponseToken(w, "oRQwEqADCgEA")
	if got := w.Header().Get("WWW-Authenticate"); got != "Negotiate oRQwEqADCgEA" {
		t.Errorf("SetResponseToken: got %q", got)
	}

	for _, tt := range []struct {
		in, tok string
		ok      bool
	}{
		{"Negotiate YIIC", "YIIC", true},
		{"negotiate  YIIC ", "YIIC", true},
		{"Negotiate", "", true},
		{"Bearer abc", "", false},
		{"NegotiateYIIC", "", false},
		{"", "", false},
	} {
		tok, ok := TokenFromAuthorization(tt.in)
		if tok != tt.tok || ok != tt.ok {
			t.Errorf("TokenFromAuthorization(%q): got %q %v, want %q %v", tt.in, tok, ok, tt.tok, tt.ok)
		}
	}
}
