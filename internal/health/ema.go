package health

import (
	"math"
	"time"
)

// LatencyTau is the time constant of the latency moving average: a change
// of latency has moved the average 63 % of the way after one minute, 95 %
// after three.
const LatencyTau = time.Minute

// latencyEMA is the exponential moving average of the p95 latency over the
// window's minutes (oldest first; the last is the current minute, elapsed
// into it): a continuous-time average with time constant LatencyTau whose
// input is each minute's p95, read from that minute's fleet-wide
// histogram. It starts at the first minute with calls; each later minute
// with calls moves it by 1 − e^(−d/τ) of the way to its p95, d being a
// minute, or for the current minute the time elapsed in it (so the average
// moves smoothly rather than jumping when a minute turns); a minute without
// calls leaves it. Every replica reads the same buckets, so every replica
// computes the same average. 0 when the window has no calls.
func latencyEMA(minutes []series, elapsed time.Duration) time.Duration {
	var ema float64
	started := false
	for i := range minutes {
		p := percentile(&minutes[i], 0.95)
		if p == 0 {
			continue
		}
		if !started {
			ema, started = float64(p), true
			continue
		}
		d := time.Minute
		if i == len(minutes)-1 {
			d = min(max(elapsed, 0), time.Minute)
		}
		ema += (1 - math.Exp(-float64(d)/float64(LatencyTau))) * (float64(p) - ema)
	}
	return time.Duration(math.Round(ema))
}
