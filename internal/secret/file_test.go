package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateCreatesThenLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k1, created, err := LoadOrCreate(dir, "")
	if err != nil {
		t.Fatalf("first LoadOrCreate: %v", err)
	}
	if !created {
		t.Errorf("first LoadOrCreate: got created false, want true")
	}
	if k1 == (MasterKey{}) {
		t.Errorf("first LoadOrCreate: got the zero key")
	}
	st, err := os.Stat(filepath.Join(dir, MasterKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode: got %04o, want 0600", got)
	}
	dst, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := dst.Mode().Perm(); got != 0o700 {
		t.Errorf("data dir mode: got %04o, want 0700", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data dir holds %d entries, want 1 (temporary file left behind?)", len(entries))
	}

	k2, created, err := LoadOrCreate(dir, "")
	if err != nil {
		t.Fatalf("second LoadOrCreate: %v", err)
	}
	if created {
		t.Errorf("second LoadOrCreate: got created true, want false")
	}
	if k1 != k2 {
		t.Errorf("second LoadOrCreate returned a different key")
	}
}

func TestLoadOrCreateEnvWins(t *testing.T) {
	dir := t.TempDir()
	want, _ := ParseMasterKey(strings.Repeat("ab", 32))
	got, created, err := LoadOrCreate(dir, strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	if got != want || created {
		t.Errorf("got (%x, %v), want (%x, false)", got[:], created, want[:])
	}
	if _, err := os.Stat(filepath.Join(dir, MasterKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("env key given but %s was touched (stat error %v)", MasterKeyFile, err)
	}
	if _, _, err := LoadOrCreate(dir, "short"); err == nil {
		t.Errorf("invalid env value: got no error, want one")
	}
}

func TestLoadOrCreateRefusesLoosePermissions(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := LoadOrCreate(dir, ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, MasterKeyFile)
	content, _ := os.ReadFile(path)
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o644} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadOrCreate(dir, "")
		if err == nil {
			t.Fatalf("mode %04o: got no error, want one", mode)
		}
		if !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: error %q does not say to chmod 600", mode, err)
		}
		if strings.Contains(err.Error(), strings.TrimSpace(string(content))) {
			t.Errorf("error %q contains the key", err)
		}
	}
}

func TestLoadOrCreateBadFile(t *testing.T) {
	for name, content := range map[string]string{
		"empty":     "\n",
		"not hex":   strings.Repeat("zz", 32),
		"too short": "abcd",
		"all zero":  strings.Repeat("0", 64),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, MasterKeyFile), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := LoadOrCreate(dir, ""); err == nil {
				t.Errorf("got no error, want one")
			} else if strings.TrimSpace(content) != "" && strings.Contains(err.Error(), strings.TrimSpace(content)) {
				t.Errorf("error %q contains the file content", err)
			}
		})
	}
}

func TestLoadOrCreateConcurrentAgree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	const n = 16
	keys := make([]MasterKey, n)
	created := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], created[i], errs[i] = LoadOrCreate(dir, "") })
	}
	wg.Wait()
	creators := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if keys[i] != keys[0] {
			t.Errorf("call %d got a different key than call 0", i)
		}
		if created[i] {
			creators++
		}
	}
	if creators != 1 {
		t.Errorf("%d calls reported created, want 1", creators)
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	gen := func() (string, error) { calls++; return "sk-svc-generated", nil }
	v, created, err := LoadOrCreateToken(dir, "admin_api_key", gen)
	if err != nil || !created || v != "sk-svc-generated" {
		t.Fatalf("first call: got (%q, %v, %v), want (sk-svc-generated, true, nil)", v, created, err)
	}
	v, created, err = LoadOrCreateToken(dir, "admin_api_key", gen)
	if err != nil || created || v != "sk-svc-generated" || calls != 1 {
		t.Fatalf("second call: got (%q, %v, %v) after %d gen calls, want (sk-svc-generated, false, nil) after 1",
			v, created, err, calls)
	}

	genErr := errors.New("no entropy")
	if _, _, err := LoadOrCreateToken(dir, "other", func() (string, error) { return "", genErr }); !errors.Is(err, genErr) {
		t.Errorf("gen error: got %v, want it wrapped", err)
	}
	if _, _, err := LoadOrCreateToken(dir, "blank", func() (string, error) { return " x ", nil }); err == nil {
		t.Errorf("gen value with white space: got no error, want one")
	}
	for _, name := range []string{"", ".", "..", "a/b", "../x", `a\b`} {
		if _, _, err := LoadOrCreateToken(dir, name, gen); err == nil {
			t.Errorf("name %q: got no error, want one", name)
		}
	}
	if _, _, err := LoadOrCreateToken("", "x", gen); err == nil {
		t.Errorf("empty data dir: got no error, want one")
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateToken(dir, "adir", gen); err == nil {
		t.Errorf("directory in place of the file: got no error, want one")
	}
}
