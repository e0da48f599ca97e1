//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package spool

import "os"

// flock does nothing where flock(2) is missing: one process per data dir
// there (Linux is the target).
func flock(*os.File) error { return nil }
