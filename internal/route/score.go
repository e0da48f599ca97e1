package route

import (
	"math"
	"slices"
	"strings"
)

// StrategyScore is the Decision.Strategy of an intelligent-router plan ordered
// by the strategy weights.
const StrategyScore = "score"

// SuccessRates is an optional ability of a Health source: the fleet-wide
// share of successful calls of a provider+model over the health window, and
// whether it has been measured. Without it every target's success rate is
// unknown (scored as the middle of the range).
type SuccessRates interface {
	SuccessRate(provider, model string) (rate float64, ok bool)
}

// set reports whether any weight is positive: the strategy weights are in use.
func (w Weights) set() bool {
	return w.SuccessRate > 0 || w.Latency > 0 || w.Cost > 0 || w.Quality > 0
}

// scoreOrder reorders idx (the strategy's order of ch's targets) by the
// weighted score, best first; equal scores keep the strategy's order.
//
// Each factor is normalised across the targets to [0, 1], 1 best (min–max;
// all equal: 1): success rate (higher is better), p95 latency (lower),
// per-token price (lower) and the quality prior (higher). A factor a target
// has no figure for (unmeasured latency or success rate, unknown price) is
// scored 0.5. The score is the weighted sum; weights need not add up to 1.
//
// The quality prior is the target's per-token price on a log scale relative
// to the other targets: svc measures no answer quality, and within the price
// table a higher price marks a larger model or tier (see docs/decisions.md).
func (r *Resolver) scoreOrder(w Weights, ch *Chain, idx []int) []int {
	n := len(ch.Targets)
	success, latency, price, quality := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	known := [4][]bool{make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)}
	h := r.src.Health
	sr, _ := h.(SuccessRates)
	for i, t := range ch.Targets {
		p := strings.ToLower(t.Provider)
		if sr != nil {
			success[i], known[0][i] = sr.SuccessRate(p, t.Model)
		}
		if h != nil {
			if l := h.LatencyP95(p, t.Model); l > 0 {
				latency[i], known[1][i] = float64(l), true
			}
		}
		if r.src.Prices != nil {
			if v, ok := r.src.Prices.PerToken(p, t.Model); ok && v >= 0 {
				price[i], known[2][i] = v, true
				if v > 0 {
					quality[i], known[3][i] = math.Log(v), true
				}
			}
		}
	}
	ns := normalise(success, known[0], false)
	nl := normalise(latency, known[1], true)
	nc := normalise(price, known[2], true)
	nq := normalise(quality, known[3], false)
	score := make([]float64, n)
	for i := range score {
		score[i] = w.SuccessRate*ns[i] + w.Latency*nl[i] + w.Cost*nc[i] + w.Quality*nq[i]
	}
	out := slices.Clone(idx)
	slices.SortStableFunc(out, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	return out
}

// normalise maps the known values of v to [0, 1] (1 best; lowerBetter flips
// the scale) by min–max across them; unknown values, and every value when
// they are all equal, get 0.5 and 1 respectively.
func normalise(v []float64, known []bool, lowerBetter bool) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, x := range v {
		if known[i] {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	out := make([]float64, len(v))
	for i, x := range v {
		switch {
		case !known[i]:
			out[i] = 0.5
		case hi == lo:
			out[i] = 1
		case lowerBetter:
			out[i] = (hi - x) / (hi - lo)
		default:
			out[i] = (x - lo) / (hi - lo)
		}
	}
	return out
}
