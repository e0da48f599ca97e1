package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	cursorName = "cursor"
	cursorTemp = "cursor.tmp"
	segSuffix  = ".seg"
)

// The cursor file holds the watermark as one fixed-size record,
// "v2 <segment> <offset> <crc>\n" (the CRC-32C of the watermark's 8
// little-endian bytes), so that each acknowledgement overwrites it in
// place with one write(2) on the open file, rather than writing a
// temporary file and renaming it over the cursor (an inode created and
// one removed per acknowledgement: 0.4-0.9 ms of kernel time each on the
// development VM). A record torn by a power loss fails its CRC and is
// read as no cursor (everything delivered again); a process killed
// mid-write cannot tear it. Spools of earlier versions hold "v1 <segment>
// <offset>\n", read as well and replaced at Open.
const (
	cursorFormat = "v2 %010d %010d %08x\n"
	cursorSize   = 34
)

// cursorRecord is the cursor file's record of watermark wm.
func cursorRecord(wm uint64) []byte {
	var p [8]byte
	binary.LittleEndian.PutUint64(p[:], wm)
	return fmt.Appendf(make([]byte, 0, cursorSize), cursorFormat, uint32(wm>>32), uint32(wm), crc32Update(0, p[:]))
}

// readCursor returns the watermark in dir's cursor file: 0 (the start)
// when there is none, or when it is unreadable (logged: everything is
// delivered again, which at-least-once allows).
func (s *Spool) readCursor() uint64 {
	b, err := os.ReadFile(filepath.Join(s.dir, cursorName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	var seg, off, crc uint32
	if err == nil {
		switch {
		case len(b) == cursorSize && string(b[:3]) == "v2 ":
			_, err = fmt.Sscanf(string(b), "v2 %d %d %x\n", &seg, &off, &crc)
			if err == nil && !bytes.Equal(b, cursorRecord(position(seg, off))) {
				err = errors.New("the record's checksum does not match")
			}
		default:
			_, err = fmt.Sscanf(string(b), "v1 %d %d\n", &seg, &off)
		}
	}
	if err != nil {
		s.log.Error("spool: unreadable cursor; delivering every frame again", "err", err)
		return 0
	}
	return position(seg, off)
}

// openCursor writes the persisted watermark into a new cursor file (which
// replaces one of an earlier version) and keeps the file open for
// writeCursor. Without it open, writeCursor replaces the file each time.
func (s *Spool) openCursor() error {
	if err := s.replaceCursor(s.persisted); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, cursorName), os.O_RDWR, 0)
	if err != nil {
		s.log.Warn("spool: cursor not kept open; each acknowledgement replaces it", "err", err)
		return nil
	}
	s.cursor = f
	return nil
}

// writeCursor writes wm into the cursor file: in place, on the open file;
// or, when it is not open or that write fails, by replacing the file.
// persistMu held.
func (s *Spool) writeCursor(wm uint64) error {
	if s.cursor != nil {
		if _, err := s.cursor.WriteAt(cursorRecord(wm), 0); err == nil {
			return nil
		}
		s.cursor.Close()
		s.cursor = nil
	}
	return s.replaceCursor(wm)
}

// replaceCursor replaces the cursor file with one holding wm, atomically
// (temporary file + rename, no fsync).
func (s *Spool) replaceCursor(wm uint64) error {
	tmp := filepath.Join(s.dir, cursorTemp)
	if err := os.WriteFile(tmp, cursorRecord(wm), 0o600); err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, cursorName)); err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	return nil
}

// closeCursor closes the open cursor file, if any.
func (s *Spool) closeCursor() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	if s.cursor == nil {
		return nil
	}
	err := s.cursor.Close()
	s.cursor = nil
	return err
}

// segments lists dir's segment numbers in order.
func (s *Spool) segments() ([]uint32, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var seqs []uint32
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 32)
		if err != nil || n == 0 {
			s.log.Warn("spool: ignoring a file that is not a segment", "file", e.Name())
			continue
		}
		seqs = append(seqs, uint32(n))
	}
	slices.Sort(seqs)
	return seqs, nil
}

// recover rebuilds the spool's state from its directory: segments below the
// watermark are deleted, the others scanned into the index; a torn tail of
// the last segment is truncated, a corrupt frame ends its segment's scan.
// It leaves a segment open for writing.
func (s *Spool) recover() error {
	wm := s.readCursor()
	s.persisted = wm
	if err := os.Remove(filepath.Join(s.dir, cursorTemp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	seqs, err := s.segments()
	if err != nil {
		return err
	}
	wmSeg, wmOff := uint32(wm>>32), int64(uint32(wm))
	for i, seq := range seqs {
		if seq < wmSeg {
			if err := os.Remove(s.segPath(seq)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
			continue
		}
		from := int64(0)
		if seq == wmSeg {
			from = wmOff
		}
		if err := s.recoverSegment(seq, from, i == len(seqs)-1); err != nil {
			return err
		}
	}
	if s.cur == nil {
		return s.rotate()
	}
	return nil
}

// recoverSegment scans segment seq from offset from into the index and adds
// it to the segments; the last one stays open for writing unless it must
// be sealed.
func (s *Spool) recoverSegment(seq uint32, from int64, last bool) error {
	f, err := os.OpenFile(s.segPath(seq), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("spool: %w", err)
	}
	seg := &segment{seq: seq, size: fi.Size()}
	keep := last
	switch {
	case seg.size > math.MaxUint32:
		s.log.Error("spool: segment too large; skipping it", "segment", seq, "bytes", seg.size)
		keep = false
	case from > seg.size:
		// The watermark is past the end: the tail was lost (power loss).
		// Nothing here is delivered, and nothing is written below it.
		s.log.Warn("spool: segment ends before the cursor", "segment", seq, "bytes", seg.size, "cursor", from)
		keep = false
	default:
		end, why := scanSegment(f, seq, from, seg.size, func(r frameRef) { s.frames = append(s.frames, r) })
		if why != frameOK {
			keep = s.damaged(f, seg, end, why, last) && keep
		}
	}
	s.segs = append(s.segs, seg)
	s.bytes += seg.size
	if keep {
		s.cur = f
		return nil
	}
	seg.sealed = true
	return f.Close()
}

// damaged handles a scan of seg that stopped at end: a torn tail of the
// last segment (cut short, or zeros to the end) is truncated and the
// segment kept for writing (true); anything else skips the rest of the
// segment, which is sealed (false).
func (s *Spool) damaged(f *os.File, seg *segment, end int64, why badFrame, last bool) bool {
	if last && (why == frameCut || (why == frameBad && zeros(f, end, seg.size))) {
		err := f.Truncate(end)
		if err != nil {
			s.log.Error("spool: cannot truncate a torn tail; sealing the segment", "segment", seg.seq, "err", err)
			return false
		}
		s.log.Warn("spool: truncated a torn tail", "segment", seg.seq, "offset", end, "bytes", seg.size-end)
		seg.size = end
		return true
	}
	s.log.Error("spool: corrupt frame; skipping the rest of the segment",
		"segment", seg.seq, "offset", end, "bytes_skipped", seg.size-end, "cause", why.String())
	return false
}

func (b badFrame) String() string {
	switch b {
	case frameCut:
		return "frame runs past the end of the file"
	case frameBad:
		return "checksum mismatch"
	case frameRead:
		return "read error"
	}
	return "ok"
}
