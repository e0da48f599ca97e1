package saml

import (
	"github.com/svc-gateway/svc/internal/egress"

	"context"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"net/http"
	"time"

	"github.com/beevik/etree"

	"github.com/svc-gateway/svc/internal/sso"
)

// Skew defaults.
const (
	// DefaultSkew is the clock tolerance when Config.Skew is 0.
	DefaultSkew = time.Minute
	// MaxSkew is the largest Config.Skew accepted.
	MaxSkew = time.Minute
)

// Limits bound what Verify reads; a zero field takes its default.
type Limits struct {
	// MaxBytes bounds the decoded document (default 256 KiB).
	MaxBytes int
	// MaxElements bounds the elements of the document (default 8192).
	MaxElements int
	// MaxAttributes bounds the Attribute elements (default 256).
	MaxAttributes int
	// MaxValues bounds the AttributeValue elements, all attributes
	// together (default 4096).
	MaxValues int
	// MaxValueBytes bounds each value that becomes part of the identity:
	// NameID, e-mail, UPN, display name, department, each group (default
	// 1024).
	MaxValueBytes int
	// MaxMetadataBytes bounds the metadata document (default 1 MiB).
	MaxMetadataBytes int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, 256<<10)
	def(&l.MaxElements, 8192)
	def(&l.MaxAttributes, 256)
	def(&l.MaxValues, 4096)
	def(&l.MaxValueBytes, 1024)
	if l.MaxMetadataBytes <= 0 {
		l.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	return l
}

// Config is a Verifier's configuration.
type Config struct {
	// SPEntityID is svc's entity id (saml_sp_entity_id), which every
	// AudienceRestriction must name. Required.
	SPEntityID string
	// Certificates are the identity provider's signing certificates as
	// configured (saml_idp_certificate; see ParseCertificates).
	Certificates []*x509.Certificate
	// MetadataURL is the identity provider's metadata
	// (saml_idp_metadata_url), http or https, whose signing certificates
	// are trusted besides Certificates. At least one of the two is
	// required.
	MetadataURL string
	// HTTPClient fetches MetadataURL; the wiring passes one that refuses
	// addresses a caller must not reach (SSRF). Required with MetadataURL.
	HTTPClient *http.Client
	// MetadataTTL is how long fetched metadata is used (default
	// DefaultMetadataTTL). A signature that does not verify fetches it
	// again early, at most once a minute (the identity provider rotated
	// its key); when a fetch fails, the last copy serves up to a day.
	MetadataTTL time.Duration
	// IdPEntityID, when set, must be the assertion's Issuer. When it is
	// not set and the metadata names an entityID, that must be the Issuer.
	IdPEntityID string
	// Replay records accepted assertion IDs: NewKVReplay over the shared
	// store for replicas, NewMemoryReplay for one process. Required.
	Replay Replay
	// Skew is the clock tolerance applied to every NotBefore and
	// NotOnOrAfter (0: DefaultSkew; at most MaxSkew).
	Skew time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Limits bound the input.
	Limits Limits
}

// Verifier verifies X-SAML-Assertion values. It is safe for concurrent use.
type Verifier struct {
	audience string
	issuer   string
	static   []*x509.Certificate
	meta     *metadataSource
	replay   Replay
	skew     time.Duration
	now      func() time.Time
	lim      Limits
}

// New returns a Verifier for cfg, or an error naming what cfg lacks.
func New(cfg Config) (*Verifier, error) {
	if cfg.SPEntityID == "" {
		return nil, errors.New("saml: the service provider entity id (saml_sp_entity_id) is required")
	}
	if len(cfg.Certificates) == 0 && cfg.MetadataURL == "" {
		return nil, errors.New("saml: an identity provider certificate or metadata URL is required")
	}
	if err := checkCertificates(cfg.Certificates); err != nil {
		return nil, err
	}
	if cfg.Replay == nil {
		return nil, errors.New("saml: a replay cache is required")
	}
	if cfg.Skew < 0 || cfg.Skew > MaxSkew {
		return nil, errors.New("saml: the clock skew must be between 0 and one minute")
	}
	v := &Verifier{
		audience: cfg.SPEntityID, issuer: cfg.IdPEntityID, static: cfg.Certificates,
		replay: cfg.Replay, skew: cfg.Skew, now: cfg.Now, lim: cfg.Limits.withDefaults(),
	}
	if v.skew == 0 {
		v.skew = DefaultSkew
	}
	if v.now == nil {
		v.now = time.Now
	}
	if cfg.MetadataURL != "" {
		if err := checkMetadataURL(cfg.MetadataURL); err != nil {
			return nil, err
		}
		if cfg.HTTPClient == nil {
			return nil, errors.New("saml: an HTTP client is required to fetch the metadata")
		}
		ttl := cfg.MetadataTTL
		if ttl <= 0 {
			ttl = DefaultMetadataTTL
		}
		v.meta = newMetadataSource(cfg.MetadataURL, cfg.HTTPClient, ttl, v.lim.MaxMetadataBytes, v.now)
	}
	return v, nil
}

func checkCertificates(certs []*x509.Certificate) error {
	if len(certs) > MaxCertificates {
		return errors.New("saml: more certificates than the bound")
	}
	for _, c := range certs {
		if c == nil {
			return errors.New("saml: a nil certificate")
		}
		if _, ok := c.PublicKey.(*rsa.PublicKey); !ok {
			return errors.New("saml: a certificate without an RSA key")
		}
	}
	return nil
}

func checkMetadataURL(s string) error {
	if egress.CheckSecureURL(s) != nil {
		return errors.New("saml: the metadata URL must be an absolute https URL (http only to a loopback host)")
	}
	return nil
}

// Verify verifies value, the X-SAML-Assertion header: the base64 of a SAML
// 2.0 Assertion, or of a Response holding exactly one Assertion (the
// POST-binding form, decoded from SAMLResponse). It returns the identity
// read from the assertion as its signature covers it, with Method
// sso.MethodSAML, after these checks in order: size and XML hygiene
// (parseDocument), the document's outline (locate), the signature
// algorithms, the signature against the identity provider's certificates,
// version, issuer, times, audience, the attributes' bounds, and last the
// replay cache, so a refused assertion does not use up its ID.
//
// Every error is an *apierr.Error (401 Unauthenticated; 502 for
// metadata_fetch, 503 for replay_unavailable) with code "saml_<reason>"
// and a *Error cause; ReasonOf reads the reason back. No error carries the
// assertion or a value read from it.
func (v *Verifier) Verify(ctx context.Context, value string) (sso.Identity, error) {
	raw, err := decodeValue(value, v.lim.MaxBytes)
	if err != nil {
		return sso.Identity{}, fail(ReasonMalformed, "the X-SAML-Assertion value: "+err.Error(), err)
	}
	root, err := parseDocument(raw, v.lim.MaxElements)
	if err != nil {
		return sso.Identity{}, fail(ReasonMalformed, "the document: "+err.Error(), err)
	}
	if err := locate(root); err != nil {
		return sso.Identity{}, err
	}
	if err := checkAlgorithms(root); err != nil {
		return sso.Identity{}, err
	}
	now := v.now()
	a, issuer, err := v.verified(ctx, root, now)
	if err != nil {
		return sso.Identity{}, err
	}
	until, err := checkAssertion(a, window{now: now, skew: v.skew, audience: v.audience, issuer: issuer})
	if err != nil {
		return sso.Identity{}, err
	}
	id, err := readIdentity(a, v.lim)
	if err != nil {
		return sso.Identity{}, err
	}
	if err := v.claim(ctx, a, until); err != nil {
		return sso.Identity{}, err
	}
	return id, nil
}

// verified returns the signed assertion and the issuer to expect. With
// metadata, a signature that does not verify fetches the metadata again
// (see metadataSource.refresh) and is tried once more.
func (v *Verifier) verified(ctx context.Context, root *etree.Element, now time.Time) (*etree.Element, string, error) {
	certs, issuer, err := v.trusted(ctx)
	if err != nil {
		return nil, "", err
	}
	a, err := signedAssertion(root, certs, now)
	if v.meta == nil || ReasonOf(err) != ReasonSignature || errors.Is(err, errUnsigned) {
		return a, issuer, err
	}
	fresh, entityID, ok := v.meta.refresh(ctx)
	if !ok {
		return nil, "", err
	}
	certs, issuer = v.withMetadata(fresh, entityID)
	a, err = signedAssertion(root, certs, now)
	return a, issuer, err
}

// trusted returns the certificates to verify with (configured and from
// metadata) and the issuer to expect.
func (v *Verifier) trusted(ctx context.Context) ([]*x509.Certificate, string, error) {
	if v.meta == nil {
		return v.static, v.issuer, nil
	}
	certs, entityID, err := v.meta.get(ctx)
	if err != nil {
		return nil, "", err
	}
	certs, issuer := v.withMetadata(certs, entityID)
	return certs, issuer, nil
}

func (v *Verifier) withMetadata(certs []*x509.Certificate, entityID string) ([]*x509.Certificate, string) {
	all := make([]*x509.Certificate, 0, len(v.static)+len(certs))
	all = append(append(all, v.static...), certs...)
	if v.issuer != "" {
		return all, v.issuer
	}
	return all, entityID
}

// claim records the assertion's ID in the replay cache until it expires
// (its earliest NotOnOrAfter, plus the skew it is accepted with).
func (v *Verifier) claim(ctx context.Context, a *etree.Element, until time.Time) error {
	id, err := elementID(a)
	if err != nil {
		return fail(ReasonMalformed, "the Assertion has no usable ID", err)
	}
	fresh, err := v.replay.Claim(ctx, id, until.Add(v.skew))
	if err != nil {
		return fail(ReasonReplayUnavailable, "the replay cache could not record the assertion", err)
	}
	if !fresh {
		return fail(ReasonReplayed, "the assertion was already used", nil)
	}
	return nil
}
