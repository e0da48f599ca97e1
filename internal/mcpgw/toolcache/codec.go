package toolcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

var (
	codecOnce sync.Once
	zenc      *zstd.Encoder
	zdec      *zstd.Decoder
	codecErr  error
)

func codecs() (*zstd.Encoder, *zstd.Decoder, error) {
	codecOnce.Do(func() {
		zenc, codecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if codecErr != nil {
			return
		}
		// The decoder's own cap; decodeEntry checks the entry's size too.
		zdec, codecErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(64<<20), zstd.WithDecoderMaxWindow(8<<20))
	})
	return zenc, zdec, codecErr
}

// encodeEntry returns r as a stored value, errTooLarge when its JSON is over
// maxBytes.
func encodeEntry(r *mcp.CallToolResult, costUSD float64, now time.Time, maxBytes int) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("toolcache: encode result: %w", err)
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
	enc, _, err := codecs()
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(e, append(make([]byte, 0, len(e)/3+64), formatZstd)), nil
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
		_, dec, err := codecs()
		if err != nil {
			return nil, err
		}
		if js, err = decodeBounded(dec, js, maxDecoded(maxBytes)); err != nil {
			return nil, err
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

// decodeBounded decompresses b, refusing it if the frame says or turns out
// to be bigger than limit.
func decodeBounded(dec *zstd.Decoder, b []byte, limit int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(b); err != nil || (h.HasFCS && h.FrameContentSize > uint64(limit)) {
		return nil, fmt.Errorf("%w: bad or oversized frame", errCorrupt)
	}
	out, err := dec.DecodeAll(b, make([]byte, 0, min(int(h.FrameContentSize), limit)))
	if err != nil || len(out) > limit {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return out, nil
}

// result decodes the stored result.
func (e *storedEntry) result() (*mcp.CallToolResult, error) {
	var r mcp.CallToolResult
	if err := json.Unmarshal(e.Result, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return &r, nil
}
