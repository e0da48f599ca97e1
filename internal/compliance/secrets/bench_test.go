package secrets

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkDetect4KB scans 4 KB texts: prose about keys and tokens with
// three secrets in it, a support post with code, a .env file and logs (one
// key), the prose with its secrets removed, and a worst case: a JSON dump
// of some 90 random tokens and secrets. Besides the mean it reports
// the median and the 99th percentile of a call's CPU time on its thread
// (CLOCK_THREAD_CPUTIME_ID): wall-clock percentiles on a shared machine
// measure the neighbours.
func BenchmarkDetect4KB(b *testing.B) {
	d := MustNew()
	for _, name := range []string{"prose", "code", "clean", "dense"} {
		text := load4KB(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			times := make([]int64, 0, 1<<16)
			var dst = d.Detect(text, nil)
			for b.Loop() {
				start := threadCPU()
				dst = d.Detect(text, dst[:0])
				if len(times) < cap(times) {
					times = append(times, threadCPU()-start)
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2]), "p50-cpu-ns")
			b.ReportMetric(float64(times[len(times)*99/100]), "p99-cpu-ns")
		})
	}
}

// threadCPU is the CPU time the calling thread has used, in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// load4KB returns a 4096-byte text: testdata/<name>.txt repeated and cut
// ("clean" is prose.txt without its secrets).
func load4KB(tb testing.TB, name string) string {
	if name == "dense" {
		f := newFaker(3)
		var b strings.Builder
		b.WriteString("[")
		for b.Len() < 4096 {
			fmt.Fprintf(&b, `{"id":%s,"token":"%s","secret":"%s"},`, f.num(6), f.str(alnum, 24), f.str(alnum, 24))
		}
		return b.String()[:4096]
	}
	file := name
	if name == "clean" {
		file = "prose"
	}
	b, err := os.ReadFile("testdata/" + file + ".txt")
	if err != nil {
		tb.Fatal(err)
	}
	text := string(b)
	if name == "clean" {
		lines := strings.Split(text, "\n")
		lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "    ") })
		text = strings.Join(lines, "\n")
	}
	for len(text) < 4096 {
		text += "\n\n" + text
	}
	return text[:4096]
}
