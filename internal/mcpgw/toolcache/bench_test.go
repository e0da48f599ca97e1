package toolcache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// BenchmarkPut measures storing a plain text result on the in-process
// store, as the gateway does on a miss of a cacheable tool: a short answer
// (stored plain) and one of about 4 KiB (zstd-compressed), encoded by Put
// and given to it already encoded.
func BenchmarkPut(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"small", "echo: a few words of answer, as a tool would give"},
		{"4KiB", strings.Repeat("row 17: name, status, owner, updated; ", 110)},
	} {
		b.Run(c.name, func(b *testing.B) {
			kv := memkv.New()
			b.Cleanup(func() { kv.Close() })
			cache := New(kv, Options{})
			k, r, ctx := key("team:a", "github", "search", `{"q":"svc"}`), textResult(c.text), context.Background()
			b.Run("encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := cache.Put(ctx, k, r, nil, time.Minute, 0.01); err != nil {
						b.Fatal(err)
					}
				}
			})
			// The gateway's miss path when the upstream gave the result's
			// JSON: the result is not encoded again.
			enc, err := mcpgw.AppendResult(nil, r)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("encoded", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := cache.Put(ctx, k, r, enc, time.Minute, 0.01); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
