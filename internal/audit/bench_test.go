package audit_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// benchExchange is a finished exchange shaped like svcbench's requests: a
// virtual key, a chat request naming its user, usage and cost.
func benchExchange(i int) *pipeline.Exchange {
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	return &pipeline.Exchange{
		ID: "0193a1b2-c3d4-7e5f-8a9b-" + strconv.FormatInt(100000000000+int64(i), 10), Start: start,
		End: start.Add(42 * time.Millisecond), Endpoint: pipeline.Chat, Model: "gpt-4o-mini",
		Provider: "openai", UpstreamModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18",
		RoutingStrategy: "direct", RoutingReason: "provider:openai", Status: 200,
		Usage:     llm.Usage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37},
		Cost:      0.0000109,
		Principal: &identity.Principal{Kind: identity.VirtualKey, ID: "vk_01HZX3", MaskedKey: "sk-svc-ab12…"},
		Chat:      &llm.ChatRequest{User: "user-42", Messages: []llm.Message{{Role: "user"}}},
	}
}

// BenchmarkFromExchangeEncode is the request path's share before the
// spool: the entry built from the exchange and encoded (into a reused
// buffer, as Logger.Record does).
func BenchmarkFromExchangeEncode(b *testing.B) {
	x := benchExchange(1)
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		buf = audit.FromExchange(x, 40*time.Millisecond).AppendJSON(buf[:0])
	}
	reportCPU(b, cpuTime()-cpu)
}

// BenchmarkEncodeOracle is the entry encoded by encoding/json's
// reflection, as Logger.Record did before AppendJSON.
func BenchmarkEncodeOracle(b *testing.B) {
	e := audit.FromExchange(benchExchange(1), 40*time.Millisecond)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := json.Marshal((*plainEntry)(e)); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpuTime()-cpu)
}

// reportCPU reports the process's CPU time per op (cpu-ns/op).
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkRecord is Logger.Record of a built entry into a spool on disk:
// encode and one write(2), serially and from parallel goroutines.
func BenchmarkRecord(b *testing.B) {
	for _, parallel := range []bool{false, true} {
		b.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(b *testing.B) {
			sp, err := spool.Open(b.TempDir(), spool.Options{Key: audit.HotLogKey, MaxBytes: 1 << 30, SegmentBytes: 64 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer sp.Close()
			l := audit.NewLogger(metrics.New(nil), quiet, audit.Options{Spool: sp})
			defer l.Close()
			e := audit.FromExchange(benchExchange(1), 40*time.Millisecond)
			b.ReportAllocs()
			cpu := cpuTime()
			defer func() { reportCPU(b, cpuTime()-cpu) }()
			if !parallel {
				for b.Loop() {
					l.Record(e)
				}
				return
			}
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				e := audit.FromExchange(benchExchange(2), 40*time.Millisecond)
				for pb.Next() {
					l.Record(e)
				}
			})
		})
	}
}

// BenchmarkRecordFromJSON is the bridge's decoding of one entry read back
// from the hot tier.
func BenchmarkRecordFromJSON(b *testing.B) {
	js, err := json.Marshal(audit.FromExchange(benchExchange(1), 40*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := audit.RecordFromJSON(js); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpuTime()-cpu)
}

// BenchmarkSQLiteWrite is the bridge's write of batches of 512 new
// records into SQLite (a file in a temporary directory, as svc's data
// dir), per record.
func BenchmarkSQLiteWrite(b *testing.B) {
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(b.TempDir(), "svc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := audit.NewSQLStore(db)
	var next atomic.Int64
	batch := func(n int) []audit.Record {
		recs := make([]audit.Record, n)
		for i := range recs {
			js, err := json.Marshal(audit.FromExchange(benchExchange(int(next.Add(1))), 40*time.Millisecond))
			if err != nil {
				b.Fatal(err)
			}
			if recs[i], err = audit.RecordFromJSON(js); err != nil {
				b.Fatal(err)
			}
		}
		return recs
	}
	const size = 512
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for done := 0; done < b.N; done += size {
		b.StopTimer()
		recs := batch(min(size, b.N-done))
		b.StartTimer()
		start := cpuTime()
		if n, err := s.Write(context.Background(), recs, nil); err != nil || n != len(recs) {
			b.Fatalf("Write: %d new, %v; want %d", n, err, len(recs))
		}
		cpu += cpuTime() - start
	}
	reportCPU(b, cpu)
}
