package model

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/klauspost/compress/zstd"
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// ErrMalformed is wrapped by the errors of Decode and of the weights
// decoders: the bytes are not what the encoder writes.
var ErrMalformed = errors.New("model: malformed encoding")

// vectorFormat is the first byte of an encoded Vector.
const vectorFormat = 1

// Encode writes v compactly: a format byte, the entry count, then per entry
// the gap from the previous index and the value in units of 2^-16 (both
// varints). Values are rounded to that unit (Featurize's values already
// are), so Decode(Encode(v)) scores as v does. The text Featurize kept for
// explanations is not written. It fails when v is not valid (see Check).
func Encode(v Vector) ([]byte, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 2+len(v.Idx)*4)
	b = append(b, vectorFormat)
	b = binary.AppendUvarint(b, uint64(len(v.Idx)))
	prev := uint32(0)
	for i, idx := range v.Idx {
		gap := idx - prev
		if i > 0 {
			gap-- // strictly increasing: a gap of at least 1, stored less 1
		}
		b = binary.AppendUvarint(b, uint64(gap))
		b = binary.AppendVarint(b, int64(math.Round(float64(v.Val[i])*quantum)))
		prev = idx
	}
	return b, nil
}

// Decode reads a Vector written by Encode. It fails, wrapping ErrMalformed,
// on any other bytes: a bad format byte, truncation, trailing bytes, an
// index out of range or out of order, a value beyond MaxValue, more than
// MaxLen entries.
func Decode(b []byte) (Vector, error) {
	var v Vector
	if err := decodeInto(&v, b); err != nil {
		return Vector{}, err
	}
	return v, nil
}

// decodeInto decodes b into v, reusing v's slices.
func decodeInto(v *Vector, b []byte) error {
	v.text = ""
	if len(b) < 2 || b[0] != vectorFormat {
		return fmt.Errorf("%w: vector: bad header", ErrMalformed)
	}
	n, k := binary.Uvarint(b[1:])
	// Every entry takes at least two bytes.
	if k <= 0 || n > MaxLen || n > uint64(len(b)-1-k)/2 {
		return fmt.Errorf("%w: vector: bad length", ErrMalformed)
	}
	b = b[1+k:]
	v.Idx = grow(v.Idx[:0], int(n))
	v.Val = grow(v.Val[:0], int(n))
	next := uint64(0)
	for i := range n {
		gap, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("%w: vector: entry %d: bad index", ErrMalformed, i)
		}
		b = b[k:]
		q, k := binary.Varint(b)
		if k <= 0 {
			return fmt.Errorf("%w: vector: entry %d: bad value", ErrMalformed, i)
		}
		b = b[k:]
		if gap >= Dim || next+gap >= Dim {
			return fmt.Errorf("%w: vector: entry %d: index out of range", ErrMalformed, i)
		}
		if q > MaxValue*quantum || q < -MaxValue*quantum {
			return fmt.Errorf("%w: vector: entry %d: value out of range", ErrMalformed, i)
		}
		idx := next + gap
		v.Idx = append(v.Idx, uint32(idx))
		v.Val = append(v.Val, float32(float64(q)/quantum))
		next = idx + 1
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: vector: %d trailing bytes", ErrMalformed, len(b))
	}
	return nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s
}

// Check reports whether v is a valid Vector: Idx and Val of equal length at
// most MaxLen, Idx strictly increasing and below Dim, every value finite and
// within ±MaxValue.
func (v Vector) Check() error {
	if len(v.Idx) != len(v.Val) {
		return fmt.Errorf("model: vector: %d indices but %d values", len(v.Idx), len(v.Val))
	}
	if len(v.Idx) > MaxLen {
		return fmt.Errorf("model: vector: %d entries, at most %d", len(v.Idx), MaxLen)
	}
	for i, idx := range v.Idx {
		if idx >= Dim {
			return fmt.Errorf("model: vector: index %d out of range [0, %d)", idx, Dim)
		}
		if i > 0 && idx <= v.Idx[i-1] {
			return fmt.Errorf("model: vector: indices not strictly increasing at %d", i)
		}
		if x := float64(v.Val[i]); math.IsNaN(x) || math.Abs(x) > MaxValue {
			return fmt.Errorf("model: vector: value %v at index %d out of range", x, idx)
		}
	}
	return nil
}

// Weights files: the build-time weights (weights.bin) and the snapshots in
// SQL share one form, zstd-compressed:
//
//	"SVCRISKW" | format u32 | Dim u32 | data hash [32] | version i64 |
//	training rows u32 | risky rows u32 | (Dim+1) × float32 (bias last)
//
// all little-endian. The data hash is the SHA-256 of the training data the
// initial weights came from; version is the last feedback event applied.
const (
	weightsMagic   = "SVCRISKW"
	weightsFormat  = 1
	weightsHeader  = 8 + 4 + 4 + 32 + 8 + 4 + 4
	weightsPayload = weightsHeader + 4*(Dim+1)
	// maxWeight bounds every weight: learning clamps to it, decoding
	// refuses beyond it.
	maxWeight = 64
)

// weightsFile is a decoded weights file.
type weightsFile struct {
	dataHash     [32]byte
	version      int64
	rows, risky  uint32
	w            []float32 // Dim+1, bias last
	payloadBytes []byte    // the uncompressed form, for hashing
}

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(weightsPayload), zstd.WithDecoderMaxWindow(8<<20))
)

// payload returns f's uncompressed form.
func (f *weightsFile) payload() []byte {
	b := make([]byte, 0, weightsPayload)
	b = append(b, weightsMagic...)
	b = binary.LittleEndian.AppendUint32(b, weightsFormat)
	b = binary.LittleEndian.AppendUint32(b, Dim)
	b = append(b, f.dataHash[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(f.version))
	b = binary.LittleEndian.AppendUint32(b, f.rows)
	b = binary.LittleEndian.AppendUint32(b, f.risky)
	for _, w := range f.w {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(w))
	}
	return b
}

// encodeWeights returns f's file bytes.
func encodeWeights(f *weightsFile) []byte {
	return zenc.EncodeAll(f.payload(), nil)
}

// decodeWeights reads a weights file, failing (wrapping ErrMalformed) on
// anything but the exact form with finite weights within ±maxWeight.
func decodeWeights(b []byte) (*weightsFile, error) {
	p, err := zdec.DecodeAll(b, make([]byte, 0, weightsPayload))
	if err != nil {
		return nil, fmt.Errorf("%w: weights: %v", ErrMalformed, err)
	}
	return parseWeights(p)
}

func parseWeights(p []byte) (*weightsFile, error) {
	if len(p) != weightsPayload || string(p[:8]) != weightsMagic {
		return nil, fmt.Errorf("%w: weights: bad header or size %d", ErrMalformed, len(p))
	}
	if f := binary.LittleEndian.Uint32(p[8:]); f != weightsFormat {
		return nil, fmt.Errorf("%w: weights: format %d, want %d", ErrMalformed, f, weightsFormat)
	}
	if d := binary.LittleEndian.Uint32(p[12:]); d != Dim {
		return nil, fmt.Errorf("%w: weights: dimension %d, want %d", ErrMalformed, d, Dim)
	}
	f := &weightsFile{payloadBytes: p}
	copy(f.dataHash[:], p[16:48])
	f.version = int64(binary.LittleEndian.Uint64(p[48:]))
	f.rows = binary.LittleEndian.Uint32(p[56:])
	f.risky = binary.LittleEndian.Uint32(p[60:])
	if f.version < 0 || f.risky > f.rows {
		return nil, fmt.Errorf("%w: weights: bad version or counts", ErrMalformed)
	}
	f.w = make([]float32, Dim+1)
	for i := range f.w {
		w := math.Float32frombits(binary.LittleEndian.Uint32(p[weightsHeader+4*i:]))
		if math.IsNaN(float64(w)) || math.Abs(float64(w)) > maxWeight {
			return nil, fmt.Errorf("%w: weights: weight %d out of range", ErrMalformed, i)
		}
		f.w[i] = w
	}
	return f, nil
}

// Held-out files (heldout.bin): the built-in held-out split's rows, their
// text and findings (featurized when measured: their vectors would take
// several times the space), zstd-compressed:
//
//	"SVCRISKH" | format u32 | data hash [32] | count u32 |
//	count × (label u8 | text length uvarint | text | finding count uvarint |
//	         that many × (type length uvarint | type | start uvarint |
//	                      end uvarint | score float64 bits u64))
const (
	heldoutMagic    = "SVCRISKH"
	heldoutFormat   = 2
	maxHeldout      = 100_000
	maxHeldoutRaw   = 64 << 20
	maxHeldoutText  = maxLine
	maxHeldoutFinds = 10_000
	maxTypeLen      = 64
)

// example is one labelled row: its vector, and for held-out rows the text
// and findings it came from.
type example struct {
	v        Vector
	risky    bool
	group    int // for training: the set's index × 2 + risky
	text     string
	findings []detect.Finding
}

func encodeHeldout(dataHash [32]byte, xs []example) []byte {
	b := []byte(heldoutMagic)
	b = binary.LittleEndian.AppendUint32(b, heldoutFormat)
	b = append(b, dataHash[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(xs)))
	for _, x := range xs {
		label := byte(0)
		if x.risky {
			label = 1
		}
		b = append(b, label)
		b = binary.AppendUvarint(b, uint64(len(x.text)))
		b = append(b, x.text...)
		b = binary.AppendUvarint(b, uint64(len(x.findings)))
		for _, f := range x.findings {
			b = binary.AppendUvarint(b, uint64(len(f.Type)))
			b = append(b, f.Type...)
			b = binary.AppendUvarint(b, uint64(f.Start))
			b = binary.AppendUvarint(b, uint64(f.End))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.Score))
		}
	}
	return zenc.EncodeAll(b, nil)
}

// heldoutReader reads a held-out file's payload, remembering the first
// error.
type heldoutReader struct {
	p   []byte
	err error
}

func (r *heldoutReader) uvarint(limit uint64) int {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.p)
	if k <= 0 || v > limit {
		r.err = fmt.Errorf("%w: held-out set: bad number", ErrMalformed)
		return 0
	}
	r.p = r.p[k:]
	return int(v)
}

func (r *heldoutReader) bytes(n int) string {
	if r.err != nil {
		return ""
	}
	if n > len(r.p) {
		r.err = fmt.Errorf("%w: held-out set: truncated", ErrMalformed)
		return ""
	}
	s := string(r.p[:n])
	r.p = r.p[n:]
	return s
}

func decodeHeldout(z []byte) ([32]byte, []example, error) {
	var hash [32]byte
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxHeldoutRaw))
	if err != nil {
		return hash, nil, err
	}
	defer dec.Close()
	p, err := dec.DecodeAll(z, nil)
	if err != nil {
		return hash, nil, fmt.Errorf("%w: held-out set: %v", ErrMalformed, err)
	}
	if len(p) < 8+4+32+4 || string(p[:8]) != heldoutMagic || binary.LittleEndian.Uint32(p[8:]) != heldoutFormat {
		return hash, nil, fmt.Errorf("%w: held-out set: bad header", ErrMalformed)
	}
	copy(hash[:], p[12:44])
	n := binary.LittleEndian.Uint32(p[44:])
	if n > maxHeldout {
		return hash, nil, fmt.Errorf("%w: held-out set: %d rows", ErrMalformed, n)
	}
	r := &heldoutReader{p: p[48:]}
	xs := make([]example, 0, min(int(n), len(r.p)/3))
	for i := 0; i < int(n) && r.err == nil; i++ {
		label := r.uvarint(1) // one byte: 0 or 1
		x := example{risky: label == 1}
		x.text = r.bytes(r.uvarint(maxHeldoutText))
		nf := r.uvarint(maxHeldoutFinds)
		for range nf {
			if r.err != nil {
				break
			}
			f := detect.Finding{Type: detect.Type(r.bytes(r.uvarint(maxTypeLen)))}
			f.Start, f.End = r.uvarint(uint64(len(x.text))), r.uvarint(uint64(len(x.text)))
			bits := r.bytes(8)
			if r.err == nil {
				f.Score = math.Float64frombits(binary.LittleEndian.Uint64([]byte(bits)))
				if f.Start >= f.End || !(f.Score >= 0 && f.Score <= 1) {
					r.err = fmt.Errorf("%w: held-out set: row %d: bad finding", ErrMalformed, i)
				}
			}
			x.findings = append(x.findings, f)
		}
		xs = append(xs, x)
	}
	if r.err == nil && len(r.p) != 0 {
		r.err = fmt.Errorf("%w: held-out set: trailing bytes", ErrMalformed)
	}
	if r.err != nil {
		return hash, nil, r.err
	}
	return hash, xs, nil
}
