package sqlstore_test

import (
	"encoding/json"
	"testing"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

func TestEscapeText(t *testing.T) {
	tests := []struct{ in, text, ascii string }{
		{"plain", "plain", "plain"},
		{"", "", ""},
		{"nul\x00", `nul\x00`, `nul\x00`},
		{"bad\xff\xfe", `bad\xff\xfe`, `bad\xff\xfe`},
		{"café", "café", `caf\u00e9`},
		{"🙂", "🙂", `\U0001f642`},
		{"é\x00\xc3", `é\x00\xc3`, `\u00e9\x00\xc3`},
	}
	for _, tt := range tests {
		text := sqlstore.EscapeText(tt.in)
		if text != tt.text {
			t.Errorf("EscapeText(%q): got %q, want %q", tt.in, text, tt.text)
		}
		if got := sqlstore.ASCIIText(text); got != tt.ascii {
			t.Errorf("ASCIIText(%q): got %q, want %q", text, got, tt.ascii)
		}
	}
}

// TestEscapeJSON checks that an escaped document is valid JSON whose value
// is the caller's (NUL kept, invalid bytes as U+FFFD, as encoding/json
// reads them), in both forms.
func TestEscapeJSON(t *testing.T) {
	tests := []struct {
		in, escaped, ascii string
		value              string // the string value the document decodes to
	}{
		{`"plain"`, `"plain"`, `"plain"`, "plain"},
		{"\"a\x00b\"", `"a\u0000b"`, `"a\u0000b"`, "a\x00b"},
		{"\"x\xffy\"", `"x\ufffdy"`, `"x\ufffdy"`, "x\ufffdy"},
		{`"café 🙂"`, `"café 🙂"`, `"caf\u00e9 \ud83d\ude42"`, "café 🙂"},
	}
	for _, tt := range tests {
		escaped := sqlstore.EscapeJSON([]byte(tt.in))
		if string(escaped) != tt.escaped {
			t.Errorf("EscapeJSON(%q): got %q, want %q", tt.in, escaped, tt.escaped)
		}
		ascii := sqlstore.ASCIIJSON(escaped)
		if string(ascii) != tt.ascii {
			t.Errorf("ASCIIJSON(%q): got %q, want %q", escaped, ascii, tt.ascii)
		}
		for _, doc := range [][]byte{escaped, ascii} {
			var v string
			if err := json.Unmarshal(doc, &v); err != nil || v != tt.value {
				t.Errorf("decoding %q: got %q, %v, want %q", doc, v, err, tt.value)
			}
		}
	}
}
