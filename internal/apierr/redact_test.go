package apierr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Incorrect API key provided: sk-proj-abc123456789xyz.", "Incorrect API key provided: [redacted]."},
		{"bad key sk-ant-api03-abcdefgh", "bad key [redacted]"},
		{"key AIzaSyA1234567890abcdefghijklmnop is invalid", "key [redacted] is invalid"},
		{"token ya29.a0AfH6SMBx expired", "token [redacted] expired"},
		{"The security token AKIAIOSFODNN7EXAMPLE is invalid", "The security token [redacted] is invalid"},
		{"Authorization: Bearer abc.def.ghi failed", "Authorization: [redacted] failed"},
		{"run a risk-assessment of the task-planner", "run a risk-assessment of the task-planner"},
		{"max_tokens must be at most 4096", "max_tokens must be at most 4096"},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("é", 1500) // 3000 bytes
	if got := Redact(long); !utf8.ValidString(got) || len(got) > maxProviderMessage+len("…") {
		t.Errorf("long message cut to %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
