package health

import (
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/memkv"
)

// BenchmarkStartEnd is the request path's cost: a call started and ended,
// with every model known and with a Known hook over a map (the price
// table's shape).
func BenchmarkStartEnd(b *testing.B) {
	known := map[string]bool{"openai\x00gpt-4o": true}
	for name, tr := range map[string]*Tracker{
		"all-known": New(memkv.New(), quiet()),
		"known-map": New(memkv.New(), quiet()).Known(func(p, m string) bool { return known[p+"\x00"+m] }),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr.Start("openai", "gpt-4o")(40*time.Millisecond, false)
			}
		})
	}
}
