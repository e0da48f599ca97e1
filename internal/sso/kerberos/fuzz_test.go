package kerberos

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/gssapi"

	"github.com/svc-gateway/svc/internal/apierr"
)

// FuzzVerify: no token, whatever its bytes, panics Verify or gets anything
// but a 401 (or, for a valid one, an identity).
func FuzzVerify(f *testing.F) {
	r := newSynthRealm(f, Config{DecodePAC: true})
	tkt, key, cname := mintTicket(f, r.kt, now("alice"))
	for _, o := range []reqOpts{{}, {mutual: true}, {bare: true}} {
		tok, _ := clientToken(f, tkt, key, synthRealm, cname, o)
		b, _ := base64.StdEncoding.DecodeString(tok)
		f.Add(b)
	}
	f.Add(spnegoInit(f, []asn1.ObjectIdentifier{gssapi.OIDKRB5.OID()}, []byte("garbage")))
	f.Add(gssWrap(f, []byte{0x01, 0x00}, []byte{0x6e, 0x03, 0x30, 0x01, 0x00}))
	f.Add([]byte{0x60, 0x00})
	f.Add([]byte{0xa1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, _, err := r.v.Verify(context.Background(), base64.StdEncoding.EncodeToString(b))
		if err == nil {
			if id.Username == "" {
				t.Fatal("no error and no username")
			}
			return
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Kind != apierr.Unauthenticated || ReasonOf(err) == "" {
			t.Fatalf("got %v, want a 401 naming its check", err)
		}
	})
}
