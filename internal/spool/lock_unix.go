//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flock takes f's exclusive lock without waiting: ErrLocked when another
// open file description holds it (another process, or another Open of the
// same directory in this one). The lock ends when f is closed, or when the
// process dies.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return fmt.Errorf("spool: lock: %w", err)
	}
}
