//go:build !unix

package bridge_test

import "time"

// cpuTime is not measured here: benchmarks report 0 CPU per op.
func cpuTime() time.Duration { return 0 }
