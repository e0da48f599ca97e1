package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"data only", Event{Data: []byte("x")}, "data: x\n\n"},
		{"all fields", Event{Event: "add", ID: "42", Data: []byte("a\nb")}, "event: add\nid: 42\ndata: a\ndata: b\n\n"},
		{"empty data", Event{}, "data: \n\n"},
		{"event without data", Event{Event: "ping"}, "event: ping\ndata: \n\n"},
		{"line breaks", Event{Data: []byte("a\r\nb\rc\n")}, "data: a\ndata: b\ndata: c\ndata: \n\n"},
		{"blank lines", Event{Data: []byte("\n\n")}, "data: \ndata: \ndata: \n\n"},
		{"leading space kept", Event{Data: []byte(" x")}, "data:  x\n\n"},
		{"OpenAI end", Event{Data: []byte("[DONE]")}, "data: [DONE]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := NewWriter(&buf).WriteEvent(tt.ev); err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteEventInvalid(t *testing.T) {
	for _, ev := range []Event{
		{Event: "a\nevent: b"},
		{Event: "a\r"},
		{ID: "1\n"},
		{ID: "1\r2"},
		{ID: "1\x002"},
	} {
		var buf bytes.Buffer
		if err := NewWriter(&buf).WriteEvent(ev); !errors.Is(err, ErrInvalidField) {
			t.Errorf("event %+v: got error %v, want ErrInvalidField", ev, err)
		}
		if buf.Len() != 0 {
			t.Errorf("event %+v: wrote %q, want nothing", ev, buf.String())
		}
	}
}

func TestWriteData(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, d := range []string{`{"a":1}`, "", "two\nlines"} {
		if err := w.WriteData([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	want := "data: {\"a\":1}\n\ndata: \n\ndata: two\ndata: lines\n\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteComment(t *testing.T) {
	tests := []struct{ text, want string }{
		{"keep-alive", ": keep-alive\n"},
		{"", ":\n"},
		{"a\nb\r\nc\rd", ": a\n: b\n: c\n: d\n"},
		{"a\n", ": a\n:\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := NewWriter(&buf).WriteComment(tt.text); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.want {
			t.Errorf("comment %q: got %q, want %q", tt.text, got, tt.want)
		}
		// Whatever the text, a reader sees no event.
		if got, err := readAll(NewReader(&buf, 0)); err != nil || len(got) != 0 {
			t.Errorf("comment %q: reader got %v, %v; want no events", tt.text, got, err)
		}
	}
}

// flushErrWriter has a Flush() error method, as bufio.Writer does.
type flushErrWriter struct {
	bytes.Buffer
	flushes int
	err     error
}

func (f *flushErrWriter) Flush() error { f.flushes++; return f.err }

// wrappedResponseWriter hides the recorder's Flush behind Unwrap, as
// middleware wrappers do.
type wrappedResponseWriter struct{ rw http.ResponseWriter }

func (w wrappedResponseWriter) Header() http.Header         { return w.rw.Header() }
func (w wrappedResponseWriter) Write(b []byte) (int, error) { return w.rw.Write(b) }
func (w wrappedResponseWriter) WriteHeader(code int)        { w.rw.WriteHeader(code) }
func (w wrappedResponseWriter) Unwrap() http.ResponseWriter { return w.rw }

func TestWriterFlushes(t *testing.T) {
	writes := map[string]func(*Writer) error{
		"WriteEvent":   func(w *Writer) error { return w.WriteEvent(Event{Data: []byte("x")}) },
		"WriteData":    func(w *Writer) error { return w.WriteData([]byte("x")) },
		"WriteComment": func(w *Writer) error { return w.WriteComment("x") },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			t.Run("http.Flusher", func(t *testing.T) {
				rec := httptest.NewRecorder()
				if err := write(NewWriter(rec)); err != nil {
					t.Fatal(err)
				}
				if !rec.Flushed {
					t.Error("got no flush, want one")
				}
			})
			t.Run("Unwrap", func(t *testing.T) {
				rec := httptest.NewRecorder()
				if err := write(NewWriter(wrappedResponseWriter{rec})); err != nil {
					t.Fatal(err)
				}
				if !rec.Flushed {
					t.Error("got no flush through Unwrap, want one")
				}
			})
			t.Run("Flush error", func(t *testing.T) {
				boom := errors.New("boom")
				f := &flushErrWriter{err: boom}
				if err := write(NewWriter(f)); err != boom {
					t.Errorf("got error %v, want the flush error", err)
				}
				if f.flushes != 1 {
					t.Errorf("got %d flushes, want 1", f.flushes)
				}
			})
			t.Run("net/http server", func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					if err := write(NewWriter(rw)); err != nil {
						t.Error(err)
					}
					// Hold the response open: only a flush gets the event
					// to the client before the client hangs up.
					<-r.Context().Done()
				}))
				defer srv.Close()
				client := srv.Client()
				client.Timeout = 10 * time.Second // fail, not hang, without a flush
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b := make([]byte, 1)
				if _, err := io.ReadFull(resp.Body, b); err != nil {
					t.Fatalf("reading the flushed event: %v", err)
				}
			})
			t.Run("bufio", func(t *testing.T) {
				var buf bytes.Buffer
				if err := write(NewWriter(bufio.NewWriter(&buf))); err != nil {
					t.Fatal(err)
				}
				if buf.Len() == 0 {
					t.Error("got nothing past the bufio.Writer, want the event flushed through")
				}
			})
			t.Run("ResponseWriter that cannot flush", func(t *testing.T) {
				if err := write(NewWriter(wrappedResponseWriter{noFlushResponseWriter{}})); err != nil {
					t.Errorf("got error %v, want none", err)
				}
			})
		})
	}
}

type noFlushResponseWriter struct{}

func (noFlushResponseWriter) Header() http.Header         { return http.Header{} }
func (noFlushResponseWriter) Write(b []byte) (int, error) { return len(b), nil }
func (noFlushResponseWriter) WriteHeader(int)             {}

func TestWriterWriteError(t *testing.T) {
	boom := errors.New("boom")
	f := &errWriteFlusher{err: boom}
	if err := NewWriter(f).WriteData([]byte("x")); err != boom {
		t.Errorf("got error %v, want %v", err, boom)
	}
	if f.flushes != 0 {
		t.Errorf("got %d flushes after a failed write, want 0", f.flushes)
	}
}

// errWriteFlusher fails every write and counts flushes.
type errWriteFlusher struct {
	err     error
	flushes int
}

func (w *errWriteFlusher) Write([]byte) (int, error) { return 0, w.err }
func (w *errWriteFlusher) Flush() error              { w.flushes++; return nil }

func TestRoundTrip(t *testing.T) {
	evs := []testEvent{
		{Data: `{"choices":[{"delta":{"content":"Hello"}}]}`, ID: "1"},
		{Event: "content_block_delta", Data: `{"type":"content_block_delta"}`, ID: "2"},
		{Data: "", ID: "3"},
		{Data: "\n", ID: "4"},
		{Data: "  leading spaces\n\ntrailing blank\n", ID: "5"},
		{Data: ": not a comment\nid: not an id\nevent: not an event", ID: "6"},
		{Event: " spaced", Data: "unicode: héllo ✓ \x00 nul", ID: "7 "},
		{Data: "[DONE]", ID: "8"},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, ev := range evs {
		if err := w.WriteEvent(Event{Event: ev.Event, Data: []byte(ev.Data), ID: ev.ID}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteComment("keep-alive"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range chunkings {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(NewReader(c.wrap(bytes.NewReader(buf.Bytes())), 0))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(evs, got); diff != "" {
				t.Errorf("events mismatch after a round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteDataAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	w := NewWriter(io.Discard)
	data := []byte(openAIChunk)
	_ = w.WriteData(data)
	if got := testing.AllocsPerRun(100, func() { _ = w.WriteData(data) }); got != 0 {
		t.Errorf("got %v allocations per WriteData, want 0", got)
	}
	rec := httptest.NewRecorder()
	rec.Body = nil // discard
	w = NewWriter(rec)
	_ = w.WriteData(data)
	if got := testing.AllocsPerRun(100, func() { _ = w.WriteData(data) }); got != 0 {
		t.Errorf("got %v allocations per flushed WriteData, want 0", got)
	}
}
