package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/svc-gateway/svc/internal/providertest"
)

// samlIdP signs assertions with a generated key and certificate.
type samlIdP struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

func newSAMLIdP(t *testing.T) *samlIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &samlIdP{key: key, cert: cert}
}

func (p *samlIdP) pem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.cert.Raw}))
}

// assertion is a signed assertion for user in groups, valid for ttl, for
// the audience, base64 as the X-SAML-Assertion header carries it.
func (p *samlIdP) assertion(t *testing.T, id, user, audience string, groups []string, ttl time.Duration) string {
	now := time.Now().UTC()
	var attrs strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&attrs, `<saml:AttributeValue>%s</saml:AttributeValue>`, g)
	}
	doc := fmt.Sprintf(`<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="%s" Version="2.0" IssueInstant="%s">`+
		`<saml:Issuer>https://idp.example.test</saml:Issuer>`+
		`<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">%s</saml:NameID>`+
		`<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="%s"/></saml:SubjectConfirmation></saml:Subject>`+
		`<saml:Conditions NotBefore="%s" NotOnOrAfter="%s"><saml:AudienceRestriction><saml:Audience>%s</saml:Audience></saml:AudienceRestriction></saml:Conditions>`+
		`<saml:AttributeStatement><saml:Attribute Name="http://schemas.microsoft.com/ws/2008/06/identity/claims/groups">%s</saml:Attribute></saml:AttributeStatement>`+
		`</saml:Assertion>`, id, now.Format(time.RFC3339), user, now.Add(ttl).Format(time.RFC3339),
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(ttl).Format(time.RFC3339), audience, attrs.String())
	d := etree.NewDocument()
	if err := d.ReadFromString(doc); err != nil {
		t.Fatal(err)
	}
	ctx, err := dsig.NewSigningContext(p.key, [][]byte{p.cert.Raw})
	if err != nil {
		t.Fatal(err)
	}
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	signed, err := ctx.SignEnveloped(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	// The signature goes after the Issuer, where identity providers put it.
	sig := signed.Child[len(signed.Child)-1].(*etree.Element)
	signed.Child = signed.Child[:len(signed.Child)-1]
	signed.ReindexChildren()
	signed.InsertChildAt(signed.SelectElement("Issuer").Index()+1, sig)
	out := etree.NewDocument()
	out.SetRoot(signed)
	b, err := out.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestSignInSAML: an assertion signed by the configured IdP certificate
// signs its subject in (groups from the groups claim); a replayed or
// expired one, one for another audience, or one signed by another key is
// refused naming the check.
func TestSignInSAML(t *testing.T) {
	idp, other := newSAMLIdP(t), newSAMLIdP(t)
	g := start(t, providertest.NewOpenAI(t), nil)
	const sp = "https://svc.example.test/saml"
	if st := g.admin("POST", "/api/auth/sso/config", map[string]any{"saml_idp_certificate": idp.pem(),
		"saml_sp_entity_id": sp, "admin_groups": []string{"ai-admins"}}, nil); st != 200 {
		t.Fatalf("config: %d", st)
	}
	good := idp.assertion(t, "_a1", "erin@corp.example", sp, []string{"ai-admins", "eng"}, 5*time.Minute)
	st, out := signIn(t, g, map[string]string{"X-SAML-Assertion": good})
	user, _ := out["user"].(map[string]any)
	if st != 200 || user["username"] != "erin" || user["auth_method"] != "saml" || !slices.Contains(anyStrings(user["roles"]), "admin") {
		t.Fatalf("SAML sign-in: %d %v", st, out)
	}
	for name, c := range map[string]struct{ assertion, code string }{
		"replayed":         {good, "saml_replayed"},
		"audience":         {idp.assertion(t, "_a2", "erin@corp.example", "https://other.example", nil, 5*time.Minute), "saml_audience"},
		"expired":          {idp.assertion(t, "_a3", "erin@corp.example", sp, nil, -30*time.Minute), "saml_expired"},
		"another key":      {other.assertion(t, "_a4", "erin@corp.example", sp, nil, 5*time.Minute), "saml_signature"},
		"not an assertion": {base64.StdEncoding.EncodeToString([]byte("<x/>")), "saml_malformed"},
	} {
		st, out := signIn(t, g, map[string]string{"X-SAML-Assertion": c.assertion})
		if st != 401 || !strings.Contains(jsonText(out), c.code) {
			t.Errorf("%s: %d %v, want 401 %s", name, st, out, c.code)
		}
	}
}
