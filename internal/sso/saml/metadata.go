package saml

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/russellhaering/gosaml2/types"
)

// Metadata fetching defaults.
const (
	// DefaultMetadataTTL is how long fetched metadata is used before it is
	// fetched again.
	DefaultMetadataTTL = time.Hour
	// DefaultMaxMetadataBytes bounds the metadata document.
	DefaultMaxMetadataBytes = 1 << 20
	// metadataRefreshFloor is the least time between two fetches forced by
	// a signature that did not verify (the identity provider may have
	// rotated its key), so failing assertions cannot make svc hammer it.
	metadataRefreshFloor = time.Minute
	// metadataMaxStale is how long metadata fetched once keeps serving
	// while fetching it again fails.
	metadataMaxStale = 24 * time.Hour
	// metadataTimeout bounds one fetch.
	metadataTimeout = 10 * time.Second
)

// metadataSource is the identity provider's signing certificates and
// entity id from its metadata, fetched with the wiring's client and cached
// for ttl. One fetch runs at a time; others wait for it (or their context).
type metadataSource struct {
	url      string
	client   *http.Client
	ttl      time.Duration
	maxBytes int64
	now      func() time.Time

	fetching chan struct{} // a one-slot semaphore held during a fetch

	mu       sync.RWMutex
	certs    []*x509.Certificate
	entityID string
	fetched  time.Time // zero: never fetched successfully
	tried    time.Time // the last fetch attempt, for the refresh floor
}

func newMetadataSource(url string, client *http.Client, ttl time.Duration, maxBytes int64, now func() time.Time) *metadataSource {
	return &metadataSource{url: url, client: client, ttl: ttl, maxBytes: maxBytes, now: now, fetching: make(chan struct{}, 1)}
}

// current returns the cached certificates and entity id when they are
// younger than ttl, or, while fetching them again fails, younger than
// metadataMaxStale with the last attempt within metadataRefreshFloor (so a
// down identity provider is not asked at every sign-in).
func (m *metadataSource) current() ([]*x509.Certificate, string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	now := m.now()
	switch {
	case m.fetched.IsZero():
		return nil, "", false
	case now.Before(m.fetched.Add(m.ttl)):
	case now.Before(m.fetched.Add(metadataMaxStale)) && now.Before(m.tried.Add(metadataRefreshFloor)):
	default:
		return nil, "", false
	}
	return m.certs, m.entityID, true
}

// get returns the certificates and the entity id, fetching the metadata
// when the cached copy is older than ttl. When a fetch fails, a copy
// fetched within metadataMaxStale is used; without one the error is
// ReasonMetadataFetch.
func (m *metadataSource) get(ctx context.Context) ([]*x509.Certificate, string, error) {
	if certs, id, ok := m.current(); ok {
		return certs, id, nil
	}
	return m.fetchOnce(ctx, false)
}

// refresh fetches the metadata again, unless a fetch was tried within
// metadataRefreshFloor, and reports whether it fetched a new copy (or
// another caller did while this one waited).
func (m *metadataSource) refresh(ctx context.Context) ([]*x509.Certificate, string, bool) {
	if m.triedRecently() {
		return nil, "", false
	}
	certs, id, err := m.fetchOnce(ctx, true)
	return certs, id, err == nil
}

func (m *metadataSource) triedRecently() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return !m.tried.IsZero() && m.now().Before(m.tried.Add(metadataRefreshFloor))
}

// fetchOnce fetches under the semaphore. A copy another caller fetched
// while this one waited is used as is: unless forced, when it is current;
// when forced, when it was fetched within metadataRefreshFloor.
func (m *metadataSource) fetchOnce(ctx context.Context, force bool) ([]*x509.Certificate, string, error) {
	select {
	case m.fetching <- struct{}{}:
	case <-ctx.Done():
		return nil, "", fail(ReasonMetadataFetch, "waiting for the identity provider's metadata", ctx.Err())
	}
	defer func() { <-m.fetching }()
	if certs, id, ok := m.current(); ok && (!force || m.triedRecently()) {
		return certs, id, nil
	}
	now := m.now()
	certs, id, err := m.fetch(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tried = now
	if err == nil {
		m.certs, m.entityID, m.fetched = certs, id, now
		return certs, id, nil
	}
	if !m.fetched.IsZero() && now.Before(m.fetched.Add(metadataMaxStale)) && !force {
		return m.certs, m.entityID, nil
	}
	return nil, "", err
}

// fetch GETs and parses the metadata.
func (m *metadataSource) fetch(ctx context.Context) ([]*x509.Certificate, string, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil {
		return nil, "", fail(ReasonMetadataFetch, "the metadata URL is not usable", err)
	}
	req.Header.Set("Accept", "application/samlmetadata+xml, application/xml, text/xml")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, "", fail(ReasonMetadataFetch, "the identity provider's metadata could not be fetched", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fail(ReasonMetadataFetch, "the identity provider's metadata could not be fetched",
			fmt.Errorf("status %d", resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, m.maxBytes+1))
	if err != nil {
		return nil, "", fail(ReasonMetadataFetch, "the identity provider's metadata could not be read", err)
	}
	if int64(len(body)) > m.maxBytes {
		return nil, "", fail(ReasonMetadataFetch, "the identity provider's metadata is larger than the bound", nil)
	}
	certs, id, err := parseMetadata(body)
	if err != nil {
		return nil, "", fail(ReasonMetadataFetch, "the identity provider's metadata holds no usable signing certificate", err)
	}
	return certs, id, nil
}

// parseMetadata reads an EntityDescriptor (gosaml2's types): its entityID
// and the certificates of its IDPSSODescriptor's KeyDescriptors for signing
// (use="signing", or no use, which means both).
func parseMetadata(body []byte) ([]*x509.Certificate, string, error) {
	var ed types.EntityDescriptor
	dec := xml.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&ed); err != nil {
		return nil, "", fmt.Errorf("not a SAML EntityDescriptor: %w", err)
	}
	if ed.IDPSSODescriptor == nil {
		return nil, "", errors.New("no IDPSSODescriptor")
	}
	var values []string
	for _, kd := range ed.IDPSSODescriptor.KeyDescriptors {
		if kd.Use != "" && kd.Use != "signing" {
			continue
		}
		for _, c := range kd.KeyInfo.X509Data.X509Certificates {
			values = append(values, c.Data)
		}
	}
	if len(values) == 0 {
		return nil, "", errors.New("no signing KeyDescriptor")
	}
	certs, err := parseBase64Certs(values)
	if err != nil {
		return nil, "", err
	}
	return certs, ed.EntityID, nil
}
