package zstdcodec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestRoundTrip(t *testing.T) {
	src := bytes.Repeat([]byte("a tool result, "), 500)
	z, err := Encode([]byte{'z'}, src)
	if err != nil || z[0] != 'z' || len(z) >= len(src) {
		t.Fatalf("Encode: %d bytes, %v; want the prefix kept and the text compressed", len(z), err)
	}
	got, err := Decode(z[1:], len(src))
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("Decode: %v", err)
	}
}

// TestBounded: a frame stating a size over the limit, a frame that hides
// its size and decodes over the limit (a bomb), and garbage are refused.
func TestBounded(t *testing.T) {
	big := make([]byte, 1<<20)
	z, _ := Encode(nil, big)
	if _, err := Decode(z, 1<<10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a 1 MiB frame under a 1 KiB limit: %v, want ErrCorrupt", err)
	}
	w, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(false))
	var hidden bytes.Buffer
	w.Reset(&hidden)
	w.Write(big) // streamed: the frame does not state its size
	w.Close()
	if _, err := Decode(hidden.Bytes(), 1<<10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a size-less 1 MiB frame under a 1 KiB limit: %v, want ErrCorrupt", err)
	}
	if _, err := Decode([]byte("not zstd at all"), 1<<10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: %v, want ErrCorrupt", err)
	}
}
