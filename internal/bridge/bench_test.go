package bridge_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// BenchmarkDrainSQLite is the embedded default's in-process bridge: entries
// shaped like svcbench's read from a spool on disk, decoded, written into
// SQLite with the analytics rollups in batches of 512 and acknowledged;
// per entry.
func BenchmarkDrainSQLite(b *testing.B) {
	dir := b.TempDir()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(dir, "svc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sp, err := spool.Open(filepath.Join(dir, "spool"), spool.Options{Key: audit.HotLogKey, MaxBytes: 4 << 30, SegmentBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	start := time.Now().UTC().Add(-time.Hour)
	vals := make([][]byte, 0, 512)
	for i := range b.N {
		x := &pipeline.Exchange{
			ID: "0193a1b2-c3d4-7e5f-8a9b-" + strconv.Itoa(100000000000+i), Start: start.Add(time.Duration(i) * time.Microsecond),
			End: start.Add(time.Duration(i)*time.Microsecond + 42*time.Millisecond), Endpoint: pipeline.Chat, Model: "gpt-4o-mini",
			Provider: "openai", UpstreamModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18",
			RoutingStrategy: "direct", RoutingReason: "provider:openai", Status: 200,
			Usage:     llm.Usage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37},
			Cost:      0.0000109,
			Principal: &identity.Principal{Kind: identity.VirtualKey, ID: "vk_01HZX3", MaskedKey: "sk-svc-ab12…"},
			Chat:      &llm.ChatRequest{User: "user-42", Messages: []llm.Message{{Role: "user"}}},
		}
		js, err := json.Marshal(audit.FromExchange(x, 40*time.Millisecond))
		if err != nil {
			b.Fatal(err)
		}
		if vals = append(vals, js); len(vals) == cap(vals) || i == b.N-1 {
			if err := sp.Append(vals...); err != nil {
				b.Fatal(err)
			}
			vals = vals[:0]
		}
	}
	br := bridge.New(sp, audit.NewSQLStore(db), metrics.New(nil), quiet, bridge.Options{
		Batch: 512, Rollups: analytics.NewRollups(db).Add})
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for done := 0; done < b.N; {
		n, err := br.DrainOnce(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if st := br.Status(); st.Written != int64(b.N) {
		b.Fatalf("written %d, want %d", st.Written, b.N)
	}
}
