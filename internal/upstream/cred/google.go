package cred

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/jwt"
)

// GoogleCloudScope is the OAuth scope Vertex AI calls need.
const GoogleCloudScope = "https://www.googleapis.com/auth/cloud-platform"

// Defaults of a GoogleServiceAccount.
const (
	// DefaultGoogleTokenTimeout bounds one token request.
	DefaultGoogleTokenTimeout = 10 * time.Second
	// DefaultGoogleEarlyRefresh is how long before its expiry a token is
	// replaced, so no request leaves with a token about to lapse.
	DefaultGoogleEarlyRefresh = 5 * time.Minute
)

// GoogleServiceAccount is a Signer for Google Cloud APIs (Vertex AI): it
// sends `Authorization: Bearer <access token>`, the token obtained from
// Google's OAuth endpoint with a JWT signed by a service account's private
// key (the two-legged JWT bearer grant). Tokens are cached and refreshed
// before they expire; concurrent Signs share one token request. The key
// argument of Sign is ignored: the service account is the credential.
type GoogleServiceAccount struct {
	email string
	ts    oauth2.TokenSource
}

// GoogleOption configures NewGoogleServiceAccount.
type GoogleOption func(*googleConfig)

type googleConfig struct {
	tokenURL string
	timeout  time.Duration
	early    time.Duration
	client   *http.Client
}

// WithTokenURL overrides the token endpoint (the key's token_uri, else
// https://oauth2.googleapis.com/token), for tests.
func WithTokenURL(url string) GoogleOption { return func(c *googleConfig) { c.tokenURL = url } }

// WithGoogleTokenTimeout bounds one token request (default DefaultGoogleTokenTimeout).
func WithGoogleTokenTimeout(d time.Duration) GoogleOption {
	return func(c *googleConfig) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithGoogleTokenClient sets the HTTP client for token requests (its Timeout is
// replaced by the token timeout when it has none).
func WithGoogleTokenClient(hc *http.Client) GoogleOption {
	return func(c *googleConfig) { c.client = hc }
}

// NewGoogleServiceAccount reads a service-account JSON key (as the Google
// Cloud console downloads it). It does not contact Google: the first Sign
// fetches the first token. Errors never quote the key.
func NewGoogleServiceAccount(jsonKey []byte, opts ...GoogleOption) (*GoogleServiceAccount, error) {
	c := googleConfig{timeout: DefaultGoogleTokenTimeout, early: DefaultGoogleEarlyRefresh}
	for _, o := range opts {
		o(&c)
	}
	cfg, err := google.JWTConfigFromJSON(jsonKey, GoogleCloudScope)
	if err != nil {
		// The parser's errors name fields, never values; still, say only what
		// kind of problem it is.
		return nil, errors.New("cred: the Google service-account key is not a valid service_account JSON key")
	}
	if err := jwtKeyOK(cfg); err != nil {
		return nil, err
	}
	if c.tokenURL != "" {
		cfg.TokenURL = c.tokenURL
	}
	hc := &http.Client{Timeout: c.timeout}
	if c.client != nil {
		cp := *c.client
		if cp.Timeout == 0 {
			cp.Timeout = c.timeout
		}
		hc = &cp
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	// jwt.Config.TokenSource caches with a 10 s margin; a fresh one per fetch
	// does not, so the early refresh below is the only cache.
	fetch := tokenSourceFunc(func() (*oauth2.Token, error) {
		t, err := cfg.TokenSource(ctx).Token()
		if err != nil {
			return nil, fmt.Errorf("cred: fetching a Google access token for %s: %w", cfg.Email, scrub(err))
		}
		return t, nil
	})
	return &GoogleServiceAccount{email: cfg.Email, ts: oauth2.ReuseTokenSourceWithExpiry(nil, fetch, c.early)}, nil
}

// jwtKeyOK checks the key has what the JWT grant needs: an email and an RSA
// private key in PEM (PKCS #8 or PKCS #1).
func jwtKeyOK(cfg *jwt.Config) error {
	if cfg.Email == "" {
		return errors.New("cred: the Google service-account key has no client_email")
	}
	block, _ := pem.Decode(cfg.PrivateKey)
	if block == nil {
		return errors.New("cred: the Google service-account key's private_key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); ok {
			return nil
		}
		return errors.New("cred: the Google service-account key's private_key is not an RSA key")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return errors.New("cred: the Google service-account key's private_key is not a valid RSA key")
	}
	return nil
}

// scrub keeps a token error's kind without the endpoint's whole answer.
func scrub(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		msg := fmt.Sprintf("token endpoint answered HTTP %d", re.Response.StatusCode)
		if re.ErrorCode != "" {
			msg += " (" + re.ErrorCode + ")"
		}
		return errors.New(msg)
	}
	return err
}

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// Email is the service account's client_email.
func (g *GoogleServiceAccount) Email() string { return g.email }

// Sign implements Signer; key is ignored.
func (g *GoogleServiceAccount) Sign(req *http.Request, _ string) error {
	t, err := g.ts.Token()
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+t.AccessToken)
	return nil
}

// GoogleKeySigner is a Signer for Vertex AI whose credential is the key
// argument of Sign, so it comes from wherever svc keeps provider keys
// (VERTEX_API_KEY, or a key stored through the management API, which wins):
// the service-account JSON itself, or the path of a file holding it. One
// GoogleServiceAccount (and so one cached token) is kept per distinct key; a
// file is read once, when its path is first seen.
type GoogleKeySigner struct {
	opts []GoogleOption

	mu       sync.Mutex
	accounts map[[sha256.Size]byte]*GoogleServiceAccount
}

// maxGoogleAccounts bounds GoogleKeySigner's cache (keys are few: rotation
// leaves the old one behind).
const maxGoogleAccounts = 16

// NewGoogleKeySigner returns a GoogleKeySigner whose accounts use opts.
func NewGoogleKeySigner(opts ...GoogleOption) *GoogleKeySigner {
	return &GoogleKeySigner{opts: opts, accounts: map[[sha256.Size]byte]*GoogleServiceAccount{}}
}

// Sign implements Signer: key is the service-account JSON or a path to it.
func (s *GoogleKeySigner) Sign(req *http.Request, key string) error {
	acct, err := s.account(key)
	if err != nil {
		return err
	}
	return acct.Sign(req, "")
}

func (s *GoogleKeySigner) account(key string) (*GoogleServiceAccount, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, errors.New("cred: no Google service-account key (set VERTEX_API_KEY to the JSON key or its path)")
	}
	id := sha256.Sum256([]byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[id]; ok {
		return a, nil
	}
	jsonKey := []byte(key)
	if !strings.HasPrefix(key, "{") {
		b, err := os.ReadFile(key)
		if err != nil {
			return nil, errors.New("cred: the Google service-account key is neither JSON nor a readable file path")
		}
		jsonKey = b
	}
	a, err := NewGoogleServiceAccount(jsonKey, s.opts...)
	if err != nil {
		return nil, err
	}
	if len(s.accounts) >= maxGoogleAccounts {
		clear(s.accounts)
	}
	s.accounts[id] = a
	return a, nil
}

var (
	_ Signer = (*GoogleServiceAccount)(nil)
	_ Signer = (*GoogleKeySigner)(nil)
)
