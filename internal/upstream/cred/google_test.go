package cred_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/upstream/cred"
)

const googleTestEmail = "svc-test@svc-project.iam.gserviceaccount.com"

// googleTestKey is an RSA key generated once for the package's tests.
var googleTestKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// googleServiceAccountJSON is a service-account key file as the Cloud console
// downloads it, with tokenURI as its token_uri.
func googleServiceAccountJSON(t *testing.T, tokenURI string) ([]byte, string) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(googleTestKey())
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "svc-project", "private_key_id": "0123456789abcdef",
		"private_key": keyPEM, "client_email": googleTestEmail, "client_id": "1234567890",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
	})
	return b, keyPEM
}

// googleTokenServer is a Google OAuth token endpoint that checks the JWT bearer
// grant and counts token requests.
type googleTokenServer struct {
	*httptest.Server
	requests  atomic.Int64
	expiresIn int
	status    int
	mu        sync.Mutex
	errs      []string
}

func newGoogleTokenServer(t *testing.T, expiresIn int) *googleTokenServer {
	ts := &googleTokenServer{expiresIn: expiresIn, status: http.StatusOK}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *googleTokenServer) fail(format string, args ...any) {
	ts.mu.Lock()
	ts.errs = append(ts.errs, fmt.Sprintf(format, args...))
	ts.mu.Unlock()
}

func (ts *googleTokenServer) check(t *testing.T) {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, e := range ts.errs {
		t.Error("token endpoint: " + e)
	}
}

func (ts *googleTokenServer) serve(w http.ResponseWriter, r *http.Request) {
	n := ts.requests.Add(1)
	if err := r.ParseForm(); err != nil {
		ts.fail("form: %v", err)
	}
	if got, want := r.PostForm.Get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer"; got != want {
		ts.fail("grant_type: got %q, want %q", got, want)
	}
	claims, err := googleVerifyJWT(r.PostForm.Get("assertion"), &googleTestKey().PublicKey)
	if err != nil {
		ts.fail("assertion: %v", err)
	} else {
		if claims["iss"] != googleTestEmail {
			ts.fail("iss: got %v, want %s", claims["iss"], googleTestEmail)
		}
		if claims["scope"] != cred.GoogleCloudScope {
			ts.fail("scope: got %v, want %s", claims["scope"], cred.GoogleCloudScope)
		}
		if claims["aud"] != ts.URL+"/token" {
			ts.fail("aud: got %v, want %s", claims["aud"], ts.URL+"/token")
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if ts.status != http.StatusOK {
		w.WriteHeader(ts.status)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	fmt.Fprintf(w, `{"access_token":"ya29.token-%d","expires_in":%d,"token_type":"Bearer"}`, n, ts.expiresIn)
}

// googleVerifyJWT checks an RS256 JWT's signature and returns its claims.
func googleVerifyJWT(tok string, pub *rsa.PublicKey) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT: %d parts", len(parts))
	}
	var header struct {
		Alg string `json:"alg"`
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &header) != nil || header.Alg != "RS256" {
		return nil, fmt.Errorf("header %q: want alg RS256", hb)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return nil, fmt.Errorf("signature: %v", err)
	}
	cb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	return claims, json.Unmarshal(cb, &claims)
}

func TestGoogleServiceAccountSigns(t *testing.T) {
	ts := newGoogleTokenServer(t, 3600)
	key, _ := googleServiceAccountJSON(t, "https://oauth2.googleapis.com/token")
	s, err := cred.NewGoogleServiceAccount(key, cred.WithTokenURL(ts.URL+"/token"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Email() != googleTestEmail {
		t.Errorf("Email: got %q, want %q", s.Email(), googleTestEmail)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, "https://us-central1-aiplatform.googleapis.com/v1/x", nil)
			if err := s.Sign(req, "ignored-key"); err != nil {
				t.Error(err)
				return
			}
			if got, want := req.Header.Get("Authorization"), "Bearer ya29.token-1"; got != want {
				t.Errorf("Authorization: got %q, want %q", got, want)
			}
		})
	}
	wg.Wait()
	ts.check(t)
	if n := ts.requests.Load(); n != 1 {
		t.Errorf("token requests for 50 Signs: got %d, want 1 (tokens are cached)", n)
	}
}

func TestGoogleServiceAccountRefreshesEarly(t *testing.T) {
	// A token valid for less than the early-refresh margin is replaced on
	// every Sign: the margin is applied.
	ts := newGoogleTokenServer(t, int(cred.DefaultGoogleEarlyRefresh.Seconds())-60)
	key, _ := googleServiceAccountJSON(t, ts.URL+"/token")
	s, err := cred.NewGoogleServiceAccount(key) // token_uri from the key
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
		if err := s.Sign(req, ""); err != nil {
			t.Fatal(err)
		}
		if got, want := req.Header.Get("Authorization"), fmt.Sprintf("Bearer ya29.token-%d", i); got != want {
			t.Errorf("Sign %d: got %q, want %q", i, got, want)
		}
	}
	ts.check(t)
}

func TestGoogleServiceAccountErrors(t *testing.T) {
	ts := newGoogleTokenServer(t, 3600)
	ts.status = http.StatusBadRequest
	key, keyPEM := googleServiceAccountJSON(t, ts.URL+"/token")
	s, err := cred.NewGoogleServiceAccount(key)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
	err = s.Sign(req, "")
	if err == nil {
		t.Fatal("Sign with a failing token endpoint: got nil error")
	}
	if req.Header.Get("Authorization") != "" {
		t.Error("a failed Sign set Authorization")
	}
	keyBody := strings.Split(keyPEM, "\n")[1]
	if strings.Contains(err.Error(), keyBody[:20]) {
		t.Errorf("the error quotes the private key: %v", err)
	}

	bad := []struct {
		name string
		key  string
	}{
		{"not json", `{"type":`},
		{"user credentials", `{"type":"authorized_user","client_id":"x","client_secret":"y","refresh_token":"z"}`},
		{"no email", strings.Replace(string(key), googleTestEmail, "", 1)},
		{"broken key", strings.Replace(string(key), keyBody[10:40], "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 1)},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := cred.NewGoogleServiceAccount([]byte(b.key))
			if err == nil {
				t.Fatal("got nil error, want one")
			}
			if strings.Contains(err.Error(), keyBody[:20]) || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("the error quotes the private key: %v", err)
			}
		})
	}
}

func TestGoogleServiceAccountTokenTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	key, _ := googleServiceAccountJSON(t, srv.URL+"/token")
	s, err := cred.NewGoogleServiceAccount(key, cred.WithGoogleTokenTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
	if err := s.Sign(req, ""); err == nil {
		t.Fatal("Sign against a hanging token endpoint: got nil error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Sign took %v, want about the 100ms token timeout", d)
	}
}

func TestGoogleKeySigner(t *testing.T) {
	ts := newGoogleTokenServer(t, 3600)
	key, _ := googleServiceAccountJSON(t, ts.URL+"/token")
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	s := cred.NewGoogleKeySigner()
	for _, k := range []string{string(key), string(key), path, path} {
		req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
		if err := s.Sign(req, k); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ya29.token-") {
			t.Errorf("Authorization: got %q", req.Header.Get("Authorization"))
		}
	}
	ts.check(t)
	if n := ts.requests.Load(); n != 2 {
		t.Errorf("token requests: got %d, want 2 (one per distinct key: the JSON and the path)", n)
	}
	for _, bad := range []string{"", "/does/not/exist.json", `{"type":"service_account"}`} {
		req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
		if err := s.Sign(req, bad); err == nil {
			t.Errorf("Sign with key %q: got nil error", bad)
		}
	}
}
