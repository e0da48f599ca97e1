package injection

import "math"

// Training arithmetic is written so that the same sets give the same
// weights on any CPU: products are rounded explicitly (a conversion forbids
// the compiler to fuse a multiply-add) and the exponential is the portable
// one below rather than math.Exp, which has assembly versions per
// architecture. (The same as package model's, which this package may not
// import.)

// portableSigmoid is 1/(1+e^-z), computed with portableExp.
func portableSigmoid(z float64) float64 {
	z = min(max(z, -40), 40)
	if z >= 0 {
		return 1 / (1 + portableExp(-z))
	}
	e := portableExp(z)
	return e / (1 + e)
}

// portableExp is e^x for |x| <= 41, the algorithm of Go's pure-Go math.exp
// (from FreeBSD's e_exp.c; BSD licence, The Go Authors), with every product
// rounded before it is added.
func portableExp(x float64) float64 {
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
	case x > 41:
		x = 41
	case x < -41:
		x = -41
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
