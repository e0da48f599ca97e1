package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testEvent is an Event with Data as a string, for comparisons.
type testEvent struct {
	Event, Data, ID string
}

// readAll reads every event from r, copying each one's Data.
func readAll(r *Reader) ([]testEvent, error) {
	var evs []testEvent
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, testEvent{ev.Event, string(ev.Data), ev.ID})
	}
}

// chunkings are the ways the reader tests split their input into reads.
var chunkings = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
}

func TestReader(t *testing.T) {
	const chunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}`
	tests := []struct {
		name string
		in   string
		want []testEvent
	}{
		{"empty", "", nil},
		{"LF", "data: hello\n\n", []testEvent{{Data: "hello"}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []testEvent{{Data: "a"}, {Data: "b"}}},
		{"CR", "data: a\r\rdata: b\r\r", []testEvent{{Data: "a"}, {Data: "b"}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\n", []testEvent{{Data: "a\nb\nc"}}},
		{"CR then LF is one ending", "data: a\r\n\r\n", []testEvent{{Data: "a"}}},
		{"LF then CR is two endings", "data: a\n\rdata: b\n\n", []testEvent{{Data: "a"}, {Data: "b"}}},
		{"multi-line data", "data: line1\ndata: line2\ndata: line3\n\n", []testEvent{{Data: "line1\nline2\nline3"}}},
		{"empty data lines", "data\ndata\n\n", []testEvent{{Data: "\n"}}},
		{"comments", ": keep-alive\n\ndata: x\n: inside an event\n\n:\n\n", []testEvent{{Data: "x"}}},
		{"only comments and blank lines", ":a\n\n\n:b\r\n\r\n", nil},
		{"no trailing blank line", "data: x\n", []testEvent{{Data: "x"}}},
		{"no trailing newline", "data: x", []testEvent{{Data: "x"}}},
		{"no trailing newline after CR", "data: x\r", []testEvent{{Data: "x"}}},
		{"last event unterminated", "data: a\n\ndata: b", []testEvent{{Data: "a"}, {Data: "b"}}},
		{"unterminated event without data", "data: a\n\nevent: x\n", []testEvent{{Data: "a"}}},
		{"BOM", "\xEF\xBB\xBFdata: x\n\n", []testEvent{{Data: "x"}}},
		{"BOM only", "\xEF\xBB\xBF", nil},
		{"second BOM is not skipped", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", []testEvent{{Data: "y"}}},
		{"partial BOM", "\xEF\xBBdata: x\n\n", nil},
		{"field without colon", "data\n\n", []testEvent{{Data: ""}}},
		{"no space after colon", "data:x\n\n", []testEvent{{Data: "x"}}},
		{"only one space stripped", "data:  x \n\n", []testEvent{{Data: " x "}}},
		{"tab is not stripped", "data:\tx\n\n", []testEvent{{Data: "\tx"}}},
		{"empty value", "data:\n\n", []testEvent{{Data: ""}}},
		{"colon in value", "data: {\"a\":1}\n\n", []testEvent{{Data: `{"a":1}`}}},
		{"field names are case-sensitive", "Data: x\n\n", nil},
		{"space before colon", "data : x\n\n", nil},
		{"event type", "event: add\ndata: 1\n\n", []testEvent{{Event: "add", Data: "1"}}},
		{"event type resets after dispatch", "event: add\ndata: 1\n\ndata: 2\n\n", []testEvent{{Event: "add", Data: "1"}, {Data: "2"}}},
		{"event without data is skipped", "event: ping\n\ndata: x\n\n", []testEvent{{Data: "x"}}},
		{"last event type wins", "event: a\nevent: b\ndata: x\n\n", []testEvent{{Event: "b", Data: "x"}}},
		{"id carries over", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []testEvent{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}, {Data: "c"}}},
		{"id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []testEvent{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}}},
		{"id without data sets the last id", "id: 7\n\ndata: a\n\n", []testEvent{{Data: "a", ID: "7"}}},
		{"retry and unknown fields ignored", "retry: 1000\nfoo: bar\ndata: x\n\n", []testEvent{{Data: "x"}}},
		{"OpenAI stream", "data: " + chunk + "\n\ndata: [DONE]\n\n", []testEvent{{Data: chunk}, {Data: "[DONE]"}}},
		{
			"Anthropic stream",
			"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			[]testEvent{
				{Event: "message_start", Data: `{"type":"message_start"}`},
				{Event: "ping", Data: `{"type": "ping"}`},
				{Event: "message_stop", Data: `{"type":"message_stop"}`},
			},
		},
	}
	for _, tt := range tests {
		for _, c := range chunkings {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				got, err := readAll(NewReader(c.wrap(strings.NewReader(tt.in)), 0))
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestReaderLongLines(t *testing.T) {
	// Lines longer than the initial buffer, split across many reads, and
	// CR-only lines after them, exercise buffer growth and compaction.
	long := strings.Repeat("x", 3*initialBufferSize+17)
	var in strings.Builder
	var want []testEvent
	for i := range 20 {
		d := long[:i*len(long)/19]
		in.WriteString("data: " + d + "\r\r: comment\ndata: " + d + "\r\n\r\n")
		want = append(want, testEvent{Data: d}, testEvent{Data: d})
	}
	for _, c := range chunkings {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(NewReader(c.wrap(strings.NewReader(in.String())), len(long)))
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReaderIncremental checks that Next returns an event as soon as its
// blank line has been read, while the writer of the stream is blocked.
func TestReaderIncremental(t *testing.T) {
	for _, end := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		t.Run(strings.NewReplacer("\r", "CR", "\n", "LF").Replace(end), func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pr.Close()
			next := make(chan struct{})
			go func() {
				defer pw.Close()
				for _, d := range []string{"one", "two"} {
					if _, err := io.WriteString(pw, "data: "+d+end); err != nil {
						return
					}
					// Write nothing more until the test has seen the event.
					if _, ok := <-next; !ok {
						return
					}
				}
			}()
			defer close(next)

			r := NewReader(pr, 0)
			for _, want := range []string{"one", "two"} {
				got := nextWithin(t, r)
				if string(got.Data) != want {
					t.Fatalf("got data %q, want %q", got.Data, want)
				}
				next <- struct{}{}
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("got error %v, want io.EOF", err)
			}
		})
	}
}

// nextWithin calls r.Next and fails the test if it has not returned in a
// generous time: it would block forever if Next read past the event.
func nextWithin(t *testing.T, r *Reader) Event {
	t.Helper()
	type result struct {
		ev  Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		ev, err := r.Next()
		done <- result{ev, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("got error %v, want an event", res.err)
		}
		return res.ev
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return an event whose blank line had been written: it is waiting for more input")
		return Event{}
	}
}

func TestReaderLimit(t *testing.T) {
	const max = 10
	tests := []struct {
		name    string
		in      string
		want    []testEvent
		wantErr error
	}{
		{"data at the limit", "data: " + strings.Repeat("a", max) + "\n\n", []testEvent{{Data: strings.Repeat("a", max)}}, nil},
		{"data over the limit", "data: ok\n\ndata: " + strings.Repeat("a", max+1) + "\n\n", []testEvent{{Data: "ok"}}, ErrEventTooLarge},
		{"lines at the limit together", "data: aaaaa\ndata: aaaa\n\n", []testEvent{{Data: "aaaaa\naaaa"}}, nil},
		{"lines over the limit together", "data: aaaaa\ndata: aaaaa\n\n", nil, ErrEventTooLarge},
		{"many small lines", "data: a\n" + strings.Repeat("data\n", max) + "\n", nil, ErrEventTooLarge},
		{"long comment line", ":" + strings.Repeat("c", max+fieldAllowance+1) + "\ndata: x\n\n", nil, ErrEventTooLarge},
		{"long unterminated line", "data: " + strings.Repeat("a", max+fieldAllowance+1), nil, ErrEventTooLarge},
		{"many comment lines", strings.Repeat(": comment\n", 1000) + "data: x\n\n", []testEvent{{Data: "x"}}, nil},
		{"many events", strings.Repeat("data: 0123456789\n\n", 1000), repeat(testEvent{Data: "0123456789"}, 1000), nil},
	}
	for _, tt := range tests {
		for _, c := range chunkings {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				r := NewReader(c.wrap(strings.NewReader(tt.in)), max)
				got, err := readAll(r)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got error %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events mismatch (-want +got):\n%s", diff)
				}
				if _, err2 := r.Next(); err2 != err && !(err == nil && err2 == io.EOF) {
					t.Errorf("got error %v on the next call, want the same error %v again", err2, err)
				}
			})
		}
	}
}

func repeat(ev testEvent, n int) []testEvent {
	evs := make([]testEvent, n)
	for i := range evs {
		evs[i] = ev
	}
	return evs
}

// endless is a reader that never ends and never sends a line break.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += len(p)
	return len(p), nil
}

func TestReaderEndlessLineIsBounded(t *testing.T) {
	const max = 1 << 16
	for _, prefix := range []string{"data: ", ":", ""} {
		src := &endless{}
		r := NewReader(io.MultiReader(strings.NewReader(prefix), src), max)
		if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("prefix %q: got error %v, want ErrEventTooLarge", prefix, err)
		}
		if got, limit := cap(r.buf)+cap(r.data), 2*(max+fieldAllowance+minReadSize); got > limit {
			t.Errorf("prefix %q: reader holds %d bytes, want at most %d", prefix, got, limit)
		}
		if src.n > 2*max {
			t.Errorf("prefix %q: read %d bytes before giving up, want at most %d", prefix, src.n, 2*max)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	t.Run("read error discards the open event", func(t *testing.T) {
		in := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
		got, err := readAll(NewReader(in, 0))
		if err != boom {
			t.Fatalf("got error %v, want %v", err, boom)
		}
		if diff := cmp.Diff([]testEvent{{Data: "a"}}, got); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("unexpected EOF is not a clean end", func(t *testing.T) {
		in := io.MultiReader(strings.NewReader("data: a"), iotest.ErrReader(io.ErrUnexpectedEOF))
		if _, err := NewReader(in, 0).Next(); err != io.ErrUnexpectedEOF {
			t.Fatalf("got error %v, want io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("no progress", func(t *testing.T) {
		in := readerFunc(func([]byte) (int, error) { return 0, nil })
		if _, err := NewReader(in, 0).Next(); err != io.ErrNoProgress {
			t.Fatalf("got error %v, want io.ErrNoProgress", err)
		}
	})
	t.Run("invalid count", func(t *testing.T) {
		in := readerFunc(func(p []byte) (int, error) { return len(p) + 1, nil })
		if _, err := NewReader(in, 0).Next(); err == nil {
			t.Fatal("got no error from a reader claiming more bytes than it was given")
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestReaderDataIsCapped(t *testing.T) {
	for _, in := range []string{"data: a\n\ndata: b\n\n", "data: a\ndata: a\n\ndata: b\n\n"} {
		r := NewReader(strings.NewReader(in), 0)
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		_ = append(ev.Data, "XXXXXXXX"...)
		ev, err = r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Data) != "b" {
			t.Errorf("input %q: after appending to the first event's Data, got second Data %q, want %q", in, ev.Data, "b")
		}
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("event: e\nid: 1\ndata: a\n\ndata: open"), 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Reset(strings.NewReader("data: b\n\n"))
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]testEvent{{Data: "b"}}, got); diff != "" {
		t.Errorf("events after Reset mismatch (-want +got):\n%s", diff)
	}
}

func TestReaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for name, stream := range map[string][]byte{
		"openai":    openAIStream(50),
		"anthropic": anthropicStream(50),
	} {
		r := NewReader(bytes.NewReader(stream), 0)
		src := bytes.NewReader(stream)
		readAllEvents := func() {
			src.Reset(stream)
			r.Reset(src)
			for {
				if _, err := r.Next(); err != nil {
					return
				}
			}
		}
		readAllEvents() // grow the buffers and intern the event names
		if got := testing.AllocsPerRun(100, readAllEvents); got != 0 {
			t.Errorf("%s: got %v allocations per stream in steady state, want 0", name, got)
		}
	}
}
