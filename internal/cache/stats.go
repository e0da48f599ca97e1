package cache

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/cache/verify"
	"github.com/svc-gateway/svc/internal/store"
)

// Counter names, fleet-wide in the KV store under statsPrefix.
const (
	cHitL1      = "hits:L1"
	cHitL2      = "hits:L2"
	cHitL3      = "hits:L3"
	cMisses     = "misses"
	cSkipped    = "skipped"
	cTokens     = "tokens_saved"
	cCostMicros = "cost_saved_micro_usd"
	cWrites     = "writes"
	cWrittenZ   = "written_bytes_compressed"
	cWrittenRaw = "written_bytes_raw"
	cEvictions  = "evictions"
	cRejected   = "rejected:" // + verification reason
	cSkippedBy  = "skipped:"  // + skip reason
)

// counterNames are the counters read back by Stats, rejections aside.
var counterNames = []string{cHitL1, cHitL2, cHitL3, cMisses, cSkipped, cTokens, cCostMicros, cWrites, cWrittenZ, cWrittenRaw, cEvictions}

// rejectReasons are the verification reasons counted by name.
var rejectReasons = []string{"number", "negation", "quoted", "code", "entity", "language", "antonym", "direction", "content", "other"}

// skipReasons are the reasons a request skips the cache, counted by name
// (the Skip constants).
var skipReasons = [...]string{SkipHeader, SkipTemperature, SkipFresh, SkipDoNotStore}

// stats are this replica's counters since they were last added to the
// fleet-wide ones.
type stats struct {
	hitsL1, hitsL2, hitsL3, misses, skipped atomic.Int64
	tokens, costMicros                      atomic.Int64
	writes, writtenZ, writtenRaw, evictions atomic.Int64
	skips                                   [len(skipReasons)]atomic.Int64 // by skipReasons' index

	mu      sync.Mutex
	rejects map[string]int64
}

func newStats() *stats { return &stats{rejects: map[string]int64{}} }

func (s *stats) hit(tier string, tokens int64, cost float64) {
	switch tier {
	case "L1":
		s.hitsL1.Add(1)
	case "L2":
		s.hitsL2.Add(1)
	default:
		s.hitsL3.Add(1)
	}
	s.tokens.Add(tokens)
	s.costMicros.Add(int64(math.Round(cost * 1e6)))
}

// skipped counts a request that skipped the cache for reason (a Skip
// constant).
func (s *stats) skip(reason string) {
	s.skipped.Add(1)
	if i := skipIndex(reason); i >= 0 {
		s.skips[i].Add(1)
	}
}

// skipIndex is the index of reason in skipReasons, or -1.
func skipIndex(reason string) int {
	for i, r := range skipReasons {
		if r == reason {
			return i
		}
	}
	return -1
}

func (s *stats) wrote(z, raw int) {
	s.writes.Add(1)
	s.writtenZ.Add(int64(z))
	s.writtenRaw.Add(int64(raw))
}

func (s *stats) rejected(reason string) {
	known := false
	for _, r := range rejectReasons {
		if r == reason {
			known = true
		}
	}
	if !known {
		reason = "other"
	}
	s.mu.Lock()
	s.rejects[reason]++
	s.mu.Unlock()
}

// take returns the counters accumulated since the last take and resets them.
func (s *stats) take() map[string]int64 {
	out := map[string]int64{
		cHitL1: s.hitsL1.Swap(0), cHitL2: s.hitsL2.Swap(0), cHitL3: s.hitsL3.Swap(0),
		cMisses: s.misses.Swap(0), cSkipped: s.skipped.Swap(0),
		cTokens: s.tokens.Swap(0), cCostMicros: s.costMicros.Swap(0),
		cWrites: s.writes.Swap(0), cWrittenZ: s.writtenZ.Swap(0), cWrittenRaw: s.writtenRaw.Swap(0),
		cEvictions: s.evictions.Swap(0),
	}
	for i, r := range skipReasons {
		out[cSkippedBy+r] = s.skips[i].Swap(0)
	}
	s.mu.Lock()
	for r, n := range s.rejects {
		out[cRejected+r] = n
	}
	clear(s.rejects)
	s.mu.Unlock()
	return out
}

// giveBack returns counts that could not be added to the fleet's.
func (s *stats) giveBack(m map[string]int64) {
	for name, n := range m {
		switch name {
		case cHitL1:
			s.hitsL1.Add(n)
		case cHitL2:
			s.hitsL2.Add(n)
		case cHitL3:
			s.hitsL3.Add(n)
		case cMisses:
			s.misses.Add(n)
		case cSkipped:
			s.skipped.Add(n)
		case cTokens:
			s.tokens.Add(n)
		case cCostMicros:
			s.costMicros.Add(n)
		case cWrites:
			s.writes.Add(n)
		case cWrittenZ:
			s.writtenZ.Add(n)
		case cWrittenRaw:
			s.writtenRaw.Add(n)
		case cEvictions:
			s.evictions.Add(n)
		default:
			if reason, ok := strings.CutPrefix(name, cSkippedBy); ok {
				if i := skipIndex(reason); i >= 0 {
					s.skips[i].Add(n)
				}
				continue
			}
			s.mu.Lock()
			s.rejects[strings.TrimPrefix(name, cRejected)] += n
			s.mu.Unlock()
		}
	}
}

// nodeGauges are one replica's current sizes, published on nodesLog.
type nodeGauges struct {
	Node         string `json:"node"`
	At           int64  `json:"t"`
	L1Entries    int    `json:"l1_entries"`
	L1Bytes      int64  `json:"l1_bytes"`
	IndexEntries int    `json:"index_entries"`
	IndexBytes   int64  `json:"index_bytes"`
	Entries      int    `json:"entries"`
	BytesZ       int64  `json:"bytes_compressed"`
	BytesRaw     int64  `json:"bytes_raw"`
}

// gauges measures this replica.
func (c *Cache) gauges(node string) nodeGauges {
	g := nodeGauges{Node: node, At: c.o.Now().UnixMilli(), IndexEntries: c.index.Len(), IndexBytes: c.index.Bytes()}
	g.L1Entries, g.L1Bytes = c.l1.stats()
	c.mu.Lock()
	g.Entries = len(c.live)
	for _, li := range c.live {
		g.BytesZ += int64(li.zsize)
		g.BytesRaw += int64(li.rawSize)
	}
	c.mu.Unlock()
	return g
}

// flushCounters adds this replica's counters to the fleet's.
func (c *Cache) flushCounters(ctx context.Context) {
	m := c.stats.take()
	failed := map[string]int64{}
	for name, n := range m {
		if n == 0 {
			continue
		}
		if _, err := c.kv.IncrBy(ctx, statsPrefix+name, n, 0); err != nil {
			failed[name] = n
		}
	}
	if len(failed) > 0 {
		c.stats.giveBack(failed)
	}
}

// flushStats adds the counters to the fleet's and publishes the gauges.
func (c *Cache) flushStats(ctx context.Context, node string) {
	ctx, cancel := context.WithTimeout(ctx, 10*c.o.StoreTimeout)
	defer cancel()
	c.flushCounters(ctx)
	if b, err := json.Marshal(c.gauges(node)); err == nil {
		_ = c.kv.AppendLog(ctx, nodesLog, store.LogLimit{MaxAge: nodeMaxAge, MaxLen: 1000}, b)
	}
}

// Stats is the answer of GET /api/metacache/stats.
type Stats struct {
	HitRate      float64          `json:"hit_rate"` // hits / lookups, 0–1
	Lookups      int64            `json:"lookups"`
	Hits         int64            `json:"hits"`
	Misses       int64            `json:"misses"`
	HitsByTier   map[string]int64 `json:"hits_by_tier"`
	Rejected     map[string]int64 `json:"verification_rejections"` // L3 candidates refused, by reason
	Skipped      int64            `json:"skipped"`                 // requests that bypassed the cache
	SkippedBy    map[string]int64 `json:"skipped_by_reason"`       // and why: header, temperature, fresh, do_not_store
	TokensSaved  int64            `json:"tokens_saved"`
	CostSavedUSD float64          `json:"cost_saved_usd"`
	Writes       int64            `json:"writes"`
	WrittenZ     int64            `json:"written_bytes_compressed"`
	WrittenRaw   int64            `json:"written_bytes_raw"`
	Evictions    int64            `json:"evictions"`
	// Live entries as the replicas' indexes follow them (the largest view).
	Entries         int64   `json:"entries"`
	BytesCompressed int64   `json:"bytes_compressed"`
	BytesRaw        int64   `json:"bytes_raw"`
	CompressionRate float64 `json:"compression_ratio"` // raw / compressed
	L1Entries       int64   `json:"l1_entries"`        // summed over replicas
	L1Bytes         int64   `json:"l1_bytes"`
	IndexEntries    int64   `json:"index_entries"` // the largest replica index
	IndexBytes      int64   `json:"index_bytes"`
	Replicas        int     `json:"replicas"` // proxies that reported in the last 30 s
}

// Admin reads the fleet's cache statistics and flushes the cache; the
// management component uses it (it needs only the shared store).
type Admin struct {
	kv  AdminStore
	now func() time.Time
}

// NewAdmin returns the cache's administration over kv.
func NewAdmin(kv AdminStore) *Admin { return &Admin{kv: kv, now: time.Now} }

// Stats reads the fleet-wide statistics.
func (a *Admin) Stats(ctx context.Context) (Stats, error) {
	s := Stats{HitsByTier: map[string]int64{}, Rejected: map[string]int64{}, SkippedBy: map[string]int64{}}
	read := func(name string) (int64, error) {
		b, err := a.kv.Get(ctx, statsPrefix+name)
		if err == store.ErrNotFound {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(string(b), 10, 64)
	}
	vals := map[string]int64{}
	for _, name := range counterNames {
		v, err := read(name)
		if err != nil {
			return s, err
		}
		vals[name] = v
	}
	for _, r := range rejectReasons {
		v, err := read(cRejected + r)
		if err != nil {
			return s, err
		}
		if v > 0 {
			s.Rejected[r] = v
		}
	}
	for _, r := range skipReasons {
		v, err := read(cSkippedBy + r)
		if err != nil {
			return s, err
		}
		if v > 0 {
			s.SkippedBy[r] = v
		}
	}
	s.HitsByTier["L1"], s.HitsByTier["L2"], s.HitsByTier["L3"] = vals[cHitL1], vals[cHitL2], vals[cHitL3]
	s.Hits = vals[cHitL1] + vals[cHitL2] + vals[cHitL3]
	s.Misses, s.Skipped = vals[cMisses], vals[cSkipped]
	s.Lookups = s.Hits + s.Misses
	if s.Lookups > 0 {
		s.HitRate = float64(s.Hits) / float64(s.Lookups)
	}
	s.TokensSaved, s.CostSavedUSD = vals[cTokens], float64(vals[cCostMicros])/1e6
	s.Writes, s.WrittenZ, s.WrittenRaw, s.Evictions = vals[cWrites], vals[cWrittenZ], vals[cWrittenRaw], vals[cEvictions]

	logs, err := a.kv.ReadLog(ctx, nodesLog, a.now().Add(-nodeMaxAge), 1000)
	if err != nil {
		return s, err
	}
	latest := map[string]nodeGauges{}
	for _, b := range logs {
		var g nodeGauges
		if json.Unmarshal(b, &g) == nil && g.At >= latest[g.Node].At {
			latest[g.Node] = g
		}
	}
	s.Replicas = len(latest)
	for _, g := range latest {
		s.L1Entries += int64(g.L1Entries)
		s.L1Bytes += g.L1Bytes
		if int64(g.IndexEntries) > s.IndexEntries {
			s.IndexEntries, s.IndexBytes = int64(g.IndexEntries), g.IndexBytes
		}
		if int64(g.Entries) > s.Entries {
			s.Entries, s.BytesCompressed, s.BytesRaw = int64(g.Entries), g.BytesZ, g.BytesRaw
		}
	}
	if s.BytesCompressed > 0 {
		s.CompressionRate = math.Round(float64(s.BytesRaw)/float64(s.BytesCompressed)*100) / 100
	}
	return s, nil
}

// Flush makes every entry of namespace ns ("" or "*": all namespaces;
// "default": the default namespace) unreachable in every replica: it bumps
// the generation in the shared store and tells the replicas, which drop
// what they hold. Entries expire from the store by their TTL.
func (a *Admin) Flush(ctx context.Context, ns string) error {
	key := genKey
	if ns == "" {
		ns = "*"
	}
	if ns != "*" {
		key = nsGenPrefix + nsName(ns)
	}
	if _, err := a.kv.IncrBy(ctx, key, 1, 0); err != nil {
		return err
	}
	b, _ := json.Marshal(flushNotice{NS: ns})
	return a.kv.Publish(ctx, flushChannel, b)
}

// verifyAgree runs phase 4 on two prompts' features.
func verifyAgree(q, cached *verify.Features) (bool, string) { return verify.Agree(*q, *cached) }

// jsonMarshal is json.Marshal (one place to change the encoding).
func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// logLimit bounds the entry log: by the longest TTL an entry can have and
// by the number of entries the indexes follow.
func logLimit(maxEntries int) store.LogLimit {
	return store.LogLimit{MaxAge: MaxTTL, MaxLen: maxEntries}
}
