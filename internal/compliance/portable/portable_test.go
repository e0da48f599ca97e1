package portable

import (
	"math"
	"testing"
)

// TestExp: Exp agrees with math.Exp to a few ulps over the range the
// models use, and is clamped and exact where it says.
func TestExp(t *testing.T) {
	for x := -MaxLogit - 1.0; x <= MaxLogit+1; x += 0.0137 {
		got, want := Exp(x), math.Exp(x)
		if math.Abs(got-want) > 4*math.Abs(want)*0x1p-52 {
			t.Fatalf("Exp(%v) = %v, want %v", x, got, want)
		}
	}
	if got := Exp(100); got != Exp(MaxLogit+1) {
		t.Errorf("Exp(100) = %v, want clamped to Exp(%d)", got, MaxLogit+1)
	}
	if got := Exp(1e-10); got != 1+1e-10 {
		t.Errorf("Exp(1e-10) = %v", got)
	}
	if !math.IsNaN(Exp(math.NaN())) {
		t.Error("Exp(NaN) is not NaN")
	}
}

func TestSigmoid(t *testing.T) {
	for _, tc := range []struct{ z, want float64 }{{0, 0.5}, {1000, 1 / (1 + math.Exp(-MaxLogit))}, {-2, 1 / (1 + math.Exp(2))}, {3, 1 / (1 + math.Exp(-3))}} {
		if got := Sigmoid(tc.z); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Sigmoid(%v) = %v, want %v", tc.z, got, tc.want)
		}
	}
}
