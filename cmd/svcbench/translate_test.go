package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/provider"
)

func TestTranslateMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three benchmarks")
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"translate"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, row := range []string{"openai (passthrough)", "anthropic messages", "bedrock converse-stream", "responses: openai (relay)", "responses: openai chat", "responses: anthropic"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("output lacks %q:\n%s", row, out.String())
		}
	}
}

// The generated streams are what the adapters accept: each decodes to its
// deltas without error.
func TestTranslateStreamsDecode(t *testing.T) {
	for _, c := range translateCases(5) {
		var n int
		s := c.decode(io.NopCloser(bytes.NewReader(c.stream)), &provider.StreamInfo{Model: "m"})
		for {
			if _, err := s.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s: %v after %d chunks", c.name, err, n)
				}
				break
			}
			n++
		}
		if n < 5 {
			t.Errorf("%s: %d chunks, want at least the 5 deltas", c.name, n)
		}
	}
}
