package sse

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// parseReference is a plain transcription of the specification's parsing
// algorithm (plus the dispatch of an open event at the end of the stream),
// written for clarity rather than speed, for the fuzz test to compare
// the Reader against.
func parseReference(in []byte) []testEvent {
	s := strings.TrimPrefix(string(in), "\uFEFF")
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	var (
		evs     []testEvent
		data    strings.Builder
		hasData bool
		typ, id string
	)
	dispatch := func() {
		if hasData {
			evs = append(evs, testEvent{typ, strings.TrimSuffix(data.String(), "\n"), id})
		}
		data.Reset()
		hasData, typ = false, ""
	}
	for _, line := range lines {
		if line == "" {
			dispatch()
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	dispatch()
	return evs
}

// normalizeLineBreaks turns CRLF and CR into LF, as a write and a read do.
func normalizeLineBreaks(b []byte) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(b))
}

func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"",
		"data: hello\n\n",
		"data: a\r\n\r\ndata: b\r\n\r\n",
		"data: a\r\rdata: b\r\r",
		"data: a\r\ndata: b\rdata: c\n\n",
		": comment\n\ndata: x\n: c\n\n",
		"data: x",
		"\xEF\xBB\xBFdata: x\n\n",
		"\xEF\xBB",
		"data\n\ndata:x\n\ndata:  x\n\n",
		"event: add\ndata: 1\n\nevent: ping\n\ndata: 2\n\n",
		"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\nid\ndata: c\n\n",
		"retry: 10\nfoo: bar\ndata: x\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
		"data: " + strings.Repeat("x", 100) + "\r\n" + strings.Repeat("\r", 50),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := parseReference(in)

		// Without a limit in the way, the Reader agrees with the reference
		// however its input is split into reads.
		for _, c := range chunkings[:3] {
			got, err := readAll(NewReader(c.wrap(bytes.NewReader(in)), len(in)+1))
			if err != nil {
				t.Fatalf("%s: got error %v, want none", c.name, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: events differ from the reference (-want +got):\n%s", c.name, diff)
			}
		}

		// With a small limit, it returns a prefix of the same events, none
		// larger than the limit, and then either the end or ErrEventTooLarge.
		const limit = 8
		got, err := readAll(NewReader(bytes.NewReader(in), limit))
		if err != nil && !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("limit %d: got error %v, want none or ErrEventTooLarge", limit, err)
		}
		if len(got) > len(want) || (err == nil && len(got) != len(want)) {
			t.Fatalf("limit %d: got %d events, want %d", limit, len(got), len(want))
		}
		if diff := cmp.Diff(want[:len(got)], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("limit %d: events differ from the reference (-want +got):\n%s", limit, diff)
		}
		for _, ev := range got {
			if len(ev.Data) > limit {
				t.Fatalf("limit %d: got an event with %d bytes of data", limit, len(ev.Data))
			}
		}

		// Writing the events and reading them back preserves them (the ID
		// aside: the reader carries it over, the writer omits an empty one).
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, ev := range want {
			if err := w.WriteEvent(Event{Event: ev.Event, Data: []byte(ev.Data)}); err != nil {
				t.Fatalf("writing %+v: %v", ev, err)
			}
		}
		// And the input itself, taken as one event's data, comes back with
		// its line breaks as LF.
		if err := w.WriteData(in); err != nil {
			t.Fatal(err)
		}
		back, err := readAll(NewReader(iotest.HalfReader(&buf), 0))
		if err != nil {
			t.Fatalf("reading written events: %v", err)
		}
		if len(back) != len(want)+1 {
			t.Fatalf("got %d events back, want %d", len(back), len(want)+1)
		}
		for i, ev := range want {
			if back[i].Event != ev.Event || back[i].Data != ev.Data {
				t.Fatalf("event %d: got back %+v, want %+v", i, back[i], ev)
			}
		}
		if got, want := back[len(back)-1].Data, normalizeLineBreaks(in); got != want {
			t.Fatalf("got data %q back, want %q", got, want)
		}
	})
}
