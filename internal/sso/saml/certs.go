package saml

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
)

// MaxCertificates bounds the certificates configured or read from metadata
// (an identity provider publishes one, or two while it rotates).
const MaxCertificates = 16

// ParseCertificates reads the identity provider's signing certificate(s)
// as configured (saml_idp_certificate): PEM, one or more CERTIFICATE
// blocks; or, as identity providers display it, the base64 DER of one
// certificate without the PEM armour. Every certificate must hold an RSA
// key (the signatures allowed are RSA).
func ParseCertificates(s string) ([]*x509.Certificate, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("saml: no certificate")
	}
	if !strings.HasPrefix(s, "-----BEGIN") {
		return parseBase64Certs([]string{s})
	}
	var certs []*x509.Certificate
	rest := []byte(s)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := parseCert(block.Bytes)
		if err != nil {
			return nil, err
		}
		if certs = append(certs, c); len(certs) > MaxCertificates {
			return nil, errors.New("saml: more certificates than the bound")
		}
	}
	if len(certs) == 0 {
		return nil, errors.New("saml: no CERTIFICATE block in the PEM")
	}
	return certs, nil
}

// parseBase64Certs parses base64 DER certificates, whitespace ignored.
func parseBase64Certs(values []string) ([]*x509.Certificate, error) {
	if len(values) > MaxCertificates {
		return nil, errors.New("saml: more certificates than the bound")
	}
	certs := make([]*x509.Certificate, 0, len(values))
	for _, v := range values {
		der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
		if err != nil {
			return nil, errors.New("saml: a certificate that is not base64")
		}
		c, err := parseCert(der)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	return certs, nil
}

func parseCert(der []byte) (*x509.Certificate, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, errors.New("saml: not an X.509 certificate")
	}
	if _, ok := c.PublicKey.(*rsa.PublicKey); !ok {
		return nil, errors.New("saml: a certificate without an RSA key")
	}
	return c, nil
}
