package secret

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testSealer(t testing.TB, seed byte) *Sealer {
	t.Helper()
	var k MasterKey
	for i := range k {
		k[i] = seed + byte(i)
	}
	return NewSealer(k)
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := testSealer(t, 1)
	for _, pt := range [][]byte{nil, {}, []byte("x"), []byte("sk-proj-" + strings.Repeat("a", 150)), bytes.Repeat([]byte{0}, 4096)} {
		for _, aad := range [][]byte{nil, []byte("openai")} {
			sealed, err := s.Seal(pt, aad)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(sealed), minSealed+len(pt); got != want {
				t.Errorf("sealed length: got %d, want %d", got, want)
			}
			got, err := s.Open(sealed, aad)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(got, pt) {
				t.Errorf("Open: got %q, want %q", got, pt)
			}
		}
	}
}

func TestSealIsRandomized(t *testing.T) {
	s := testSealer(t, 1)
	a, _ := s.Seal([]byte("same"), []byte("p"))
	b, _ := s.Seal([]byte("same"), []byte("p"))
	if bytes.Equal(a, b) {
		t.Errorf("two seals of the same plaintext are identical")
	}
}

func TestOpenRejects(t *testing.T) {
	s := testSealer(t, 1)
	other := testSealer(t, 2)
	sealed, err := s.Seal([]byte("sk-secret-value"), []byte("openai"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name    string
		sealer  *Sealer
		blob    []byte
		aad     string
		wantErr error
	}{
		{"wrong aad", s, sealed, "anthropic", ErrDecrypt},
		{"nil aad", s, sealed, "", ErrDecrypt},
		{"wrong master key", other, sealed, "openai", ErrDecrypt},
		{"tampered wrap nonce", s, flip(1), "openai", ErrDecrypt},
		{"tampered wrapped key", s, flip(20), "openai", ErrDecrypt},
		{"tampered payload nonce", s, flip(headerSize), "openai", ErrDecrypt},
		{"tampered ciphertext", s, flip(len(sealed) - 1), "openai", ErrDecrypt},
		{"unknown version", s, flip(0), "openai", ErrFormat},
		{"empty", s, nil, "openai", ErrFormat},
		{"truncated", s, sealed[:minSealed-1], "openai", ErrFormat},
		{"truncated to header", s, sealed[:headerSize], "openai", ErrFormat},
		{"payload truncated", s, sealed[:len(sealed)-1], "openai", ErrDecrypt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sealer.Open(tt.blob, []byte(tt.aad))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("got plaintext %q with an error", got)
			}
			if strings.Contains(err.Error(), "sk-secret-value") {
				t.Errorf("error %q contains the plaintext", err)
			}
		})
	}
}

// Blobs must not be movable between records: swapping the payload of one
// blob onto the wrapped key of another fails even with the same aad.
func TestOpenRejectsSpliced(t *testing.T) {
	s := testSealer(t, 1)
	a, _ := s.Seal([]byte("key-a-0123456789"), []byte("p"))
	b, _ := s.Seal([]byte("key-b-0123456789"), []byte("p"))
	spliced := append(bytes.Clone(a[:headerSize]), b[headerSize:]...)
	if _, err := s.Open(spliced, []byte("p")); !errors.Is(err, ErrDecrypt) {
		t.Errorf("spliced blob: got %v, want ErrDecrypt", err)
	}
}

func TestSealedDoesNotContainPlaintext(t *testing.T) {
	s := testSealer(t, 1)
	secret := []byte("sk-proj-RECOGNISABLE-0123456789")
	sealed, _ := s.Seal(secret, []byte("openai"))
	if bytes.Contains(sealed, secret) || bytes.Contains(sealed, []byte("RECOGNISABLE")) {
		t.Errorf("sealed blob contains the plaintext")
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d"} {
		if got, want := fmt.Sprintf(verb, s), "secret.Sealer[redacted]"; got != want {
			t.Errorf("Sprintf(%q, sealer): got %q, want %q", verb, got, want)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s := testSealer(b, 1)
	sealed, _ := s.Seal([]byte("sk-proj-"+strings.Repeat("a", 150)), []byte("openai"))
	for b.Loop() {
		if _, err := s.Open(sealed, []byte("openai")); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	s := testSealer(f, 1)
	valid, _ := s.Seal([]byte("sk-test-key"), []byte("openai"))
	f.Add(valid, []byte("openai"))
	f.Add(valid[:minSealed], []byte("openai"))
	f.Add([]byte{}, []byte(nil))
	f.Add([]byte{version1}, []byte("x"))
	f.Add(bytes.Repeat([]byte{version1}, minSealed), []byte(""))
	f.Add([]byte{2, 0, 0}, []byte("openai"))
	f.Fuzz(func(t *testing.T, blob, aad []byte) {
		pt, err := s.Open(blob, aad)
		if err == nil {
			// Only a blob sealed by the seed (in this or the coordinating
			// process) can open; anything else would be a forgery.
			if string(aad) != "openai" || string(pt) != "sk-test-key" {
				t.Fatalf("Open accepted a blob it did not seal: %x", blob)
			}
			return
		}
		if !errors.Is(err, ErrDecrypt) && !errors.Is(err, ErrFormat) {
			t.Fatalf("got error %v, want ErrDecrypt or ErrFormat", err)
		}
		if pt != nil {
			t.Fatalf("got plaintext with error %v", err)
		}
	})
}
