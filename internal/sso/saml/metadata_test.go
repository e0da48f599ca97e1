package saml

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// metadataXML is an IdP's metadata with a signing certificate and an
// encryption one, as AD FS and Entra ID publish it.
func metadataXML(entityID, signing, encryption string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="%s">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
%s
    </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`, entityID, encryption, wrap(signing))
}

// wrap line-wraps base64 at 64 columns, as metadata often does.
func wrap(s string) string {
	var b strings.Builder
	for len(s) > 64 {
		b.WriteString(s[:64] + "\n")
		s = s[64:]
	}
	b.WriteString(s)
	return b.String()
}

// metadataServer serves whatever body holds and counts the requests.
type metadataServer struct {
	*httptest.Server
	mu     sync.Mutex
	body   string
	status int
	hits   atomic.Int64
}

func newMetadataServer(t *testing.T, body string) *metadataServer {
	m := &metadataServer{body: body, status: http.StatusOK}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		m.hits.Add(1)
		m.mu.Lock()
		defer m.mu.Unlock()
		w.Header().Set("Content-Type", "application/samlmetadata+xml")
		w.WriteHeader(m.status)
		_, _ = w.Write([]byte(m.body))
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *metadataServer) set(status int, body string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.body = status, body
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func metadataVerifier(t *testing.T, url string, clk *clock) *Verifier {
	t.Helper()
	v, err := New(Config{SPEntityID: testSP, MetadataURL: url, HTTPClient: &http.Client{Timeout: 5 * time.Second},
		Replay: NewMemoryReplay(0), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMetadataFetchedAndCached(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML(testIssuer, a.certB64(), b.certB64()))
	clk := &clock{now: testNow}
	v := metadataVerifier(t, srv.URL, clk)
	for i := 0; i < 3; i++ {
		if _, err := v.Verify(context.Background(), signed(t, validSpec(testNow))); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("%d fetches within the TTL; want 1", n)
	}
	clk.advance(DefaultMetadataTTL + time.Second)
	s := validSpec(clk.Now())
	if _, err := v.Verify(context.Background(), encode(t, a.sign(t, s.element()))); err != nil {
		t.Fatal(err)
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("%d fetches after the TTL; want 2", n)
	}
}

func TestMetadataEncryptionKeyIsNotTrusted(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML(testIssuer, a.certB64(), b.certB64()))
	v := metadataVerifier(t, srv.URL, &clock{now: testNow})
	_, err := v.Verify(context.Background(), encode(t, b.sign(t, validSpec(testNow).element())))
	wantRefused(t, err, ReasonSignature)
}

func TestMetadataIssuer(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML("https://another-idp.example.test", a.certB64(), b.certB64()))
	_, err := metadataVerifier(t, srv.URL, &clock{now: testNow}).Verify(context.Background(), signed(t, validSpec(testNow)))
	wantRefused(t, err, ReasonIssuer)
}

func TestMetadataUnusable(t *testing.T) {
	a, b := idps(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, c := range []struct {
		name   string
		url    func(t *testing.T) string
		status int
	}{
		{"unreachable", func(*testing.T) string { return closed.URL }, 0},
		{"status 500", func(t *testing.T) string {
			srv := newMetadataServer(t, "oops")
			srv.set(http.StatusInternalServerError, "oops")
			return srv.URL
		}, 0},
		{"not metadata", func(t *testing.T) string { return newMetadataServer(t, "<html>login</html>").URL }, 0},
		{"no signing key", func(t *testing.T) string {
			body := strings.Replace(metadataXML(testIssuer, a.certB64(), b.certB64()), `use="signing"`, `use="encryption"`, 1)
			return newMetadataServer(t, body).URL
		}, 0},
		{"larger than the bound", func(t *testing.T) string {
			body := metadataXML(testIssuer, a.certB64(), b.certB64())
			body = strings.Replace(body, "<md:IDPSSODescriptor", "<!-- "+strings.Repeat("x", DefaultMaxMetadataBytes)+" --><md:IDPSSODescriptor", 1)
			return newMetadataServer(t, body).URL
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := metadataVerifier(t, c.url(t), &clock{now: testNow})
			_, err := v.Verify(context.Background(), signed(t, validSpec(testNow)))
			wantRefused(t, err, ReasonMetadataFetch)
			if got := apierr.From(err).Status(); got != http.StatusBadGateway {
				t.Errorf("status %d; want 502", got)
			}
		})
	}
}

// TestMetadataStaleWhileDown: once fetched, the metadata serves past its
// TTL while the identity provider is down, asked again at most once a
// minute.
func TestMetadataStaleWhileDown(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML(testIssuer, a.certB64(), b.certB64()))
	clk := &clock{now: testNow}
	v := metadataVerifier(t, srv.URL, clk)
	if _, err := v.Verify(context.Background(), signed(t, validSpec(testNow))); err != nil {
		t.Fatal(err)
	}
	srv.set(http.StatusServiceUnavailable, "down")
	clk.advance(DefaultMetadataTTL + time.Second)
	for i := 0; i < 3; i++ {
		if _, err := v.Verify(context.Background(), encode(t, a.sign(t, validSpec(clk.Now()).element()))); err != nil {
			t.Fatalf("with stale metadata: %v", err)
		}
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("%d fetches; want 2 (one attempt while down)", n)
	}
}

// TestMetadataKeyRotation: a signature by a key the cached metadata does
// not hold fetches the metadata again, at most once a minute.
func TestMetadataKeyRotation(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML(testIssuer, a.certB64(), a.certB64()))
	clk := &clock{now: testNow}
	v := metadataVerifier(t, srv.URL, clk)
	if _, err := v.Verify(context.Background(), signed(t, validSpec(testNow))); err != nil {
		t.Fatal(err)
	}
	srv.set(http.StatusOK, metadataXML(testIssuer, b.certB64(), a.certB64()))
	byB := func() string { return encode(t, b.sign(t, validSpec(clk.Now()).element())) }
	_, err := v.Verify(context.Background(), byB())
	wantRefused(t, err, ReasonSignature) // within a minute of the last fetch
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("%d fetches; want 1 (refresh floor)", n)
	}
	clk.advance(2 * time.Minute)
	if _, err := v.Verify(context.Background(), byB()); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("%d fetches; want 2", n)
	}
}

func TestParseCertificates(t *testing.T) {
	a, b := idps(t)
	pemOf := func(p *testIdP) string {
		return "-----BEGIN CERTIFICATE-----\n" + wrap(p.certB64()) + "\n-----END CERTIFICATE-----\n"
	}
	certs, err := ParseCertificates(pemOf(a) + pemOf(b))
	if err != nil || len(certs) != 2 || !certs[0].Equal(a.cert) || !certs[1].Equal(b.cert) {
		t.Fatalf("two PEM certificates: %v, %d", err, len(certs))
	}
	certs, err = ParseCertificates("  " + wrap(a.certB64()) + "\n")
	if err != nil || len(certs) != 1 || !certs[0].Equal(a.cert) {
		t.Fatalf("bare base64: %v", err)
	}
	for _, bad := range []string{"", "not base64!", b64("not DER"), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"} {
		if _, err := ParseCertificates(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestMetadataOneFetchForConcurrentSignIns: sign-ins arriving together
// before the first fetch wait for one fetch.
func TestMetadataOneFetchForConcurrentSignIns(t *testing.T) {
	a, b := idps(t)
	srv := newMetadataServer(t, metadataXML(testIssuer, a.certB64(), b.certB64()))
	v := metadataVerifier(t, srv.URL, &clock{now: testNow})
	values := make([]string, 8)
	for i := range values {
		values[i] = signed(t, validSpec(testNow))
	}
	var wg sync.WaitGroup
	for _, value := range values {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.Verify(context.Background(), value); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("%d fetches; want 1", n)
	}
}
