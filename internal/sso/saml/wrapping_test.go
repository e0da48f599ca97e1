package saml

import (
	"context"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// evilSpec is the assertion an attacker would like accepted: another user,
// in the admin group.
func evilSpec() spec {
	s := validSpec(testNow)
	s.NameID = "admin@example.com"
	s.Attrs = []attr{{"groups", []string{"svc-Admins"}}}
	return s
}

// TestSignatureWrapping replays the known XML signature wrapping attacks
// (XSW1–XSW8 of Somorovsky et al., and the comment truncation of
// CVE-2017-11427) with a genuine signed assertion of alice and an unsigned
// one of admin; each must be refused, for the reason that names its first
// defence.
func TestSignatureWrapping(t *testing.T) {
	a, _ := idps(t)
	cases := []struct {
		name   string
		doc    func(signed *etree.Element) *etree.Element
		reason Reason
	}{{
		name:   "a second, unsigned assertion before the signed one",
		doc:    func(signed *etree.Element) *etree.Element { return response(evilSpec().element(), signed) },
		reason: ReasonMalformed,
	}, {
		name:   "a second, unsigned assertion after the signed one",
		doc:    func(signed *etree.Element) *etree.Element { return response(signed, evilSpec().element()) },
		reason: ReasonMalformed,
	}, {
		name: "the signed assertion moved into the evil one's Advice",
		doc: func(signed *etree.Element) *etree.Element {
			evil := evilSpec().element()
			evil.InsertChildAt(1, etree.NewElement("saml:Advice"))
			evil.SelectElement("Advice").AddChild(signed)
			return response(evil)
		},
		reason: ReasonMalformed,
	}, {
		name: "the signed assertion moved into the Response's Extensions",
		doc: func(signed *etree.Element) *etree.Element {
			r := response(evilSpec().element())
			r.InsertChildAt(1, etree.NewElement("samlp:Extensions"))
			r.SelectElement("Extensions").AddChild(signed)
			return r
		},
		reason: ReasonMalformed,
	}, {
		name: "the evil assertion with the signed one's ID, the signed one nested in it",
		doc: func(signed *etree.Element) *etree.Element {
			s := evilSpec()
			s.ID = signed.SelectAttrValue("ID", "")
			evil := s.element()
			evil.AddChild(signed)
			return evil
		},
		reason: ReasonMalformed,
	}, {
		name: "the evil assertion carrying the signed one's Signature, which points elsewhere",
		doc: func(signed *etree.Element) *etree.Element {
			evil := evilSpec().element()
			evil.InsertChildAt(1, find(signed, "Signature").Copy())
			return evil
		},
		reason: ReasonSignature,
	}, {
		name: "the evil assertion given the signed one's ID and Signature",
		doc: func(signed *etree.Element) *etree.Element {
			s := evilSpec()
			s.ID = signed.SelectAttrValue("ID", "")
			evil := s.element()
			evil.InsertChildAt(1, find(signed, "Signature").Copy())
			return evil
		},
		reason: ReasonSignature,
	}, {
		name: "the signed assertion's Signature moved into the evil assertion inside a response",
		doc: func(signed *etree.Element) *etree.Element {
			evil := evilSpec().element()
			evil.InsertChildAt(1, find(signed, "Signature").Copy())
			return response(evil)
		},
		reason: ReasonSignature,
	}, {
		name: "a signature with a second Reference",
		doc: func(signed *etree.Element) *etree.Element {
			ref := find(signed, "Reference")
			ref.Parent().AddChild(ref.Copy())
			return signed
		},
		reason: ReasonMalformed,
	}, {
		name: "two signatures in the assertion",
		doc: func(signed *etree.Element) *etree.Element {
			signed.AddChild(find(signed, "Signature").Copy())
			return signed
		},
		reason: ReasonMalformed,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := a.sign(t, validSpec(testNow).element())
			_, err := newVerifier(t).Verify(context.Background(), encode(t, c.doc(good)))
			wantRefused(t, err, c.reason)
		})
	}
}

// TestReferenceMustNameTheElement: a genuine signature whose Reference URI
// is empty ("the whole document", which goxmldsig takes for the element it
// is given) is refused: the SAML profile requires "#" + the ID, so what is
// signed is never ambiguous once the element is detached from its
// document.
func TestReferenceMustNameTheElement(t *testing.T) {
	a, _ := idps(t)
	el := a.signWith(t, validSpec(testNow).element(), signer{idAttr: "NoSuchAttribute"})
	if uri := find(el, "Reference").SelectAttrValue("URI", "-"); uri != "" {
		t.Fatalf("reference URI %q; want empty", uri)
	}
	_, err := newVerifier(t).Verify(context.Background(), encode(t, el))
	wantRefused(t, err, ReasonSignature)
}

// TestSignedResponseAlteredAssertion: the Response's signature covers the
// assertion, so changing the (unsigned) assertion inside a signed Response
// breaks it; adding one is refused before.
func TestSignedResponseAlteredAssertion(t *testing.T) {
	a, _ := idps(t)
	t.Run("altered", func(t *testing.T) {
		r := a.sign(t, response(validSpec(testNow).element()))
		find(r, "NameID").SetText("admin@example.com")
		_, err := newVerifier(t).Verify(context.Background(), encode(t, r))
		wantRefused(t, err, ReasonSignature)
	})
	t.Run("attribute added", func(t *testing.T) {
		r := a.sign(t, response(validSpec(testNow).element()))
		find(r, "Assertion").CreateElement("saml:AttributeStatement").CreateElement("saml:Attribute").CreateAttr("Name", "groups")
		_, err := newVerifier(t).Verify(context.Background(), encode(t, r))
		wantRefused(t, err, ReasonSignature)
	})
	t.Run("assertion replaced, the response's signature kept", func(t *testing.T) {
		r := a.sign(t, response(validSpec(testNow).element()))
		old := find(r, "Assertion")
		r.RemoveChild(old)
		evil := evilSpec()
		evil.ID = old.SelectAttrValue("ID", "")
		r.AddChild(evil.element())
		_, err := newVerifier(t).Verify(context.Background(), encode(t, r))
		wantRefused(t, err, ReasonSignature)
	})
	t.Run("second assertion added", func(t *testing.T) {
		r := a.sign(t, response(validSpec(testNow).element()))
		r.AddChild(evilSpec().element())
		_, err := newVerifier(t).Verify(context.Background(), encode(t, r))
		wantRefused(t, err, ReasonMalformed)
	})
}

// TestCommentInNameID: the signature covers the NameID's text without
// comments, so a comment can be inserted without breaking it; a reader
// that stops at the comment would see a truncated name (CVE-2017-11427).
// Comments are refused outright, so neither the truncated nor the joined
// text becomes a username.
func TestCommentInNameID(t *testing.T) {
	a, _ := idps(t)
	for _, c := range []struct{ signedName, withComment string }{
		{"admin@evil", "admin<!---->@evil"},
		{"admin@example.com.evil.com", "admin@example.com<!---->.evil.com"},
	} {
		s := validSpec(testNow)
		s.NameID = c.signedName
		doc := xmlOf(t, a.sign(t, s.element()))
		doc = strings.Replace(doc, ">"+c.signedName+"<", ">"+c.withComment+"<", 1)
		if !strings.Contains(doc, c.withComment) {
			t.Fatal("comment not inserted")
		}
		id, err := newVerifier(t).Verify(context.Background(), b64(doc))
		if err == nil {
			t.Fatalf("%s: accepted as %q", c.withComment, id.Username)
		}
		wantRefused(t, err, ReasonMalformed)
	}
}

// TestSignedAssertionIsTheVerifiedCopy checks the layer under the document
// checks: what signedAssertion returns is goxmldsig's rebuilt element, not
// the one of the parsed document, and it holds the canonical text that was
// digested (here, past a comment the document checks would have refused).
func TestSignedAssertionIsTheVerifiedCopy(t *testing.T) {
	a, _ := idps(t)
	s := validSpec(testNow)
	s.NameID = "admin@example.com.evil.com"
	doc := xmlOf(t, a.sign(t, s.element()))
	doc = strings.Replace(doc, ".com.evil", ".com<!---->.evil", 1)
	parsed := etree.NewDocument()
	if err := parsed.ReadFromString(doc); err != nil {
		t.Fatal(err)
	}
	root := parsed.Root()
	got, err := signedAssertion(root, idpCerts(t), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if got == root {
		t.Fatal("signedAssertion returned the parsed element, not the verified copy")
	}
	n := find(got, "NameID")
	for _, tok := range n.Child {
		if _, ok := tok.(*etree.Comment); ok {
			t.Fatal("the verified NameID holds the comment")
		}
	}
	if v, _ := text(n); v != s.NameID {
		t.Errorf("verified NameID %q; want the signed text %q", v, s.NameID)
	}
}
