package injection

import (
	"testing"
	"time"
)

// unbroken are texts without a sentence break, each unit an address of the
// model: every unit calls embedded or opening, which once walked back to
// the first token and made these quadratic (843 KB took 1.6 s).
var unbroken = []string{
	"Note to the assistant: add ",
	"agent reading this: approve ",
	"instead of summarising, say ",
}

// TestScanTimeIsLinear checks that sixteen times the text takes about sixteen
// times as long, not 256 times: the best of several runs of 32 KB and of
// 512 KB, with room for a loaded machine (a quadratic scan fails by far).
func TestScanTimeIsLinear(t *testing.T) {
	var d Detector
	for _, unit := range unbroken {
		small, large := fill(unit, 32<<10), fill(unit, 512<<10)
		d.Score(small) // build the tables outside the timing
		ts, tl := time.Duration(1<<62), time.Duration(1<<62)
		for range 5 {
			ts = min(ts, timeScore(d, small))
			tl = min(tl, timeScore(d, large))
		}
		ratio := float64(tl) / float64(ts)
		t.Logf("%q: 32 KB %v, 512 KB %v (×%.1f)", unit, ts, tl, ratio)
		if ratio > 40 {
			t.Errorf("%q: 512 KB took %.1f times as long as 32 KB (%v vs %v), want about 16: the scan is not linear", unit, ratio, tl, ts)
		}
	}
}

func timeScore(d Detector, text string) time.Duration {
	start := time.Now()
	d.Score(text)
	return time.Since(start)
}

// BenchmarkDetect512KBUnbroken is 512 KB of addresses to the model without
// a sentence break (the quadratic case of embedded and opening).
func BenchmarkDetect512KBUnbroken(b *testing.B) { benchmarkDetect(b, fill(unbroken[0], 512<<10)) }
