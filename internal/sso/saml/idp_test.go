package saml

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// The test identity provider and service provider.
const (
	testIssuer = "https://idp.example.test/saml"
	testSP     = "https://svc.example.test/saml/sp"
)

// testIdP is an identity provider of the tests: an RSA key and its
// self-signed certificate, valid an hour either side of the start of the
// test binary.
type testIdP struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

var (
	idpOnce sync.Once
	idpA    *testIdP // the trusted identity provider
	idpB    *testIdP // another one, trusted by no test verifier unless said
)

// idps returns the two test identity providers, generated once.
func idps(t testing.TB) (*testIdP, *testIdP) {
	t.Helper()
	idpOnce.Do(func() {
		idpA, idpB = genIdP(t, "idp-a"), genIdP(t, "idp-b")
	})
	return idpA, idpB
}

func genIdP(t testing.TB, cn string) *testIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testIdP{key: key, cert: cert}
}

// certB64 is the certificate as metadata and IdP consoles show it.
func (p *testIdP) certB64() string { return base64.StdEncoding.EncodeToString(p.cert.Raw) }

// signer configures a signature: hash (SHA-256 by default) and
// canonicalizer (exclusive c14n by default).
type signer struct {
	hash crypto.Hash
	c14n dsig.Canonicalizer
	// idAttr, when set, is the attribute the signer takes for the ID; one
	// the element lacks makes the Reference URI empty (the whole document).
	idAttr string
}

// sign returns el with an enveloped RSA-SHA256 signature placed, as
// identity providers place it, right after the Issuer.
func (p *testIdP) sign(t testing.TB, el *etree.Element) *etree.Element {
	return p.signWith(t, el, signer{})
}

func (p *testIdP) signWith(t testing.TB, el *etree.Element, s signer) *etree.Element {
	t.Helper()
	ctx, err := dsig.NewSigningContext(p.key, [][]byte{p.cert.Raw})
	if err != nil {
		t.Fatal(err)
	}
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	if s.c14n != nil {
		ctx.Canonicalizer = s.c14n
	}
	if s.hash != 0 {
		ctx.Hash = s.hash
	}
	if s.idAttr != "" {
		ctx.IdAttribute = s.idAttr
	}
	signed, err := ctx.SignEnveloped(el)
	if err != nil {
		t.Fatal(err)
	}
	// SignEnveloped appends the signature without indexing it: move it by
	// position.
	sig, ok := signed.Child[len(signed.Child)-1].(*etree.Element)
	if !ok || sig.Tag != "Signature" {
		t.Fatal("no signature appended")
	}
	signed.Child = signed.Child[:len(signed.Child)-1]
	signed.ReindexChildren()
	at := 0
	if iss := signed.SelectElement("Issuer"); iss != nil {
		at = iss.Index() + 1
	}
	signed.InsertChildAt(at, sig)
	return signed
}

// attr is one Attribute of a test assertion.
type attr struct {
	Name   string
	Values []string
}

// spec describes a test assertion; zero times and an empty NameID are
// left out.
type spec struct {
	ID                         string
	Issuer                     string
	NameID, NameIDFormat       string
	NotBefore, NotOnOrAfter    time.Time
	SCDNotBefore, SCDNotOnOrAf time.Time
	Audiences                  [][]string // one AudienceRestriction per entry
	Attrs                      []attr
}

// validSpec is an assertion every test verifier accepts at now.
func validSpec(now time.Time) spec {
	return spec{
		ID:           newID(),
		Issuer:       testIssuer,
		NameID:       "alice@example.com",
		NameIDFormat: nameIDEmailFormat,
		NotBefore:    now.Add(-time.Minute),
		NotOnOrAfter: now.Add(5 * time.Minute),
		SCDNotOnOrAf: now.Add(5 * time.Minute),
		Audiences:    [][]string{{testSP}},
	}
}

func newID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "_" + hex.EncodeToString(b)
}

func instant(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// element builds the saml:Assertion.
func (s spec) element() *etree.Element {
	a := etree.NewElement("saml:Assertion")
	a.CreateAttr("xmlns:saml", nsAssertion)
	a.CreateAttr("ID", s.ID)
	a.CreateAttr("Version", "2.0")
	a.CreateAttr("IssueInstant", instant(time.Now()))
	a.CreateElement("saml:Issuer").SetText(s.Issuer)
	subj := a.CreateElement("saml:Subject")
	if s.NameID != "" {
		n := subj.CreateElement("saml:NameID")
		if s.NameIDFormat != "" {
			n.CreateAttr("Format", s.NameIDFormat)
		}
		n.SetText(s.NameID)
	}
	sc := subj.CreateElement("saml:SubjectConfirmation")
	sc.CreateAttr("Method", "urn:oasis:names:tc:SAML:2.0:cm:bearer")
	scd := sc.CreateElement("saml:SubjectConfirmationData")
	setTime(scd, "NotBefore", s.SCDNotBefore)
	setTime(scd, "NotOnOrAfter", s.SCDNotOnOrAf)
	cond := a.CreateElement("saml:Conditions")
	setTime(cond, "NotBefore", s.NotBefore)
	setTime(cond, "NotOnOrAfter", s.NotOnOrAfter)
	for _, auds := range s.Audiences {
		r := cond.CreateElement("saml:AudienceRestriction")
		for _, aud := range auds {
			r.CreateElement("saml:Audience").SetText(aud)
		}
	}
	authn := a.CreateElement("saml:AuthnStatement")
	authn.CreateAttr("AuthnInstant", instant(time.Now()))
	if len(s.Attrs) > 0 {
		st := a.CreateElement("saml:AttributeStatement")
		for _, at := range s.Attrs {
			ae := st.CreateElement("saml:Attribute")
			ae.CreateAttr("Name", at.Name)
			for _, v := range at.Values {
				ae.CreateElement("saml:AttributeValue").SetText(v)
			}
		}
	}
	return a
}

func setTime(el *etree.Element, name string, t time.Time) {
	if !t.IsZero() {
		el.CreateAttr(name, instant(t))
	}
}

// response wraps assertions in a samlp:Response with status Success.
func response(assertions ...*etree.Element) *etree.Element {
	r := etree.NewElement("samlp:Response")
	r.CreateAttr("xmlns:samlp", nsProtocol)
	r.CreateAttr("xmlns:saml", nsAssertion)
	r.CreateAttr("ID", newID())
	r.CreateAttr("Version", "2.0")
	r.CreateAttr("IssueInstant", instant(time.Now()))
	r.CreateElement("saml:Issuer").SetText(testIssuer)
	st := r.CreateElement("samlp:Status")
	st.CreateElement("samlp:StatusCode").CreateAttr("Value", statusSuccess)
	for _, a := range assertions {
		r.AddChild(a)
	}
	return r
}

// xmlOf serializes el as a document.
func xmlOf(t testing.TB, el *etree.Element) string {
	t.Helper()
	doc := etree.NewDocument()
	doc.SetRoot(el.Copy())
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// encode is the X-SAML-Assertion value of el.
func encode(t testing.TB, el *etree.Element) string {
	return b64(xmlOf(t, el))
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// find returns the first element under root (depth first) with the tag.
func find(root *etree.Element, tag string) *etree.Element {
	var out *etree.Element
	walk(root, func(el *etree.Element) bool {
		if el.Tag == tag {
			out = el
		}
		return out == nil
	})
	return out
}

// idpCerts is idpA's certificate as a trust list.
func idpCerts(t testing.TB) []*x509.Certificate {
	a, _ := idps(t)
	return []*x509.Certificate{a.cert}
}
