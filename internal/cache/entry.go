package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/cache/verify"
	"github.com/svc-gateway/svc/internal/zstdcodec"
)

// MaxEntryBytes bounds an answer the cache keeps (uncompressed): larger
// answers are served but not stored, and a streamed answer stops being
// assembled once it passes the bound.
const MaxEntryBytes = 2 << 20

// Entry is one cached answer.
type Entry struct {
	Key      string           `json:"key"`
	Scope    string           `json:"scope"` // index scope: namespace|embedder|scope hash
	Prompt   string           `json:"prompt,omitempty"`
	Features *verify.Features `json:"features,omitempty"`
	// Checks is the verify.Version that extracted Features: features of
	// another version are extracted again from Prompt before they are compared.
	Checks int `json:"checks,omitempty"`
	// Body is the answer as a chat.completion JSON object.
	Body     json.RawMessage `json:"body"`
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Tokens   int64           `json:"tokens"`
	Cost     float64         `json:"cost"`
	Created  time.Time       `json:"created"`
	Expires  time.Time       `json:"expires"`
}

// size is what an entry costs the L1, approximately.
func (e *Entry) size() int64 {
	return int64(len(e.Body)+len(e.Prompt)+len(e.Key)+len(e.Scope)+len(e.Provider)+len(e.Model)) + 256
}

// expired reports whether e is past its time-to-live at now.
func (e *Entry) expired(now time.Time) bool { return !e.Expires.IsZero() && !now.Before(e.Expires) }

// encodeEntry returns e as compressed JSON and the uncompressed size.
func encodeEntry(e *Entry) ([]byte, int, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, 0, err
	}
	z, err := zstdcodec.Encode(nil, raw)
	return z, len(raw), err
}

// errCorrupt reports a stored value that does not decode.
var errCorrupt = errors.New("cache: corrupt entry")

// decodeEntry reverses encodeEntry.
func decodeEntry(b []byte) (*Entry, error) {
	// Bounded: a corrupted or hostile value cannot make svc allocate more
	// than an entry may hold.
	raw, err := zstdcodec.Decode(b, 4*MaxEntryBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if e.Key == "" || len(e.Body) == 0 {
		return nil, errCorrupt
	}
	return &e, nil
}
