package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func testStream(max int64) *stream {
	return &stream{pool: New(Options{MaxResultBytes: max}), id: "svc-1"}
}

// TestStreamReading: the reader takes the answer from an event stream as
// the SDK's client does — priming events and other event names skipped, a
// final event without its blank line still read, the event id recorded
// once its event is read — and bounds one event's data.
func TestStreamReading(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":"svc-1","result":{"content":[]}}`
	for _, c := range []struct {
		name, body string
		want       bool   // the answer found
		lastID     string // the id a resumption starts after
	}{
		{"primed", "id: 1\ndata: \n\nid: 2\ndata: " + answer + "\n\n", true, "2"},
		{"CRLF and a comment", ": hi\r\nevent: message\r\nid: 3\r\ndata: " + answer + "\r\n\r\n", true, "3"},
		{"another event name", "event: ping\ndata: " + answer + "\n\n", false, ""},
		{"data over two lines", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"svc-1\",\"result\":{}}\n\n", true, ""},
		{"no blank line at the end", "id: 4\ndata: " + answer, true, "4"},
		{"ended before the answer", "id: 5\ndata: \n\nid: 6\n", false, "6"},
	} {
		st := testStream(1 << 20)
		m, err := st.read(context.Background(), strings.NewReader(c.body))
		if err != nil || (m != nil) != c.want || st.lastID != c.lastID {
			t.Errorf("%s: answer %v, err %v, last id %q; want answer %v, last id %q", c.name, m != nil, err, st.lastID, c.want, c.lastID)
		}
	}
	st := testStream(1024)
	huge := "data: " + strings.Repeat("x", 40<<10) + "\n"
	_, err := st.read(context.Background(), strings.NewReader(strings.Repeat(huge, 4)+"\n"))
	var tooBig *TooLargeError
	if !errors.As(err, &tooBig) {
		t.Errorf("an event of 160 KiB over a 1 KiB bound: %v, want TooLargeError", err)
	}
}
