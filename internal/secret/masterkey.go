package secret

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// MasterKey is the 256-bit root key that every sealed secret depends on. It is
// never printed: its String, GoString, Format, MarshalText and LogValue all
// yield "[redacted]".
type MasterKey [32]byte

// MinPassphraseLen is the shortest value ParseMasterKey accepts as a
// passphrase.
const MinPassphraseLen = 32

// Passphrases are stretched with HKDF-SHA256 under this fixed salt and info.
// Changing either makes every existing passphrase derive a different key, so
// they are part of the storage format.
const (
	passphraseSalt = "svc/secret master-key passphrase salt v1"
	passphraseInfo = "svc/secret master key v1"
)

const redacted = "[redacted]"

// errMasterKeyForm says what ParseMasterKey accepts; it never carries the value.
var errMasterKeyForm = errors.New("secret: master key must be 64 hex characters, " +
	"standard or URL-safe base64 of exactly 32 bytes, or a passphrase of at least 32 characters")

// ParseMasterKey reads a master key from its text form, after trimming
// surrounding white space:
//
//   - 64 hex characters: the key itself;
//   - standard or URL-safe base64 (padded or not) that decodes to exactly 32
//     bytes: the key itself;
//   - anything else of at least MinPassphraseLen characters: a passphrase,
//     stretched to a key with HKDF-SHA256 (fixed salt and info, see above).
//
// Shorter values and all-zero keys are refused. Errors never contain s.
func ParseMasterKey(s string) (MasterKey, error) {
	s = strings.TrimSpace(s)
	var k MasterKey
	switch {
	case len(s) == 2*len(k) && decodeHex(k[:], s):
	case decodeBase64(k[:], s):
	case len(s) >= MinPassphraseLen:
		b, err := hkdf.Key(sha256.New, []byte(s), []byte(passphraseSalt), passphraseInfo, len(k))
		if err != nil {
			return MasterKey{}, fmt.Errorf("secret: stretch master key passphrase: %w", err)
		}
		copy(k[:], b)
		clear(b)
	default:
		return MasterKey{}, errMasterKeyForm
	}
	if k == (MasterKey{}) {
		return MasterKey{}, errors.New("secret: master key must not be all zeros")
	}
	return k, nil
}

// decodeHex fills dst from hex s and reports whether s was valid hex of
// exactly len(dst) bytes.
func decodeHex(dst []byte, s string) bool {
	n, err := hex.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}

// decodeBase64 fills dst from s in any of the four base64 alphabets/paddings
// and reports whether s decoded to exactly len(dst) bytes.
func decodeBase64(dst []byte, s string) bool {
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding,
	} {
		if enc.DecodedLen(len(s)) < len(dst) || enc.DecodedLen(len(s)) > len(dst)+2 {
			continue
		}
		b, err := enc.DecodeString(s)
		if err == nil && len(b) == len(dst) {
			copy(dst, b)
			clear(b)
			return true
		}
		clear(b)
	}
	return false
}

// String returns "[redacted]".
func (MasterKey) String() string { return redacted }

// GoString returns "[redacted]".
func (MasterKey) GoString() string { return redacted }

// Format writes "[redacted]" for every verb, so no fmt verb (%x, %d, %#v, …)
// prints the key.
func (MasterKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalText returns "[redacted]" so that JSON, YAML and text log handlers
// never see the key. It deliberately does not round-trip; the key's only
// stored form is the hex file written by LoadOrCreate.
func (MasterKey) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue returns "[redacted]" for log/slog.
func (MasterKey) LogValue() slog.Value { return slog.StringValue(redacted) }

var (
	_ fmt.Formatter  = MasterKey{}
	_ fmt.Stringer   = MasterKey{}
	_ fmt.GoStringer = MasterKey{}
	_ slog.LogValuer = MasterKey{}
)
