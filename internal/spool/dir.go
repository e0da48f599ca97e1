package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

const lockName = "lock"

// maxDirs bounds the numbered spools OpenDir tries under one parent.
const maxDirs = 4096

// lockDir creates dir if needed and takes its lock file's lock. A lock file
// removed between its open and its lock (a spool being removed by its
// holder) is opened again.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	for range 8 {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			continue // dir removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, err
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return f, nil
		}
		f.Close() // the file we locked was removed: lock the new one
	}
	return nil, fmt.Errorf("spool: %s keeps being removed", dir)
}

// OpenDir opens this process's spool under parent: parent/<n> for the
// smallest n no other open spool holds. A directory left by a process that
// died is taken over with its frames (they are delivered again).
func OpenDir(parent string, opt Options) (*Spool, error) {
	for n := range maxDirs {
		s, err := Open(filepath.Join(parent, strconv.Itoa(n)), opt)
		if errors.Is(err, ErrLocked) {
			continue
		}
		return s, err
	}
	return nil, fmt.Errorf("spool: %d spools in use under %s", maxDirs, parent)
}

// Orphans opens the spools under parent that no live process holds (their
// owners died, or stopped) and that still hold unacknowledged frames; those
// with none are removed. Each returned spool holds its lock like any other:
// the caller drains it with the same consumer code as its own spool, then
// calls Remove. Locked spools — this process's own, other live processes' —
// are left alone. Options apply to each spool as to Open. A spool that
// fails to open is reported in the error, and the others are still
// returned.
func Orphans(parent string, opt Options) ([]*Spool, error) {
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var nums []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 && e.IsDir() && strconv.Itoa(n) == e.Name() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	var out []*Spool
	var errs []error
	for _, n := range nums {
		s, err := Open(filepath.Join(parent, strconv.Itoa(n)), opt)
		switch {
		case errors.Is(err, ErrLocked):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		if s.Unacked() > 0 {
			out = append(out, s)
			continue
		}
		if err := s.Remove(); err != nil {
			errs = append(errs, err)
			s.Close()
		}
	}
	return out, errors.Join(errs...)
}

// Remove closes the spool and deletes its directory, when every frame is
// acknowledged; ErrNotEmpty (and the spool stays open) otherwise. It is how
// a drained orphan goes; a process's own spool is closed, not removed.
func (s *Spool) Remove() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if n := len(s.frames) - s.head - s.acked; n > 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w: %d", ErrNotEmpty, n)
	}
	s.closed = true
	close(s.wake)
	s.waiters = 0
	segs := s.segs
	s.mu.Unlock()

	errs := []error{s.closeCursor()}
	if s.cur != nil {
		errs = append(errs, s.cur.Close())
		s.cur = nil
	}
	for _, g := range segs {
		errs = append(errs, removeFile(s.segPath(g.seq)))
	}
	for _, name := range []string{cursorName, cursorTemp, lockName} {
		errs = append(errs, removeFile(filepath.Join(s.dir, name)))
	}
	errs = append(errs, os.Remove(s.dir)) // while locked: see lockDir
	errs = append(errs, s.lock.Close())
	s.lock = nil
	return errors.Join(errs...)
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
