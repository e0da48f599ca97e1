// Package token mints and verifies svc's internal JWT: what a user gets
// at sign-in and sends on every later request (Authorization: Bearer).
//
// Tokens are HS256 (HMAC-SHA256) under a signing key only svc holds
// (SVC_JWT_SIGNING_KEY, or one generated into the data dir): svc is the
// only party that verifies them, so a symmetric key costs nothing in trust
// and keeps verification on the request path to a few microseconds. Each
// key has an id, the first 8 bytes of its SHA-256 in hex, carried in the
// token's `kid` header. Rotation: the new key signs, the previous keys
// (SVC_JWT_PREVIOUS_KEYS) still verify until the tokens they signed
// expire.
//
// Claims are the spec's (sub, username, email, groups comma-separated,
// department, roles, auth_method, exp) plus iat, nbf, iss and aud ("svc")
// and a random jti, by which a single token can be revoked. Verification
// allows HS256 only (never "none", never another algorithm named by the
// token), checks iss, aud, exp and nbf with 30 s of leeway, requires exp,
// and asks a Revoked check (the wiring's revocation list) last. It imports
// only golang-jwt and apierr.
package token

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/svc-gateway/svc/internal/apierr"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer and Audience are the iss and aud of every internal JWT.
const (
	Issuer   = "svc"
	Audience = "svc"
)

// Bounds.
const (
	MinKeyBytes = 32       // a signing key's length at least
	MaxTokenLen = 16 << 10 // a token longer than this is refused unread
	leeway      = 30 * time.Second
)

// Claims are the internal JWT's claims.
type Claims struct {
	Username   string   `json:"username"`
	Email      string   `json:"email,omitempty"`
	Groups     string   `json:"groups,omitempty"` // comma-separated, as the spec says
	Department string   `json:"department,omitempty"`
	Name       string   `json:"name,omitempty"`
	Roles      []string `json:"roles"`
	AuthMethod string   `json:"auth_method"`
	jwt.RegisteredClaims
}

// GroupList is Groups as a list.
func (c *Claims) GroupList() []string {
	if c.Groups == "" {
		return nil
	}
	return strings.Split(c.Groups, ",")
}

// HasRole reports whether the token carries role.
func (c *Claims) HasRole(role string) bool {
	for _, r := range c.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// User is who a token is minted for.
type User struct {
	Username, Email, Department, Name string
	Groups                            []string
	// Method is the auth_method claim ("oidc:<idp>", "saml", …).
	Method string
}

// Key is a signing key and its id.
type Key struct {
	ID     string
	secret []byte
}

// NewKey makes a Key of secret (at least MinKeyBytes).
func NewKey(secret []byte) (Key, error) {
	if len(secret) < MinKeyBytes {
		return Key{}, fmt.Errorf("token: a signing key needs at least %d bytes", MinKeyBytes)
	}
	sum := sha256.Sum256(secret)
	return Key{ID: hex.EncodeToString(sum[:8]), secret: append([]byte(nil), secret...)}, nil
}

// Revoked says whether a verified token was revoked: by its jti, or every
// token of its user issued before a time.
type Revoked interface {
	Revoked(ctx context.Context, username, jti string, issuedAt time.Time) (bool, error)
}

// Signer mints and verifies internal JWTs. It is safe for concurrent use.
type Signer struct {
	current Key
	keys    map[string]Key // by id: the current key and the previous ones
	ttl     time.Duration
	revoked Revoked
	now     func() time.Time
	parser  *jwt.Parser
	seen    verified
}

// Options configure a Signer.
type Options struct {
	// Current signs new tokens; Previous only verify.
	Current  Key
	Previous []Key
	// TTL is a token's lifetime (SVC_JWT_TTL; default an hour).
	TTL time.Duration
	// Revoked, when set, is asked about every token that verified.
	Revoked Revoked
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// New returns a Signer.
func New(o Options) (*Signer, error) {
	if len(o.Current.secret) < MinKeyBytes {
		return nil, errors.New("token: a current signing key is required")
	}
	s := &Signer{current: o.Current, keys: map[string]Key{o.Current.ID: o.Current}, ttl: o.TTL, revoked: o.Revoked, now: o.Now}
	for _, k := range o.Previous {
		s.keys[k.ID] = k
	}
	if s.ttl <= 0 {
		s.ttl = time.Hour
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.parser = jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer), jwt.WithAudience(Audience), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithLeeway(leeway), jwt.WithTimeFunc(func() time.Time { return s.now() }))
	return s, nil
}

// TTL is a new token's lifetime.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Mint signs a token for id with roles; it returns the token and its claims.
func (s *Signer) Mint(id User, roles []string) (string, *Claims, error) {
	jti, err := randomID()
	if err != nil {
		return "", nil, err
	}
	now := s.now().Truncate(time.Second)
	c := &Claims{
		Username: id.Username, Email: id.Email, Groups: strings.Join(id.Groups, ","),
		Department: id.Department, Name: id.Name, Roles: roles, AuthMethod: id.Method,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: id.Username, Issuer: Issuer, Audience: jwt.ClaimStrings{Audience}, ID: jti,
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.ttl)),
		},
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["kid"] = s.current.ID
	signed, err := t.SignedString(s.current.secret)
	if err != nil {
		return "", nil, fmt.Errorf("token: sign: %w", err)
	}
	if len(signed) > MaxTokenLen {
		// Verify would refuse it on every request: refuse the sign-in.
		return "", nil, apierr.Newf(apierr.InvalidRequest, "token_too_large",
			"the identity carries too much (%d groups) for a token of at most %d bytes; have the identity provider send fewer groups", len(id.Groups), MaxTokenLen)
	}
	return signed, c, nil
}

// Verify checks raw and returns its claims, or an *Error naming the check
// that failed (never the token).
func (s *Signer) Verify(ctx context.Context, raw string) (*Claims, error) {
	if len(raw) > MaxTokenLen {
		return nil, &Error{Reason: ReasonMalformed}
	}
	c, ok := s.seen.get(raw, s.now())
	if !ok {
		var err error
		if c, err = s.parse(raw); err != nil {
			return nil, err
		}
		s.seen.put(raw, c)
	}
	if s.revoked != nil {
		r, err := s.revoked.Revoked(ctx, c.Username, c.ID, c.IssuedAt.Time)
		if err != nil {
			return nil, &Error{Reason: ReasonUnavailable, cause: err}
		}
		if r {
			return nil, &Error{Reason: ReasonRevoked}
		}
	}
	return c, nil
}

// parse verifies raw's signature and claims.
func (s *Signer) parse(raw string) (*Claims, error) {
	var c Claims
	if _, err := s.parser.ParseWithClaims(raw, &c, s.key); err != nil {
		return nil, classify(err)
	}
	if c.Username == "" || c.Subject != c.Username || c.ID == "" || c.IssuedAt == nil {
		return nil, &Error{Reason: ReasonMalformed}
	}
	return &c, nil
}

// key finds the token's verification key by its kid.
func (s *Signer) key(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, ok := s.keys[kid]
	if !ok {
		return nil, errUnknownKey
	}
	return k.secret, nil
}

var errUnknownKey = errors.New("token: unknown key id")

// LooksLikeJWT reports whether a bearer credential has a JWT's shape (three
// base64url segments), so an authenticator can claim it without parsing.
func LooksLikeJWT(s string) bool {
	if len(s) < 20 || len(s) > MaxTokenLen || strings.Count(s, ".") != 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func randomID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
