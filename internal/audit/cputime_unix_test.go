//go:build unix

package audit_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time so far (user and system): benchmarks
// report it per op besides the wall time, which other processes on a
// shared machine make noisy.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
