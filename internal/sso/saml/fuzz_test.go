package saml

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/svc-gateway/svc/internal/apierr"
)

// FuzzVerify feeds Verify documents (base64-encoded, as the header carries
// them) and raw header values: it must never panic, and every refusal must
// be a 401 *apierr.Error with a reason. Seeds: signed assertions and
// responses, the wrapping attacks, and broken documents.
func FuzzVerify(f *testing.F) {
	a, b := idps(f)
	s := validSpec(testNow)
	s.Attrs = []attr{{"groups", []string{"g1", "g2"}}, {"email", []string{"x@example.com"}}}
	signedA := a.sign(f, s.element())
	evil := evilSpec().element()
	evil.InsertChildAt(1, find(signedA, "Signature").Copy())
	for _, el := range []*etree.Element{
		signedA,
		response(signedA),
		a.sign(f, response(s.element())),
		response(evilSpec().element(), signedA),
		evil,
		b.sign(f, s.element()),
		s.element(),
	} {
		f.Add([]byte(xmlOf(f, el)))
	}
	doc := xmlOf(f, signedA)
	f.Add([]byte(strings.Replace(doc, "x@example.com", "x@<!---->example.com", 1)))
	f.Add([]byte(doc[:len(doc)/3]))
	f.Add([]byte(`<?xml version="1.0"?><!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>`))
	f.Add([]byte("PHNhbWw6QXNzZXJ0aW9uLz4="))
	f.Add([]byte{})

	v := newVerifier(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, value := range []string{b64(string(doc)), string(doc)} {
			_, err := v.Verify(context.Background(), value)
			if err == nil {
				continue
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ReasonOf(err) == "" {
				t.Fatalf("refusal %v is not an *apierr.Error with a reason", err)
			}
			if ae.Status() != http.StatusUnauthorized {
				t.Fatalf("status %d for %v; want 401", ae.Status(), err)
			}
		}
	})
}
