package cred

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4Credentials are AWS credentials: an access key pair and, for
// temporary credentials, a session token. String never shows the secret.
type SigV4Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// String names the access key id only.
func (c SigV4Credentials) String() string {
	tok := ""
	if c.SessionToken != "" {
		tok = " +session token"
	}
	return fmt.Sprintf("SigV4Credentials{%s, secret redacted%s}", c.AccessKeyID, tok)
}

// GoString is String, so %#v does not show the secret either.
func (c SigV4Credentials) GoString() string { return c.String() }

// SigV4 signs requests with AWS Signature Version 4 (Amazon Bedrock and any
// AWS service), in the Authorization header. It ignores the key Sign is
// given: the credentials are its own.
type SigV4 struct {
	creds   SigV4Credentials
	region  string
	service string
	signer  *v4.Signer
	// Now is the signing clock; tests set it. Nil means time.Now.
	Now func() time.Time
}

// NewSigV4 returns a signer for service ("bedrock") in region with creds.
func NewSigV4(creds SigV4Credentials, region, service string) *SigV4 {
	return &SigV4{creds: creds, region: region, service: service, signer: v4.NewSigner()}
}

// String names the signer's scope and access key id, never the secret.
func (s *SigV4) String() string {
	return fmt.Sprintf("SigV4{%s, region %s, service %s}", s.creds, s.region, s.service)
}

// GoString is String.
func (s *SigV4) GoString() string { return s.String() }

// errNoGetBody is returned for a request whose body cannot be read twice.
var errNoGetBody = errors.New("sigv4: the request has a body but no GetBody: the payload cannot be hashed without consuming it")

// Sign implements Signer: it sets X-Amz-Date, X-Amz-Security-Token (with a
// session token) and Authorization. The payload hash is the SHA-256 of the
// body read through req.GetBody, so req.Body is left unread.
func (s *SigV4) Sign(req *http.Request, _ string) error {
	hash, err := payloadHash(req)
	if err != nil {
		return err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	req.Header.Del("Authorization")
	req.Header.Del("X-Amz-Date")
	req.Header.Del("X-Amz-Security-Token")
	creds := aws.Credentials{AccessKeyID: s.creds.AccessKeyID, SecretAccessKey: s.creds.SecretAccessKey, SessionToken: s.creds.SessionToken, Source: "svc"}
	if err := s.signer.SignHTTP(req.Context(), creds, req, hash, s.service, s.region, now()); err != nil {
		// The SDK's errors name no secret; say which signer failed.
		return fmt.Errorf("sigv4 (%s): %w", s.creds.AccessKeyID, err)
	}
	return nil
}

// emptyHash is the SHA-256 of no bytes.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func payloadHash(req *http.Request) (string, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return emptyHash, nil
	}
	if req.GetBody == nil {
		return "", errNoGetBody
	}
	rc, err := req.GetBody()
	if err != nil {
		return "", fmt.Errorf("sigv4: reading the body to hash it: %w", err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", fmt.Errorf("sigv4: reading the body to hash it: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var _ Signer = (*SigV4)(nil)
