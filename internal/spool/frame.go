package spool

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
)

// putHeader writes the header of the frame of payload v appended at micros.
func putHeader(h []byte, v []byte, micros int64) {
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(v)))
	binary.LittleEndian.PutUint64(h[8:16], uint64(micros))
	crc := crc32Update(0, h[0:4])
	crc = crc32Update(crc, h[8:16])
	crc = crc32Update(crc, v)
	binary.LittleEndian.PutUint32(h[4:8], crc)
}

// checkFrame checks the frame at the start of b (header and payload) and
// returns its payload and append time in Unix microseconds.
func checkFrame(b []byte) (payload []byte, micros int64, ok bool) {
	if len(b) < headerSize {
		return nil, 0, false
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if uint64(len(b)-headerSize) < uint64(n) {
		return nil, 0, false
	}
	payload = b[headerSize : headerSize+int(n) : headerSize+int(n)]
	crc := crc32Update(0, b[0:4])
	crc = crc32Update(crc, b[8:16])
	crc = crc32Update(crc, payload)
	if crc != binary.LittleEndian.Uint32(b[4:8]) {
		return nil, 0, false
	}
	return payload, int64(binary.LittleEndian.Uint64(b[8:16])), true
}

// badFrame says why a scan stopped early.
type badFrame int

const (
	frameOK   badFrame = iota
	frameCut           // the frame runs past the end of the file: a torn write
	frameBad           // the frame is inside the file but its CRC is wrong
	frameRead          // the file could not be read
)

// scanSegment reads the frames of segment seq from offset from to size,
// calling add for each valid one. It returns the offset where valid frames
// end and, if it stopped before size, why.
func scanSegment(f *os.File, seq uint32, from, size int64, add func(frameRef)) (int64, badFrame) {
	br := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 256<<10)
	off := from
	var h [headerSize]byte
	for off < size {
		if size-off < headerSize {
			return off, frameCut
		}
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return off, frameRead
		}
		n := int64(binary.LittleEndian.Uint32(h[0:4]))
		if off+headerSize+n > size {
			return off, frameCut
		}
		crc := crc32Update(0, h[0:4])
		crc = crc32Update(crc, h[8:16])
		for rem := n; rem > 0; {
			p, err := br.Peek(int(min(rem, int64(br.Size()))))
			if err != nil {
				return off, frameRead
			}
			crc = crc32Update(crc, p)
			rem -= int64(len(p))
			if _, err := br.Discard(len(p)); err != nil {
				return off, frameRead
			}
		}
		if crc != binary.LittleEndian.Uint32(h[4:8]) {
			return off, frameBad
		}
		add(frameRef{seg: seq, off: uint32(off), n: uint32(n), micros: int64(binary.LittleEndian.Uint64(h[8:16]))})
		off += headerSize + n
	}
	return off, frameOK
}

// zeros reports whether the file holds only zero bytes from off to size (a
// tail the file system extended but never wrote).
func zeros(f *os.File, off, size int64) bool {
	br := bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), 64<<10)
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return true
		}
		if err != nil || b != 0 {
			return false
		}
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32Update extends a CRC-32C (hardware-assisted where the CPU has it).
func crc32Update(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }
