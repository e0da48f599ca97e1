package analytics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLatencyBucketEdges(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want int
	}{
		{-3, 0}, {0, 0}, {4, 0}, {5, 1}, {7, 1}, {8, 2}, {11, 2}, {12, 3},
		{189383, 26}, {189384, 27}, {1 << 40, 27},
	} {
		if got := latencyBucket(tc.ms); got != tc.want {
			t.Errorf("latencyBucket(%d) = %d, want %d", tc.ms, got, tc.want)
		}
	}
	if len(latencyColumns) != latencyBuckets || latencyColumns[0] != "lat_00" || latencyColumns[27] != "lat_27" {
		t.Errorf("latencyColumns = %v", latencyColumns)
	}
}

// WithinBound reports whether est is within the documented bound of exact.
func withinBound(est float64, exact int64) bool {
	x := float64(exact)
	switch {
	case x < latencyFirstEdge:
		return math.Abs(est-x) < latencyFirstEdge
	case x >= latencyEdges[len(latencyEdges)-1]:
		return est == latencyEdges[len(latencyEdges)-1]
	default:
		return est > x/latencyRatio && est < x*latencyRatio
	}
}

func TestQuantileWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(2000)
		lat := make([]int64, n)
		var h histogram
		for i := range lat {
			switch trial % 4 {
			case 0: // spread over every bucket
				lat[i] = int64(math.Exp(rng.Float64() * math.Log(400000)))
			case 1: // tight cluster
				lat[i] = 800 + rng.Int64N(50)
			case 2: // fast answers
				lat[i] = rng.Int64N(12)
			default: // bimodal
				lat[i] = []int64{3, 2500}[rng.IntN(2)] + rng.Int64N(10)
			}
			h[latencyBucket(lat[i])]++
		}
		slices.Sort(lat)
		for _, q := range []float64{0.5, 0.95, 0.99, 1} {
			exact := lat[max(int(math.Ceil(q*float64(n))), 1)-1]
			if est := h.quantile(q); !withinBound(est, exact) {
				t.Fatalf("trial %d: quantile(%v) = %v, exact %d: outside the bound", trial, q, est, exact)
			}
		}
	}
	var empty histogram
	if got := empty.quantile(0.5); got != 0 {
		t.Errorf("empty quantile = %v, want 0", got)
	}
}
