package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
)

// ErrInvalidField is returned by [Writer.WriteEvent] for an event type or ID
// that cannot be written without changing the stream's framing: one holding
// a line break, or an ID holding a NUL byte (which readers ignore).
var ErrInvalidField = errors.New("sse: event type or id holds a line break or NUL")

// A Writer writes events to an event stream. Each event is framed into one
// reused buffer, written with a single Write, and then flushed if the
// underlying writer can flush: it has a FlushError() error, Flush() error
// or Flush() method (as net/http's ResponseWriter, bufio.Writer and any
// http.Flusher do), or it is an http.ResponseWriter that reaches one
// through Unwrap (see http.ResponseController).
type Writer struct {
	w     io.Writer
	buf   []byte
	flush func() error
}

// NewWriter returns a Writer that writes events to w.
func NewWriter(w io.Writer) *Writer {
	sw := &Writer{}
	sw.Reset(w)
	return sw
}

// Reset makes the Writer write to w, keeping its buffer.
func (w *Writer) Reset(dst io.Writer) {
	w.w = dst
	w.flush = flusher(dst)
}

func flusher(w io.Writer) func() error {
	switch f := w.(type) {
	case interface{ FlushError() error }: // net/http's own ResponseWriter
		return f.FlushError
	case interface{ Flush() error }:
		return f.Flush
	case http.Flusher:
		return func() error { f.Flush(); return nil }
	case http.ResponseWriter:
		rc := http.NewResponseController(f)
		return func() error {
			if err := rc.Flush(); !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return nil
		}
	}
	return nil
}

// WriteEvent writes ev: an "event" line if ev.Event is set, an "id" line if
// ev.ID is set, one "data" line per line of ev.Data (so a Data of n line
// breaks takes n+1 lines, and an empty Data one empty "data" line), and the
// blank line that dispatches the event. LF, CRLF and CR in Data all count as
// line breaks, so a reader gets each of them back as LF.
func (w *Writer) WriteEvent(ev Event) error {
	if strings.ContainsAny(ev.Event, "\r\n") || strings.ContainsAny(ev.ID, "\r\n\x00") {
		return ErrInvalidField
	}
	b := w.buf[:0]
	if ev.Event != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Event...)
		b = append(b, '\n')
	}
	if ev.ID != "" {
		b = append(b, "id: "...)
		b = append(b, ev.ID...)
		b = append(b, '\n')
	}
	b = appendData(b, ev.Data)
	b = append(b, '\n')
	return w.send(b)
}

// WriteData writes an event with only data: the common case of an
// OpenAI-style stream. It is WriteEvent(Event{Data: data}), without the
// checks, and does not allocate once the Writer's buffer has grown to fit.
func (w *Writer) WriteData(data []byte) error {
	b := appendData(w.buf[:0], data)
	b = append(b, '\n')
	return w.send(b)
}

// WriteComment writes a comment, which readers ignore: the usual keep-alive.
// Each line of text becomes a comment line of its own.
func (w *Writer) WriteComment(text string) error {
	b := w.buf[:0]
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			break
		}
		b = appendComment(b, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	b = appendComment(b, text)
	return w.send(b)
}

func appendComment(b []byte, line string) []byte {
	b = append(b, ':')
	if line != "" {
		b = append(b, ' ')
		b = append(b, line...)
	}
	return append(b, '\n')
}

// appendData appends one "data" line per line of data. It searches each
// byte of data at most once per kind of line break, so that no data, however
// its lines end, takes more than linear time.
func appendData(b, data []byte) []byte {
	lf := bytes.IndexByte(data, '\n')
	for start := 0; ; {
		end := len(data)
		if lf >= 0 {
			end = lf
		}
		if i := bytes.IndexByte(data[start:end], '\r'); i >= 0 {
			end = start + i
		}
		b = append(b, "data: "...)
		b = append(b, data[start:end]...)
		b = append(b, '\n')
		if end == len(data) {
			return b
		}
		start = end + 1
		if data[end] == '\r' && start < len(data) && data[start] == '\n' {
			start++
		}
		if lf >= 0 && lf < start {
			lf = bytes.IndexByte(data[start:], '\n')
			if lf >= 0 {
				lf += start
			}
		}
	}
}

// send writes b, keeps it as the buffer for the next event, and flushes.
func (w *Writer) send(b []byte) error {
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	if w.flush != nil {
		return w.flush()
	}
	return nil
}
