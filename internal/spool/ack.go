package spool

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
)

// formatID is a frame's stream ID: its position (segment << 32 | offset)
// as 16 hex digits, so IDs order as strings as they do in the stream, and
// stay the same across restarts.
func formatID(pos uint64) string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = hex[pos&15]
		pos >>= 4
	}
	return string(b[:])
}

func parseID(id string) (uint64, bool) {
	if len(id) != 16 {
		return 0, false
	}
	pos, err := strconv.ParseUint(id, 16, 64)
	return pos, err == nil
}

// find returns the index in s.frames of the indexed frame at pos, or -1.
// mu held.
func (s *Spool) find(pos uint64) int {
	live := s.frames[s.head:]
	i, ok := slices.BinarySearchFunc(live, pos, func(r frameRef, p uint64) int {
		switch {
		case r.pos() < p:
			return -1
		case r.pos() > p:
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return s.head + i
}

// ack acknowledges the pending frames with the given IDs (others are
// ignored: unknown, repeated, or never delivered), moves the watermark past
// the acknowledged frames at its place, persists it and deletes the
// segments now entirely below it.
func (s *Spool) ack(ids []string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	var touched []*consumer
	for _, id := range ids {
		pos, ok := parseID(id)
		if !ok {
			continue
		}
		p, ok := s.pend[pos]
		if !ok {
			continue
		}
		delete(s.pend, pos)
		if !slices.Contains(touched, p.cons) {
			touched = append(touched, p.cons)
		}
		if i := s.find(pos); i >= 0 {
			s.frames[i].acked = true
			s.acked++
		}
	}
	for _, c := range touched {
		c.pending = slices.DeleteFunc(c.pending, func(pos uint64) bool {
			_, ok := s.pend[pos]
			return !ok
		})
	}
	for s.wm < len(s.frames) && s.frames[s.wm].acked {
		s.wm++
	}
	wm := s.watermark()
	s.mu.Unlock()
	return s.persist(wm)
}

// drop removes the first n frames of the index (acknowledged ones, below
// the watermark), compacting it when they are most of it. mu held.
func (s *Spool) drop(n int) {
	s.head += n
	s.acked -= n
	switch {
	case s.head == len(s.frames):
		s.base += uint64(s.head)
		s.frames, s.head, s.wm = s.frames[:0], 0, 0
		if cap(s.frames) > 1<<16 {
			s.frames = nil // give back a drained backlog's index
		}
	case s.head >= 1024 && s.head*2 >= len(s.frames):
		live := s.frames[s.head:]
		if cap(s.frames) > 1<<16 && len(live)*4 < cap(s.frames) {
			s.frames = slices.Clone(live)
		} else {
			s.frames = s.frames[:copy(s.frames, live)]
		}
		s.base += uint64(s.head)
		s.wm -= s.head
		s.head = 0
	}
}

// watermark is the position of the oldest unacknowledged frame, or the end
// of the last segment when every frame is acknowledged. mu held.
func (s *Spool) watermark() uint64 {
	if s.wm < len(s.frames) {
		return s.frames[s.wm].pos()
	}
	last := s.segs[len(s.segs)-1]
	return position(last.seq, uint32(last.size))
}

// persist writes watermark wm to the cursor file, if it moved forward, and
// then deletes the sealed segments entirely below the persisted watermark,
// with their (acknowledged) frames.
func (s *Spool) persist(wm uint64) error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	if wm > s.persisted {
		if err := s.writeCursor(wm); err != nil {
			return err
		}
	}
	var gone []string
	s.mu.Lock()
	s.persisted = max(s.persisted, wm)
	seg := uint32(s.persisted >> 32)
	for len(s.segs) > 1 && s.segs[0].seq < seg && s.segs[0].sealed {
		d := s.segs[0]
		s.segs = s.segs[1:]
		d.dropped = true
		s.bytes -= d.size
		if d.refs == 0 {
			gone = append(gone, s.segPath(d.seq))
		}
	}
	n := 0
	for s.head+n < s.wm && s.frames[s.head+n].seg < s.segs[0].seq {
		n++
	}
	if n > 0 {
		s.drop(n)
	}
	s.mu.Unlock()
	s.remove(gone)
	return nil
}

// remove deletes dropped segments' files. A failure is logged: the file is
// below the watermark, so the next Open deletes it.
func (s *Spool) remove(paths []string) {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Error("spool: deleting an acknowledged segment", "err", err)
		}
	}
}

// pin marks the segments of refs as being read, so that they are not
// deleted until unpin. mu held.
func (s *Spool) pin(refs []frameRef) []*segment {
	var pins []*segment
	for _, r := range refs {
		if n := len(pins); n > 0 && pins[n-1].seq == r.seg {
			continue
		}
		g := s.segment(r.seg)
		if g == nil || slices.Contains(pins, g) {
			continue
		}
		g.refs++
		pins = append(pins, g)
	}
	return pins
}

// unpin ends a read of pins, deleting the files of those dropped meanwhile.
func (s *Spool) unpin(pins []*segment) {
	if len(pins) == 0 {
		return
	}
	var gone []string
	s.mu.Lock()
	for _, g := range pins {
		g.refs--
		if g.refs == 0 && g.dropped {
			gone = append(gone, s.segPath(g.seq))
		}
	}
	s.mu.Unlock()
	s.remove(gone)
}
