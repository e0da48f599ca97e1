// Package cred applies provider credentials to outgoing requests: bearer
// tokens, named API-key headers, and (as providers need them) request signing.
// Adapters never see credentials; upstream callers apply a Signer after the
// adapter built the request.
//
// proxy and wire import cred.
package cred

import "net/http"

// Signer adds credentials for key to req.
type Signer interface {
	Sign(req *http.Request, key string) error
}

// Bearer sends `Authorization: Bearer <key>` (OpenAI and compatible providers).
type Bearer struct{}

// Sign implements Signer.
func (Bearer) Sign(req *http.Request, key string) error {
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return nil
}

// Header sends the key in a named header (`api-key`, `x-api-key`, …).
type Header struct{ Name string }

// Sign implements Signer.
func (h Header) Sign(req *http.Request, key string) error {
	if key != "" {
		req.Header.Set(h.Name, key)
	}
	return nil
}

var (
	_ Signer = Bearer{}
	_ Signer = Header{}
)
