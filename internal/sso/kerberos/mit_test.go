package kerberos

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/sso"
	"github.com/svc-gateway/svc/internal/sso/kerberos/kdctest"
)

// TestMITKDC signs in with tickets a real MIT KDC issued to gokrb5's
// client, and checks each refusal names its check.
func TestMITKDC(t *testing.T) {
	k := kdctest.Start(t)
	v, err := New(Config{KeytabPath: k.KeytabPath, ServicePrincipal: testService + "@" + testRealm})
	if err != nil {
		t.Fatal(err)
	}
	cl := k.Client(t, testUser, testPassword)
	ctx := context.Background()

	t.Run("valid SPNEGO token from gokrb5's client", func(t *testing.T) {
		tok := kdctest.ClientToken(t, cl, testService)
		id, answer, err := v.Verify(ctx, tok)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		want := sso.Identity{Username: testUser, Method: sso.MethodKerberos, Subject: testUser + "@" + kdctest.Realm}
		if diff := cmp.Diff(want, id); diff != "" {
			t.Errorf("identity (-want +got):\n%s", diff)
		}
		if answer != "" {
			t.Errorf("got an answer token %q for a client that did not ask for mutual authentication", answer)
		}
		_, _, err = v.Verify(ctx, tok)
		wantReason(t, err, ReasonReplay, tok)
	})

	tkt, key, err := cl.GetServiceTicket(testService)
	if err != nil {
		t.Fatal(err)
	}
	cname := cl.Credentials.CName()

	t.Run("mutual authentication answers an AP-REP", func(t *testing.T) {
		for _, bare := range []bool{false, true} {
			tok, auth := clientToken(t, tkt, key, testRealm, cname, reqOpts{mutual: true, bare: bare})
			id, answer, err := v.Verify(ctx, tok)
			if err != nil {
				t.Fatalf("Verify (bare %v): %v", bare, err)
			}
			if id.Username != testUser {
				t.Errorf("username: got %q, want %q", id.Username, testUser)
			}
			if answer == "" {
				t.Fatalf("bare %v: no answer token for a client that asked for mutual authentication", bare)
			}
			checkAnswer(t, openAnswer(t, answer, key, !bare), auth)
		}
	})

	t.Run("authenticator outside the clock skew", func(t *testing.T) {
		for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
			tok, _ := clientToken(t, tkt, key, testRealm, cname, reqOpts{skew: skew})
			_, _, err := v.Verify(ctx, tok)
			wantReason(t, err, ReasonClockSkew, tok)
		}
		tok, _ := clientToken(t, tkt, key, testRealm, cname, reqOpts{skew: -2 * time.Minute})
		if _, _, err := v.Verify(ctx, tok); err != nil {
			t.Errorf("an authenticator 2 minutes behind (inside the 5-minute skew): %v", err)
		}
	})

	t.Run("ticket for another service", func(t *testing.T) {
		tok := kdctest.ClientToken(t, cl, kdctest.OtherService)
		_, _, err := v.Verify(ctx, tok)
		wantReason(t, err, ReasonWrongService, tok)
	})

	t.Run("authenticator of another client", func(t *testing.T) {
		other := cname
		other.NameString = []string{"mallory"}
		tok, _ := clientToken(t, tkt, key, testRealm, cname, reqOpts{cname: &other})
		_, _, err := v.Verify(ctx, tok)
		wantReason(t, err, ReasonTicketInvalid, tok)
	})

	t.Run("PAC decoding on with an MIT PAC", func(t *testing.T) {
		pv, err := New(Config{KeytabPath: k.KeytabPath, ServicePrincipal: testService + "@" + testRealm, DecodePAC: true})
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := clientToken(t, tkt, key, testRealm, cname, reqOpts{})
		_, _, err = pv.Verify(ctx, tok)
		wantReason(t, err, ReasonTicketInvalid, tok)
	})

	t.Run("keytab rotation and Reload", func(t *testing.T) { testRotation(t, k) })
	t.Run("curl --negotiate (MIT GSS-API client)", func(t *testing.T) { testCurl(t, k, v) })
	t.Run("gss-client checks the mutual answer (MIT GSS-API)", func(t *testing.T) { testGSSClient(t, k, v) })
}

// testRotation: a new service key (kvno+1) is refused as keytab until the
// new keytab is loaded with Reload; then the old key's tickets are.
func testRotation(t *testing.T, k *kdctest.KDC) {
	const spn = "HTTP/rotate.host"
	path := filepath.Join(k.Dir, "rotate.keytab")
	k.Kadmin(t, "addprinc -randkey "+spn, "ktadd -k "+path+" "+spn)
	v, err := New(Config{KeytabPath: path, ServicePrincipal: spn + "@" + testRealm})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := k.Client(t, testUser, testPassword)
	if _, _, err := v.Verify(ctx, kdctest.ClientToken(t, before, spn)); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}

	next := filepath.Join(k.Dir, "rotate-next.keytab")
	k.Kadmin(t, "ktadd -k "+next+" "+spn) // a new random key, kvno+1, in a new file only
	after := k.Client(t, testUser, testPassword)
	tok := kdctest.ClientToken(t, after, spn)
	_, _, err = v.Verify(ctx, tok)
	wantReason(t, err, ReasonKeytab, tok)

	b, err := os.ReadFile(next)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := v.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if _, _, err := v.Verify(ctx, kdctest.ClientToken(t, after, spn)); err != nil {
		t.Errorf("after Reload, a ticket under the new key: %v", err)
	}
	tok = kdctest.ClientToken(t, before, spn) // gokrb5 cached the old ticket
	_, _, err = v.Verify(ctx, tok)
	wantReason(t, err, ReasonKeytab, tok)
}
