package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// ErrDecrypt is returned by Open when a blob does not authenticate: a
// different master key, a tampered blob, or a different aad (the blob belongs
// to another record).
var ErrDecrypt = errors.New("secret: sealed value does not authenticate (wrong master key, wrong record or tampered)")

// ErrFormat is returned by Open when a blob is not a sealed value of a known
// version.
var ErrFormat = errors.New("secret: malformed sealed value")

// Blob layout, version 1 (all sizes in bytes):
//
//	version (1) = 1
//	wrap nonce (12) | wrapped data key (32 + 16 tag)      AES-256-GCM under the KEK
//	payload nonce (12) | payload ciphertext (n + 16 tag)  AES-256-GCM under the data key
//
// The KEK is HKDF-SHA256(master key, info kekInfo). The wrapped key's
// additional data is version | aad; the payload's is everything before the
// payload nonce (version and wrapped key) | aad, so neither half can be moved
// to another blob or another record.
const (
	version1    = 1
	keySize     = 32
	nonceSize   = 12
	tagSize     = 16
	wrappedSize = nonceSize + keySize + tagSize
	headerSize  = 1 + wrappedSize
	minSealed   = headerSize + nonceSize + tagSize
	kekInfo     = "svc/secret key-encryption key v1"
)

// Sealer seals and opens secrets with envelope encryption under a master key.
// It is safe for concurrent use and never prints key material.
type Sealer struct {
	kek cipher.AEAD
}

// NewSealer returns a Sealer whose key-encryption key is derived from k.
func NewSealer(k MasterKey) *Sealer {
	kek, err := hkdf.Key(sha256.New, k[:], nil, kekInfo, keySize)
	if err != nil {
		panic("secret: derive key-encryption key: " + err.Error()) // cannot happen for SHA-256 and 32 bytes
	}
	defer clear(kek)
	return &Sealer{kek: newGCM(kek)}
}

// newGCM returns AES-256-GCM with a 32-byte key, which cannot fail.
func newGCM(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("secret: " + err.Error())
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic("secret: " + err.Error())
	}
	return g
}

// Seal encrypts plaintext under a fresh random data key, wraps the data key
// under the master key and returns the versioned blob. aad binds the blob to
// its record (keyvault passes the provider name): Open must be given the same
// aad.
func (s *Sealer) Seal(plaintext, aad []byte) ([]byte, error) {
	var dek [keySize]byte
	defer clear(dek[:])
	out := make([]byte, headerSize+nonceSize, minSealed+len(plaintext))
	out[0] = version1
	wrapNonce := out[1 : 1+nonceSize]
	payloadNonce := out[headerSize : headerSize+nonceSize]
	if _, err := rand.Read(dek[:]); err != nil {
		return nil, fmt.Errorf("secret: data key: %w", err)
	}
	if _, err := rand.Read(wrapNonce); err != nil {
		return nil, fmt.Errorf("secret: nonce: %w", err)
	}
	if _, err := rand.Read(payloadNonce); err != nil {
		return nil, fmt.Errorf("secret: nonce: %w", err)
	}

	s.kek.Seal(out[1+nonceSize:1+nonceSize], wrapNonce, dek[:], wrapAAD(out[0], aad))
	payload := newGCM(dek[:])
	return payload.Seal(out, payloadNonce, plaintext, payloadAAD(out[:headerSize], aad)), nil
}

// Open authenticates and decrypts a blob made by Seal with the same master
// key and aad. It returns ErrFormat for a malformed blob and ErrDecrypt when
// the blob does not authenticate; it never panics.
func (s *Sealer) Open(sealed, aad []byte) ([]byte, error) {
	if len(sealed) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrFormat)
	}
	if sealed[0] != version1 {
		return nil, fmt.Errorf("%w: unknown version %d", ErrFormat, sealed[0])
	}
	if len(sealed) < minSealed {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrFormat, len(sealed))
	}
	wrapNonce := sealed[1 : 1+nonceSize]
	wrapped := sealed[1+nonceSize : headerSize]
	payloadNonce := sealed[headerSize : headerSize+nonceSize]
	ciphertext := sealed[headerSize+nonceSize:]

	dek, err := s.kek.Open(make([]byte, 0, keySize), wrapNonce, wrapped, wrapAAD(sealed[0], aad))
	if err != nil {
		return nil, ErrDecrypt
	}
	defer clear(dek)
	plaintext, err := newGCM(dek).Open(nil, payloadNonce, ciphertext, payloadAAD(sealed[:headerSize], aad))
	if err != nil {
		return nil, ErrDecrypt
	}
	return plaintext, nil
}

func wrapAAD(version byte, aad []byte) []byte {
	return append([]byte{version}, aad...)
}

func payloadAAD(header, aad []byte) []byte {
	return append(append(make([]byte, 0, len(header)+len(aad)), header...), aad...)
}

// String returns a fixed text without key material.
func (*Sealer) String() string { return "secret.Sealer" + redacted }

// GoString returns a fixed text without key material.
func (s *Sealer) GoString() string { return s.String() }

// Format writes a fixed text for every verb, so %+v does not dump the cipher
// state.
func (s *Sealer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue returns a fixed text for log/slog.
func (s *Sealer) LogValue() slog.Value { return slog.StringValue(s.String()) }

var (
	_ fmt.Formatter  = (*Sealer)(nil)
	_ fmt.Stringer   = (*Sealer)(nil)
	_ fmt.GoStringer = (*Sealer)(nil)
	_ slog.LogValuer = (*Sealer)(nil)
)
