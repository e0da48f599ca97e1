package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolsCall measures one tools/call by the SDK client, in
// process: direct to the fake upstream, through svc's server endpoint and
// through the aggregate. The difference between a path through svc and
// direct is what svc adds; cpu-ns/op is the process's CPU time per call
// (client, svc and upstream together), which is what counts on a busy
// machine.
func BenchmarkToolsCall(b *testing.B) {
	h := newHarness(b)
	for _, c := range []struct{ name, url, tool string }{
		{"direct", h.up.url, "echo"},
		{"server", h.url + "/fs/mcp/", "echo"},
		{"aggregate", h.url + "/mcp/", "fs__echo"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cs := benchConnect(b, c.url, "sk-good")
			ctx := context.Background()
			run := strconv.FormatInt(benchRuns.Add(1), 10) + "-"
			call := func(i int) {
				// Arguments differ on every call: echo is read-only, and a
				// repeated call would be served by the tool-call cache.
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": run + strconv.Itoa(i)}})
				if err != nil || r.IsError {
					b.Fatalf("call: %v %+v", err, r)
				}
			}
			for i := range 50 {
				call(i) // warm: sessions, tool lists
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				call(i)
				i++
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(i), "cpu-ns/op")
		})
	}
}

// benchRuns numbers the benchmark's runs, so no two calls repeat arguments.
var benchRuns atomic.Int64

func benchConnect(b *testing.B, url, key string) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
	if err != nil {
		b.Fatalf("connect %s: %v", url, err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
