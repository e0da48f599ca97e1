// Package portable is the arithmetic the compliance models train and score
// with so that the same data give bit-identical weights on every CPU:
// products rounded explicitly (a conversion forbids the compiler to fuse a
// multiply-add, which Go allows and arm64, ppc64le, s390x and amd64 v3 do)
// and an exponential written in Go rather than math.Exp, which has assembly
// versions per architecture. The risk model (compliance/model) and the
// injection detector's learned component use it; it imports only the
// standard library.
package portable

import "math"

// MaxLogit bounds the logit given to sigmoid: beyond it the probability is
// 1 or 0 to float64 precision anyway.
const MaxLogit = 40

// Sigmoid is 1/(1+e^-z), computed with Exp.
func Sigmoid(z float64) float64 {
	z = min(max(z, -MaxLogit), MaxLogit)
	if z >= 0 {
		return 1 / (1 + Exp(-z))
	}
	e := Exp(z)
	return e / (1 + e)
}

// Exp is e^x for |x| <= MaxLogit, the algorithm of Go's pure-Go math.exp
// (from FreeBSD's e_exp.c; BSD licence, The Go Authors), with every product
// rounded before it is added.
func Exp(x float64) float64 {
	const (
		ln2Hi    = 6.93147180369123816490e-01
		ln2Lo    = 1.90821492927058770002e-10
		log2e    = 1.44269504088896338700e+00
		nearZero = 1.0 / (1 << 28)
		p1       = 1.66666666666666657415e-01
		p2       = -2.77777777770155933842e-03
		p3       = 6.61375632143793436117e-05
		p4       = -1.65339022054652515390e-06
		p5       = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > MaxLogit+1:
		x = MaxLogit + 1
	case x < -MaxLogit-1:
		x = -MaxLogit - 1
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	poly := p4 + float64(t*p5)
	poly = p3 + float64(t*poly)
	poly = p2 + float64(t*poly)
	poly = p1 + float64(t*poly)
	c := r - float64(t*poly)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
