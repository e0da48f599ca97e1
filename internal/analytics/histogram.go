package analytics

import (
	"math"
	"sort"
	"strconv"
)

// The latency histogram every models rollup row carries: latencyBuckets
// counters (columns lat_00 … lat_27), log-spaced. Bucket 0 counts
// latencies below latencyFirstEdge (5 ms); bucket i, for 1 ≤ i ≤ 26, counts
// [5·1.5^(i-1), 5·1.5^i) ms; the last bucket counts everything from
// 5·1.5^26 ≈ 189 s up.
//
// Error bound of a percentile estimate (quantile): the estimate lies in the
// bucket that holds the exact nearest-rank percentile (the rank is found in
// the cumulative counts, then interpolated geometrically inside the
// bucket), so
//
//   - between 5 ms and ~189 s it is within a factor latencyRatio (1.5) of
//     the exact value: exact/1.5 < estimate < exact·1.5;
//   - below 5 ms it is within 5 ms of it;
//   - from ~189 s up it is 189,384 ms, a lower bound.
//
// Typical errors are much smaller than the bound (interpolation inside the
// bucket); the bound is what is promised.
const (
	latencyBuckets   = 28
	latencyFirstEdge = 5.0 // ms
	latencyRatio     = 1.5
)

// latencyEdges are the upper edges of buckets 0 … latencyBuckets-2, in ms.
var latencyEdges = func() []float64 {
	e := make([]float64, latencyBuckets-1)
	for i := range e {
		e[i] = latencyFirstEdge * math.Pow(latencyRatio, float64(i))
	}
	return e
}()

// latencyColumns are the histogram's column names, lat_00 … lat_27.
var latencyColumns = func() []string {
	c := make([]string, latencyBuckets)
	for i := range c {
		n := strconv.Itoa(i)
		if i < 10 {
			n = "0" + n
		}
		c[i] = "lat_" + n
	}
	return c
}()

// latencyBucket is the bucket of a latency in ms.
func latencyBucket(ms int64) int {
	v := float64(ms)
	return sort.Search(len(latencyEdges), func(i int) bool { return v < latencyEdges[i] })
}

// histogram counts latencies per bucket.
type histogram [latencyBuckets]int64

func (h *histogram) add(o *histogram) {
	for i := range h {
		h[i] += o[i]
	}
}

// quantile estimates the q-quantile (0 < q ≤ 1) of the counted latencies,
// in ms, by nearest rank (the ⌈q·n⌉-th smallest), within the bound above;
// 0 when nothing was counted.
func (h *histogram) quantile(q float64) float64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(n))), 1)
	var cum int64
	for i, c := range h {
		if c == 0 || cum+c < rank {
			cum += c
			continue
		}
		// The rank's place inside the bucket, in (0, 1).
		f := (float64(rank-cum) - 0.5) / float64(c)
		switch {
		case i == 0:
			return f * latencyEdges[0]
		case i == latencyBuckets-1:
			return latencyEdges[i-1]
		default:
			lo, hi := latencyEdges[i-1], latencyEdges[i]
			return lo * math.Pow(hi/lo, f)
		}
	}
	return latencyEdges[len(latencyEdges)-1] // not reached: rank ≤ n
}
