// Package spool is the local spool of audit entries: an append-only log of
// segment files in the data dir that every proxy appends each entry to,
// synchronously, before the request's answer ends, so that a proxy killed
// with SIGKILL loses none. In the embedded default the spool is the hot
// tier and the in-process bridge drains it into SQL; with Redis a forwarder
// drains it into the Redis stream. Both consume it through store.Streams,
// which *Spool implements for one stream key and one consumer group.
//
// Durability: Append returns after one write(2) of all its frames and no
// fsync. The kernel's page cache survives the death of the process (SIGKILL,
// a panic, the OOM killer), so an appended entry is never lost to those; a
// power loss or kernel crash may lose the entries of the last seconds, and
// may tear or zero the tail of a segment (which Open then truncates or
// skips). An acknowledgement is kept by overwriting the cursor file's
// fixed-size, checksummed record in place (one write(2), no fsync either;
// recover.go).
//
// On disk, dir holds segment files <seq>.seg (appended to until they reach
// Options.SegmentBytes, then sealed), the cursor file (the watermark: the
// position of the oldest unacknowledged frame) and a lock file. A frame is a
// 16-byte header — payload length, CRC-32C (of the length, the time and the
// payload), append time in Unix microseconds, all little-endian — and the
// payload. Open scans the segments from the watermark on: a torn tail (a
// write cut short) is truncated, a corrupt frame in the middle of a segment
// skips the rest of that segment, logged either way. A segment entirely
// below the watermark is deleted. Delivery is at least once: after a
// restart every frame from the watermark on is delivered again, including
// those acknowledged out of order (kept in memory only); consumers are
// idempotent on the entry's request_id.
//
// Memory: an index of 24 bytes per frame in the stream (so StreamRead,
// StreamAck and StreamUnacked cost what they return, not what is spooled),
// plus the consumers' pending entries. The stream holds the unacknowledged
// frames and at most one segment's worth of acknowledged ones not yet
// trimmed, so the index is bounded by about (MaxBytes + SegmentBytes) over
// the smallest frame (16 bytes, an empty payload), 24/16 of the backlog in
// the worst case, and about 2.3 % of it for 1 KB entries (12 MiB of index
// for the 512 MiB default).
//
// Several processes may share one data dir: OpenDir gives each its own
// numbered spool directory under a flock, and Orphans opens the spools of
// processes that died so that a starting process drains them too.
//
// Who imports it: the wiring (the proxy's audit path, the bridge and the
// forwarder). It imports, of svc, only internal/store.
package spool

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Default and allowed sizes.
const (
	DefaultSegmentBytes = 16 << 20
	DefaultMaxBytes     = 512 << 20
	MinSegmentBytes     = 256
	MaxSegmentBytes     = 1 << 30
)

// headerSize is the size of a frame's header: length, CRC, time.
const headerSize = 16

// Errors of the spool.
var (
	// ErrFull is returned by Append when the frames would take the spool
	// past Options.MaxBytes; nothing of the call was written.
	ErrFull = errors.New("spool: full")
	// ErrTooLarge is returned by Append when one call's frames are larger
	// than a segment.
	ErrTooLarge = errors.New("spool: append larger than a segment")
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("spool: closed")
	// ErrLocked is returned by Open when another open spool (this process's
	// or another's) holds dir.
	ErrLocked = errors.New("spool: directory in use")
	// ErrStream is returned by the store.Streams methods for a key or group
	// the spool does not answer to.
	ErrStream = errors.New("spool: unknown stream or group")
	// ErrNotEmpty is returned by Remove while entries are not acknowledged.
	ErrNotEmpty = errors.New("spool: entries not acknowledged")
)

// Options configure a spool. The zero value takes the defaults.
type Options struct {
	// SegmentBytes is the size at which a segment is sealed and the next
	// one started (default 16 MiB; MinSegmentBytes to MaxSegmentBytes). One
	// Append's frames always go to one segment, so they may not be larger.
	SegmentBytes int64
	// MaxBytes bounds the segment files' total size (default 512 MiB): an
	// Append that would pass it fails with ErrFull. Acknowledged frames
	// count until their segment is deleted (at most one segment's worth).
	MaxBytes int64
	// Key is the one stream key the store.Streams methods answer to; any
	// other is refused with ErrStream. Empty: any key (one stream still).
	Key string
	// Group is the one consumer group; empty: the first group that reads or
	// acknowledges becomes it (until the spool is closed).
	Group string
	// Now is the clock (append times, idle times); time.Now when nil.
	Now func() time.Time
	// Logger receives recovery reports (torn tails, corrupt frames); none
	// when nil.
	Logger *slog.Logger
}

func (o Options) normalize() (Options, error) {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.SegmentBytes < MinSegmentBytes || o.SegmentBytes > MaxSegmentBytes {
		return o, fmt.Errorf("spool: SegmentBytes %d out of range [%d, %d]", o.SegmentBytes, MinSegmentBytes, MaxSegmentBytes)
	}
	if o.MaxBytes < o.SegmentBytes {
		return o, fmt.Errorf("spool: MaxBytes %d below SegmentBytes %d", o.MaxBytes, o.SegmentBytes)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// frameRef is one indexed frame: where it is, when it was appended and
// whether it was acknowledged. 24 bytes.
type frameRef struct {
	seg    uint32
	off    uint32
	n      uint32 // payload length
	acked  bool
	micros int64 // append time
}

func (r frameRef) pos() uint64 { return position(r.seg, r.off) }
func (r frameRef) end() uint32 { return r.off + headerSize + r.n }

func position(seg, off uint32) uint64 { return uint64(seg)<<32 | uint64(off) }

// segment is one segment file. refs counts readers between choosing frames
// (under mu) and reading them (outside it); a dropped segment's file is
// removed when the last of them is done.
type segment struct {
	seq     uint32
	size    int64
	sealed  bool
	refs    int
	dropped bool
}

// pending is a delivered, unacknowledged frame: whose it is and when it was
// last delivered.
type pending struct {
	cons *consumer
	at   time.Time
}

// consumer is one consumer of the group: its pending positions, in stream
// order, and its last read.
type consumer struct {
	name    string
	pending []uint64
	seen    time.Time
}

// Spool is an open spool directory. It is safe for concurrent use.
type Spool struct {
	dir  string
	opt  Options
	log  *slog.Logger
	lock *os.File

	mu      sync.Mutex
	closed  bool
	segs    []*segment // by seq; the last is written to unless sealed
	cur     *os.File   // the last segment, open for writing; nil when sealed
	buf     []byte     // Append's frames, reused
	frames  []frameRef // the index: frames[head:] are the stream (Length)
	head    int
	wm      int    // frames[wm] is the oldest unacknowledged frame (head ≤ wm)
	base    uint64 // ordinal of frames[0]
	next    uint64 // ordinal of the first frame never delivered
	acked   int    // acknowledged frames in frames[head:]
	pend    map[uint64]pending
	cons    map[string]*consumer
	group   string
	bytes   int64
	waiters int
	wake    chan struct{} // closed by Append when waiters > 0

	persistMu sync.Mutex
	persisted uint64   // the watermark in the cursor file
	cursor    *os.File // the cursor file, open for writing in place; nil: replaced each time
}

// Open opens (creating it if needed) the spool in dir, holding dir's lock
// until Close: a second Open of dir fails with ErrLocked while this one is
// open, in this process or another. It recovers the segments from the
// watermark on (see the package doc).
func Open(dir string, opt Options) (*Spool, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Spool{
		dir:   dir,
		opt:   opt,
		log:   opt.Logger.With("spool", dir),
		lock:  lock,
		pend:  make(map[uint64]pending),
		cons:  make(map[string]*consumer),
		group: opt.Group,
		wake:  make(chan struct{}),
	}
	if err := s.recover(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if err := s.openCursor(); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Close closes the spool and releases its directory's lock. Blocked reads
// return ErrClosed. Closing twice is not an error.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.wake)
	s.waiters = 0
	s.mu.Unlock()
	return s.closeFiles()
}

func (s *Spool) closeFiles() error {
	errs := []error{s.closeCursor()}
	if s.cur != nil {
		errs = append(errs, s.cur.Close())
		s.cur = nil
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
		s.lock = nil
	}
	return errors.Join(errs...)
}

// Bytes is the size of the segment files.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Frames is the number of frames in the stream (StreamInfo's Length):
// the unacknowledged ones and the acknowledged ones not yet trimmed.
func (s *Spool) Frames() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.frames) - s.head)
}

// Unacked is the number of frames not acknowledged (the backlog).
func (s *Spool) Unacked() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.frames) - s.head - s.acked)
}

// Append appends one frame per value to the spool with one write(2) and
// returns when it is done (see the package doc for what that makes
// durable). Either every frame of the call is written or none is: ErrFull
// when they would pass MaxBytes, ErrTooLarge when they are larger than a
// segment.
func (s *Spool) Append(values ...[]byte) error {
	if len(values) == 0 {
		return nil
	}
	total := int64(0)
	for _, v := range values {
		total += headerSize + int64(len(v))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case total > s.opt.SegmentBytes:
		return fmt.Errorf("%w: %d bytes, segments are %d", ErrTooLarge, total, s.opt.SegmentBytes)
	case s.bytes+total > s.opt.MaxBytes:
		return ErrFull
	}
	last := s.segs[len(s.segs)-1]
	if s.cur == nil || (last.size > 0 && last.size+total > s.opt.SegmentBytes) {
		if err := s.rotate(); err != nil {
			return err
		}
		last = s.segs[len(s.segs)-1]
	}
	micros := s.opt.Now().UnixMicro()
	buf := s.encode(values, total, micros)
	if n, err := s.cur.WriteAt(buf, last.size); err != nil {
		s.abandon(last, n)
		return fmt.Errorf("spool: append: %w", err)
	}
	off := uint32(last.size)
	for _, v := range values {
		s.frames = append(s.frames, frameRef{seg: last.seq, off: off, n: uint32(len(v)), micros: micros})
		off += headerSize + uint32(len(v))
	}
	last.size += total
	s.bytes += total
	if s.waiters > 0 {
		close(s.wake)
		s.wake = make(chan struct{})
		s.waiters = 0
	}
	return nil
}

// encode writes the call's frames into the reused buffer.
func (s *Spool) encode(values [][]byte, total, micros int64) []byte {
	if int64(cap(s.buf)) < total {
		s.buf = make([]byte, total, max(total, 64<<10))
	}
	buf := s.buf[:total]
	if cap(s.buf) > 1<<20 {
		s.buf = nil // do not keep a large call's buffer
	}
	p := 0
	for _, v := range values {
		putHeader(buf[p:p+headerSize], v, micros)
		copy(buf[p+headerSize:], v)
		p += headerSize + len(v)
	}
	return buf
}

// abandon undoes a failed write of n bytes at the end of last: the partial
// frames are cut off, or, when that fails too, the segment is sealed so
// nothing is written after them (Open skips them).
func (s *Spool) abandon(last *segment, n int) {
	if n == 0 {
		return
	}
	if err := s.cur.Truncate(last.size); err != nil {
		s.log.Error("spool: cannot cut a partial write; sealing the segment", "segment", last.seq, "err", err)
		s.seal()
	}
}

// seal closes the last segment for writing; the next Append starts a new one.
func (s *Spool) seal() {
	if s.cur != nil {
		if err := s.cur.Close(); err != nil {
			s.log.Warn("spool: closing a segment", "err", err)
		}
		s.cur = nil
	}
	if n := len(s.segs); n > 0 {
		s.segs[n-1].sealed = true
	}
}

// rotate seals the last segment and starts the next. mu held.
func (s *Spool) rotate() error {
	seq := uint32(1)
	if n := len(s.segs); n > 0 {
		seq = s.segs[n-1].seq + 1
	}
	if wm := uint32(s.persisted >> 32); seq <= wm {
		seq = wm + 1 // never write below the watermark
	}
	if seq == 0 {
		return errors.New("spool: segment numbers exhausted")
	}
	f, err := os.OpenFile(s.segPath(seq), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("spool: new segment: %w", err)
	}
	s.seal()
	s.segs = append(s.segs, &segment{seq: seq})
	s.cur = f
	return nil
}

func (s *Spool) segPath(seq uint32) string {
	return filepath.Join(s.dir, fmt.Sprintf("%010d.seg", seq))
}

// segment returns the live segment seq, or nil. mu held.
func (s *Spool) segment(seq uint32) *segment {
	lo, hi := 0, len(s.segs)
	for lo < hi {
		m := (lo + hi) / 2
		if s.segs[m].seq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.segs) && s.segs[lo].seq == seq {
		return s.segs[lo]
	}
	return nil
}
