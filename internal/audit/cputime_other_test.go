//go:build !unix

package audit_test

import "time"

// cpuTime is not measured here: benchmarks report 0 CPU per op.
func cpuTime() time.Duration { return 0 }
