package toolcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/zstdcodec"
)

// An entry as stored: one format byte, then the JSON of storedEntry, plain
// or zstd-compressed.
const (
	formatPlain   = 'j'
	formatZstd    = 'z'
	compressAbove = 1 << 10 // bytes of JSON
)

// storedEntry is an entry's JSON.
type storedEntry struct {
	Result  json.RawMessage `json:"r"`
	CostUSD float64         `json:"c,omitempty"` // what the call that produced it cost
	At      int64           `json:"t"`           // written, unix ms
}

var (
	errTooLarge = errors.New("toolcache: result over the size limit")
	errCorrupt  = errors.New("toolcache: corrupt entry")
)

// maxDecoded bounds what one stored value may decode to: the largest
// result plus the envelope.
func maxDecoded(maxBytes int) int { return maxBytes + 256 }

// encodeEntry returns r as a stored value, errTooLarge when its JSON is over
// maxBytes. raw is r's JSON as json.Marshal writes it, or nil for
// encodeEntry to encode r.
func encodeEntry(r *mcp.CallToolResult, raw []byte, costUSD float64, now time.Time, maxBytes int) ([]byte, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(r); err != nil {
			return nil, fmt.Errorf("toolcache: encode result: %w", err)
		}
	}
	if len(raw) > maxBytes {
		return nil, errTooLarge
	}
	e, err := json.Marshal(storedEntry{Result: raw, CostUSD: max(costUSD, 0), At: now.UnixMilli()})
	if err != nil {
		return nil, fmt.Errorf("toolcache: encode entry: %w", err)
	}
	if len(e) <= compressAbove {
		return append([]byte{formatPlain}, e...), nil
	}
	return zstdcodec.Encode(append(make([]byte, 0, len(e)/3+64), formatZstd), e)
}

// decodeEntry reverses encodeEntry, refusing a value that decodes to more
// than an entry may hold.
func decodeEntry(b []byte, maxBytes int) (*storedEntry, error) {
	if len(b) < 2 {
		return nil, errCorrupt
	}
	js := b[1:]
	switch b[0] {
	case formatPlain:
	case formatZstd:
		var err error
		if js, err = zstdcodec.Decode(js, maxDecoded(maxBytes)); err != nil {
			return nil, fmt.Errorf("%w: %v", errCorrupt, err)
		}
	default:
		return nil, errCorrupt
	}
	if len(js) > maxDecoded(maxBytes) {
		return nil, errCorrupt
	}
	var e storedEntry
	if err := json.Unmarshal(js, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if len(e.Result) == 0 || string(e.Result) == "null" {
		return nil, errCorrupt
	}
	return &e, nil
}

// result decodes the stored result, with its JSON as json.Marshal writes
// it when it is plain text (mcpgw.AppendResult; nil otherwise).
func (e *storedEntry) result() (*mcp.CallToolResult, []byte, error) {
	r, plain, err := mcpgw.DecodeResult(e.Result)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if !plain {
		return r, nil, nil
	}
	return r, e.Result, nil // json.Marshal's encoding, as encodeEntry stored it
}
