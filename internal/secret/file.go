package secret

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// MasterKeyFile is the name of the generated master key file in the data
// directory. It holds the key as 64 hex characters.
const MasterKeyFile = "master.key"

// maxTokenFile bounds how much of a token file is read.
const maxTokenFile = 64 << 10

// LoadOrCreate returns the master key. A non-empty envValue (SVC_MASTER_KEY)
// is parsed with ParseMasterKey and the data directory is not touched.
// Otherwise the key is read from <dataDir>/master.key (64 hex characters),
// which is created with a fresh random key if it does not exist; created
// reports that. The file rules are those of LoadOrCreateToken.
func LoadOrCreate(dataDir, envValue string) (key MasterKey, created bool, err error) {
	if envValue != "" {
		key, err = ParseMasterKey(envValue)
		return key, false, err
	}
	v, created, err := LoadOrCreateToken(dataDir, MasterKeyFile, func() (string, error) {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		defer clear(b[:])
		return hex.EncodeToString(b[:]), nil
	})
	if err != nil {
		return MasterKey{}, false, err
	}
	if len(v) != 2*len(key) || !decodeHex(key[:], v) {
		return MasterKey{}, false, fmt.Errorf("secret: %s must hold 64 hex characters",
			filepath.Join(dataDir, MasterKeyFile))
	}
	if key == (MasterKey{}) {
		return MasterKey{}, false, fmt.Errorf("secret: %s holds an all-zero key",
			filepath.Join(dataDir, MasterKeyFile))
	}
	return key, created, nil
}

// LoadOrCreateToken returns the secret held in the file <dataDir>/<name>
// (surrounding white space trimmed). If the file does not exist, gen makes a
// value and it is written with mode 0600 (the directory is created with mode
// 0700), atomically: a temporary file is written and synced, then hard-linked
// into place, so a reader never sees a partial file and two processes starting
// together agree on one value (the loser reads the winner's file). created
// reports that this call wrote the file.
//
// An existing file that group or others may access is refused, with an error
// that says to chmod 600 it; so is one that is not a regular file or is empty.
// Errors name the file, never its content.
func LoadOrCreateToken(dataDir, name string, gen func() (string, error)) (value string, created bool, err error) {
	if dataDir == "" {
		return "", false, errors.New("secret: data directory is not set")
	}
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || strings.ContainsAny(name, `/\`) {
		return "", false, fmt.Errorf("secret: invalid secret file name %q", name)
	}
	path := filepath.Join(dataDir, name)
	v, err := readToken(path)
	if err == nil {
		return v, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}

	v, err = gen()
	if err != nil {
		return "", false, fmt.Errorf("secret: generate %s: %w", path, err)
	}
	if v == "" || strings.TrimSpace(v) != v {
		return "", false, fmt.Errorf("secret: generated value for %s is empty or has surrounding white space", path)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("secret: create data directory: %w", err)
	}
	won, err := writeNew(path, v)
	if err != nil {
		return "", false, err
	}
	if !won {
		// Another process created it first: use its value.
		v, err = readToken(path)
		return v, false, err
	}
	return v, true, nil
}

// readToken reads a secret file, checking its type and permissions. A missing
// file yields an error matching fs.ErrNotExist.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("secret: open secret file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("secret: stat secret file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("secret: %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("secret: %s is accessible by group or others (mode %04o); run chmod 600 %s",
			path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	defer clear(b)
	if err != nil {
		return "", fmt.Errorf("secret: read %s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("secret: %s is larger than %d bytes", path, maxTokenFile)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("secret: %s is empty", path)
	}
	return v, nil
}

// writeNew installs value at path unless a file is already there; won reports
// that this call installed it.
func writeNew(path, value string) (won bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("secret: create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := writeSynced(tmp, value); err != nil {
		return false, fmt.Errorf("secret: write temporary file: %w", err)
	}

	// A hard link is the no-clobber form of rename: atomic, and it fails if
	// another process got there first instead of replacing its key.
	err = os.Link(tmpName, path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		// No hard links on this file system: create exclusively instead.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("secret: create secret file: %w", err)
		}
		if err := writeSynced(f, value); err != nil {
			return false, fmt.Errorf("secret: write %s: %w", path, err)
		}
	}
	syncDir(dir)
	return true, nil
}

// writeSynced writes value and a newline to f with mode 0600, syncs and closes it.
func writeSynced(f *os.File, value string) error {
	err := f.Chmod(0o600)
	if runtime.GOOS == "windows" {
		err = nil
	}
	if err == nil {
		_, err = f.WriteString(value + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a new directory entry durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
