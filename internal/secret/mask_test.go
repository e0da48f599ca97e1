package secret

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMask(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "…"},
		{"sk-abcd", "…"},         // 7 chars
		{"abcdefgh", "ab…"},      // 8 chars: a quarter is 2
		{"sk-abcdefg", "…"},      // 10 chars: "sk-" is more than a quarter
		{"sk-abcdefghi", "sk-…"}, // 12 chars: room for the prefix only
		{"sk-abcdefghijklm", "sk-a…"},
		{"sk-" + strings.Repeat("x", 45), "sk-xxxx…"},
		{"sk-proj-abcdefgh" + strings.Repeat("z", 140), "sk-proj-abcd…"},
		{"sk-proj-abcdefgh", "sk-p…"}, // 16 chars: sk-proj- does not fit, sk- does
		{"sk-ant-api03-" + strings.Repeat("q", 95), "sk-ant-api0…"},
		{"sk-svc-0123456789abcdef" + strings.Repeat("0", 32), "sk-svc-0123…"},
		{"AIzaSyA-0123456789abcdefghijklmnopqrstu", "AIza…"},
		{"gsk_abcdefghijklmnop", "gsk_…"},
		{"ééééééééééééééééé", "éééé…"}, // runes, not bytes
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Mask(tt.in); got != tt.want {
				t.Errorf("Mask(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// checkMask asserts Mask's promises for any input.
func checkMask(t *testing.T, s string) {
	t.Helper()
	got := Mask(s)
	shown, ok := strings.CutSuffix(got, "…")
	if !ok {
		t.Fatalf("Mask(%q) = %q: does not end with …", s, got)
	}
	if !strings.HasPrefix(s, shown) {
		t.Fatalf("Mask(%q) = %q: not a prefix of the secret", s, got)
	}
	n := utf8.RuneCountInString(s)
	if shownN := utf8.RuneCountInString(shown); shownN > n/4 {
		t.Fatalf("Mask(%q) = %q: shows %d of %d characters, more than a quarter", s, got, shownN, n)
	}
	if n < 8 && shown != "" {
		t.Fatalf("Mask(%q) = %q: shows characters of a secret shorter than 8", s, got)
	}
	rest := shown
	for _, p := range knownPrefixes {
		if r, ok := strings.CutPrefix(shown, p); ok {
			rest = r
			break
		}
	}
	if utf8.RuneCountInString(rest) > 4 {
		t.Fatalf("Mask(%q) = %q: reveals more than 4 characters after the prefix", s, got)
	}
}

func FuzzMask(f *testing.F) {
	for _, s := range []string{"", "sk-", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789abcdef", "ab\xffcdefgh", "日本語のキーです日本語のキーです"} {
		f.Add(s)
	}
	f.Fuzz(checkMask)
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"sk-svc-abc", "sk-svc-abc", true},
		{"sk-svc-abc", "sk-svc-abd", false},
		{"sk-svc-abc", "sk-svc-ab", false},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%q, %q): got %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
