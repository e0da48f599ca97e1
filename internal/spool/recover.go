package spool

import (
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

// readCursor returns the watermark in dir's cursor file: 0 (the start)
// when there is none, or when it is unreadable (logged: everything is
// delivered again, which at-least-once allows).
func (s *Spool) readCursor() uint64 {
	b, err := os.ReadFile(filepath.Join(s.dir, cursorName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	var seg, off uint32
	if err == nil {
		_, err = fmt.Sscanf(string(b), "v1 %d %d\n", &seg, &off)
	}
	if err != nil {
		s.log.Error("spool: unreadable cursor; delivering every frame again", "err", err)
		return 0
	}
	return position(seg, off)
}

// writeCursor replaces the cursor file with wm, atomically (temporary file
// and rename; no fsync: see the package doc).
func (s *Spool) writeCursor(wm uint64) error {
	tmp := filepath.Join(s.dir, cursorTemp)
	b := fmt.Appendf(nil, "v1 %d %d\n", uint32(wm>>32), uint32(wm))
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, cursorName)); err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	return nil
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
