package sse

import (
	"bytes"
	"errors"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	// Event is the event type from the "event" field; empty when the stream
	// did not name one (the specification's default type is "message").
	Event string
	// Data is the value of the event's "data" lines joined with "\n".
	Data []byte
	// ID is the last event ID: the value of the most recent "id" field in
	// the stream, which, as the specification says, carries over to the
	// events that follow until another "id" field changes it.
	ID string
}

// ErrEventTooLarge is returned by [Reader.Next] when an event's data, or a
// single line of the stream, is larger than the Reader's limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// DefaultMaxEventBytes is the limit [NewReader] uses when given a limit of
// zero or less. It is large enough for image-bearing events; callers that
// know their stream should pass their own.
const DefaultMaxEventBytes = 8 << 20

const (
	// initialBufferSize is the size of a Reader's buffer before any event
	// needs more; typical chat chunks are a few hundred bytes.
	initialBufferSize = 4096
	// minReadSize is the least free space a Reader offers to each Read.
	minReadSize = 512
	// fieldAllowance is how much longer than the event limit a line may be,
	// to leave room for the field name ("data: ") and nothing else.
	fieldAllowance = 64
	// maxEmptyReads is how many successive (0, nil) reads a Reader tolerates
	// before it gives up with io.ErrNoProgress.
	maxEmptyReads = 100
	// maxInterned bounds the Reader's table of event type names, and
	// maxInternedLen the length of a name it keeps.
	maxInterned    = 64
	maxInternedLen = 64
)

var bom = []byte("\xEF\xBB\xBF")

// A Reader reads events from an event stream. It reads from the underlying
// reader only when it has no complete line buffered, so an event is returned
// as soon as its terminating blank line has arrived.
//
// It accepts CRLF, LF and CR line endings, skips a leading UTF-8 byte order
// mark, ignores comments and the "retry" field and unknown fields, and skips
// events that have no data lines, as the specification says. Where it
// departs from the specification it is deliberate: an event still open at
// the end of the stream is dispatched if it has data, because providers
// sometimes omit the final blank line.
type Reader struct {
	rd       io.Reader
	max      int // limit on an event's data
	lineMax  int // limit on one line
	bufMax   int // limit on the buffer
	buf      []byte
	r, w     int   // buf[r:w] is buffered, unread input
	rerr     error // error from rd, returned once buf[r:w] is used up
	err      error // sticky error returned by Next
	lf, cr   finder
	bomDone  bool
	skipLF   bool // the last line ended with CR: skip an LF that follows
	pinned   bool // the event's only data line is buf[pinOff:pinOff+pinLen]
	pinOff   int
	pinLen   int
	nData    int    // data lines in the current event
	data     []byte // the joined data lines when not pinned
	event    string
	id       string
	interned map[string]string
}

// NewReader returns a Reader that reads events from r and refuses, with
// [ErrEventTooLarge], an event whose data is longer than maxEventBytes or a
// line longer than maxEventBytes plus a small allowance for the field name.
// A maxEventBytes of zero or less means [DefaultMaxEventBytes]. The memory a
// Reader holds is bounded by about twice the limit.
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	rd := new(Reader)
	rd.init(r, maxEventBytes)
	return rd
}

// Reset discards the Reader's state and makes it read from r, keeping its
// limit and its buffers, so that one Reader can serve many streams in turn.
func (r *Reader) Reset(rd io.Reader) {
	buf, data, interned := r.buf, r.data, r.interned
	r.init(rd, r.max)
	r.buf, r.data, r.interned = buf, data[:0], interned
}

func (r *Reader) init(rd io.Reader, maxEventBytes int) {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	*r = Reader{
		rd:      rd,
		max:     maxEventBytes,
		lineMax: maxEventBytes + fieldAllowance,
		bufMax:  maxEventBytes + fieldAllowance + minReadSize,
		lf:      finder{c: '\n', next: -1},
		cr:      finder{c: '\r', next: -1},
	}
}

// Next returns the next event. At the end of a stream it returns io.EOF;
// an event still open at that point is returned first if it has data.
//
// The returned Data aliases the Reader's buffers: it is valid only until the
// next call to Next or Reset, and a caller that keeps it longer must copy it.
//
// Errors other than io.EOF are those of the underlying reader, or
// [ErrEventTooLarge]; the event being read when one happens is discarded.
// Once Next has returned an error it returns the same error on every call.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.event = ""
	r.nData = 0
	r.pinned = false
	r.data = r.data[:0]
	if r.r == r.w {
		// Nothing buffered and nothing pinned: start over at the front.
		r.r, r.w = 0, 0
		r.lf.reset()
		r.cr.reset()
	}
	for {
		start, end, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.nData > 0 {
				r.err = io.EOF
				return r.dispatch(), nil
			}
			r.err = err
			return Event{}, err
		}
		if start == end {
			if r.nData > 0 {
				return r.dispatch(), nil
			}
			r.event = "" // an event without data lines is skipped
			continue
		}
		if err := r.field(start, end); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// dispatch returns the current event. Its Data is capped so that a caller's
// append cannot write into the Reader's buffers.
func (r *Reader) dispatch() Event {
	ev := Event{Event: r.event, ID: r.id}
	if r.pinned {
		end := r.pinOff + r.pinLen
		ev.Data = r.buf[r.pinOff:end:end]
	} else {
		ev.Data = r.data[:len(r.data):len(r.data)]
	}
	return ev
}

// field processes the non-empty line buf[start:end].
func (r *Reader) field(start, end int) error {
	line := r.buf[start:end]
	name, value, vstart := line, line[:0], end
	if i := bytes.IndexByte(line, ':'); i == 0 {
		return nil // a comment
	} else if i > 0 {
		name, vstart = line[:i], start+i+1
		if vstart < end && r.buf[vstart] == ' ' {
			vstart++
		}
		value = r.buf[vstart:end]
	}
	switch string(name) {
	case "data":
		return r.appendData(vstart, end)
	case "event":
		r.event = r.intern(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
			r.id = string(value)
		}
	}
	// "retry" and unknown fields are ignored.
	return nil
}

// appendData adds the data line buf[start:end] to the current event. The
// first data line is not copied: it stays in buf ("pinned") and is returned
// from there unless a second line arrives or buf has to move.
func (r *Reader) appendData(start, end int) error {
	n := end - start
	if r.nData == 0 {
		if n > r.max {
			return ErrEventTooLarge
		}
		r.pinned, r.pinOff, r.pinLen = true, start, n
		r.nData = 1
		return nil
	}
	size := len(r.data)
	if r.pinned {
		size = r.pinLen
	}
	if size+1+n > r.max {
		return ErrEventTooLarge
	}
	r.unpin()
	r.data = append(r.data, '\n')
	r.data = append(r.data, r.buf[start:end]...)
	r.nData++
	return nil
}

// unpin copies a pinned data line out of buf, before buf moves.
func (r *Reader) unpin() {
	if r.pinned {
		r.data = append(r.data[:0], r.buf[r.pinOff:r.pinOff+r.pinLen]...)
		r.pinned = false
	}
}

// intern returns b as a string, without allocating for event type names
// the stream has used before (Anthropic-style streams name every event).
func (r *Reader) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := r.interned[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxInternedLen && len(r.interned) < maxInterned {
		if r.interned == nil {
			r.interned = make(map[string]string)
		}
		r.interned[s] = s
	}
	return s
}

// readLine returns the bounds in buf of the next line, without its
// terminator. At the end of the input an unterminated last line is returned
// as a line; after that the error is io.EOF (or the underlying error).
func (r *Reader) readLine() (start, end int, err error) {
	for {
		if !r.bomDone {
			b := r.buf[r.r:r.w]
			switch {
			case bytes.HasPrefix(b, bom):
				r.r += len(bom)
				r.bomDone = true
			case len(b) >= len(bom) || r.rerr != nil || !bytes.HasPrefix(bom, b):
				r.bomDone = true
			}
		}
		if r.bomDone {
			if r.skipLF && r.r < r.w {
				if r.buf[r.r] == '\n' {
					r.r++
				}
				r.skipLF = false
			}
			lf := r.lf.find(r.buf, r.r, r.w)
			cr := r.cr.find(r.buf, r.r, r.w)
			eol := lf
			if cr >= 0 && (eol < 0 || cr < eol) {
				eol = cr
			}
			if eol >= 0 {
				if eol-r.r > r.lineMax {
					return 0, 0, ErrEventTooLarge
				}
				start, end = r.r, eol
				r.r = eol + 1
				if r.buf[eol] == '\r' {
					if r.r < r.w {
						if r.buf[r.r] == '\n' {
							r.r++
						}
					} else {
						r.skipLF = true
					}
				}
				return start, end, nil
			}
			if r.w-r.r > r.lineMax {
				return 0, 0, ErrEventTooLarge
			}
		}
		if r.rerr != nil {
			if r.r < r.w {
				start, end = r.r, r.w
				r.r = r.w
				return start, end, nil
			}
			return 0, 0, r.rerr
		}
		r.fill()
	}
}

// fill reads more input into buf, first making room by moving the unread
// input to the front of buf or by growing buf up to its limit.
func (r *Reader) fill() {
	if r.r > 0 && len(r.buf)-r.w < minReadSize {
		r.unpin()
		n := copy(r.buf, r.buf[r.r:r.w])
		r.lf.shift(r.r)
		r.cr.shift(r.r)
		r.r, r.w = 0, n
	}
	if len(r.buf)-r.w < minReadSize && len(r.buf) < r.bufMax {
		nb := make([]byte, min(max(2*len(r.buf), initialBufferSize), r.bufMax))
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	if r.w == len(r.buf) {
		// Unreachable while lineMax < bufMax, but never read into nothing.
		r.rerr = ErrEventTooLarge
		return
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.rerr = errors.New("sse: reader returned an invalid count")
			return
		}
		r.w += n
		if err != nil {
			r.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}

// A finder finds the next occurrence of one byte in a Reader's buffer while
// searching each buffered byte at most once, however the input is split into
// lines and reads: there is no occurrence in buf[from:scanned] other than at
// next, for any from at or after the position the last search started.
type finder struct {
	c       byte
	next    int // index of the occurrence last found, or -1
	scanned int // index up to which buf has been searched
}

// find returns the index of the first c in buf[from:to], or -1.
func (f *finder) find(buf []byte, from, to int) int {
	if f.next >= from {
		return f.next
	}
	start := max(from, f.scanned)
	if i := bytes.IndexByte(buf[start:to], f.c); i >= 0 {
		f.next = start + i
		f.scanned = f.next + 1
		return f.next
	}
	f.next, f.scanned = -1, to
	return -1
}

// shift accounts for the buffer's contents moving d bytes to the front.
func (f *finder) shift(d int) {
	if f.next >= 0 {
		f.next -= d
		if f.next < 0 {
			f.next = -1
		}
	}
	f.scanned = max(f.scanned-d, 0)
}

func (f *finder) reset() { f.next, f.scanned = -1, 0 }
