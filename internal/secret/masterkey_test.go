package secret

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestParseMasterKey(t *testing.T) {
	var want MasterKey
	for i := range want {
		want[i] = byte(i + 1)
	}
	passphrase := "correct horse battery staple, twice as long"
	tests := []struct {
		name    string
		in      string
		want    MasterKey // zero: derived, checked separately
		wantErr bool
	}{
		{name: "hex", in: hex.EncodeToString(want[:]), want: want},
		{name: "hex upper with newline", in: strings.ToUpper(hex.EncodeToString(want[:])) + "\n", want: want},
		{name: "base64 std", in: base64.StdEncoding.EncodeToString(want[:]), want: want},
		{name: "base64 url", in: base64.URLEncoding.EncodeToString(want[:]), want: want},
		{name: "base64 raw std", in: base64.RawStdEncoding.EncodeToString(want[:]), want: want},
		{name: "base64 raw url", in: base64.RawURLEncoding.EncodeToString(want[:]), want: want},
		{name: "passphrase", in: passphrase},
		{name: "empty", in: "", wantErr: true},
		{name: "short", in: "short-passphrase", wantErr: true},
		{name: "31 chars", in: strings.Repeat("x", 31), wantErr: true},
		{name: "all-zero hex", in: strings.Repeat("0", 64), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMasterKey(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseMasterKey(%q): got no error, want one", tt.in)
				}
				if tt.in != "" && strings.Contains(err.Error(), tt.in) {
					t.Errorf("error %q contains the value", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMasterKey: got error %v, want none", err)
			}
			if tt.want != (MasterKey{}) && got != tt.want {
				t.Errorf("got key %x, want %x", got[:], tt.want[:])
			}
			if got == (MasterKey{}) {
				t.Errorf("got the zero key")
			}
		})
	}
}

func TestParseMasterKeyPassphrase(t *testing.T) {
	a1, err := ParseMasterKey("a passphrase of at least thirty-two characters")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := ParseMasterKey("  a passphrase of at least thirty-two characters\n")
	b, _ := ParseMasterKey("a passphrase of at least thirty-two characterz")
	if a1 != a2 {
		t.Errorf("same passphrase (modulo white space) derived different keys")
	}
	if a1 == b {
		t.Errorf("different passphrases derived the same key")
	}
	// 44 characters that are not valid base64 are a passphrase, not an error.
	if _, err := ParseMasterKey(strings.Repeat("!", 44)); err != nil {
		t.Errorf("44-char non-base64 passphrase: got error %v, want none", err)
	}
}

func TestParseMasterKeyErrorSaysWhatIsAccepted(t *testing.T) {
	_, err := ParseMasterKey("tooshort")
	if err == nil {
		t.Fatal("got no error, want one")
	}
	for _, want := range []string{"64 hex", "base64", "32 bytes", "passphrase", "32 characters"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "tooshort") {
		t.Errorf("error %q contains the value", err)
	}
}

func TestMasterKeyNeverPrints(t *testing.T) {
	var k MasterKey
	for i := range k {
		k[i] = 0xAB
	}
	var logged strings.Builder
	// Without the time: a timestamp may hold "171" (11:58:44.871713…).
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewTextHandler(&logged, noTime)).Info("x", "key", k)
	slog.New(slog.NewJSONHandler(&logged, noTime)).Info("x", "key", k)
	js, err := json.Marshal(struct{ K MasterKey }{k})
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{
		fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %x %X %d %q", k, k, k, k, k, k, k, k),
		fmt.Sprintf("%v %#v", &k, []MasterKey{k}), string(js), logged.String(),
	}
	for _, out := range outs {
		if strings.Contains(strings.ToLower(out), "abab") || strings.Contains(out, "171") {
			t.Errorf("output %q shows key bytes", out)
		}
	}
}
