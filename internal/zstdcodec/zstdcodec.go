// Package zstdcodec is the one zstd encoder and decoder svc's caches share
// (the semantic cache's entries, the tool-call cache's): built once, safe
// for concurrent use, the decoder bounded so a corrupted or hostile stored
// value cannot make svc allocate without limit.
package zstdcodec

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// MaxDecoded is the most any Decode may produce, whatever its limit: the
// decoder's own memory cap, a backstop for frames that do not state their
// size.
const MaxDecoded = 64 << 20

// ErrCorrupt is a value that is not a zstd frame, or decodes to more than
// its limit.
var ErrCorrupt = errors.New("zstdcodec: corrupt or oversized value")

var (
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	err  error
)

func codecs() (*zstd.Encoder, *zstd.Decoder, error) {
	once.Do(func() {
		enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return
		}
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(MaxDecoded), zstd.WithDecoderMaxWindow(8<<20))
	})
	return enc, dec, err
}

// Encode appends the compressed src to dst (one frame, its size stated).
func Encode(dst, src []byte) ([]byte, error) {
	e, _, err := codecs()
	if err != nil {
		return nil, err
	}
	if dst == nil {
		dst = make([]byte, 0, len(src)/3+64)
	}
	return e.EncodeAll(src, dst), nil
}

// Decode decompresses src, refusing (ErrCorrupt) a frame that says, or
// turns out, to be bigger than limit bytes.
func Decode(src []byte, limit int) ([]byte, error) {
	_, d, err := codecs()
	if err != nil {
		return nil, err
	}
	limit = min(limit, MaxDecoded)
	var h zstd.Header
	if err := h.Decode(src); err != nil || (h.HasFCS && h.FrameContentSize > uint64(limit)) {
		return nil, fmt.Errorf("%w: bad or oversized frame", ErrCorrupt)
	}
	out, err := d.DecodeAll(src, make([]byte, 0, min(int(h.FrameContentSize), limit)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrCorrupt, len(out), limit)
	}
	return out, nil
}
