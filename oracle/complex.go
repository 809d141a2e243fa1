package oracle

import (
	"math"
	"math/cmplx"
)

// The complex128 forwards below are the float64 references extended
// analytically (no conjugation, cmplx.Sqrt on the principal branch, which is
// analytic near the positive real axis where mean(x²)+eps lives). They exist
// for complex-step differentiation: for a real-analytic L,
// L(x + i·h·v) = L(x) + i·h·⟨∇L, v⟩ + O(h²), so Im(L(x+ihv))/h is the
// directional derivative with no subtractive cancellation; with h = 1e-30
// the O(h²) term is far below binary64 resolution and the result agrees with
// an exact analytic gradient to a few ulps of the sum of |terms|.

// ComplexStepH is the default complex step.
const ComplexStepH = 1e-30

// RMSNormForwardComplex is RMSNormForward over complex128.
func RMSNormForwardComplex(y, x, gamma []complex128, rows, hidden int, eps float64) {
	n := complex(float64(hidden), 0)
	rmsNormRows(y, nil, x, gamma, rows, hidden, func(y, x []complex128) complex128 {
		var ss complex128
		for _, v := range x {
			ss += v * v
		}
		rr := cmplx.Sqrt(ss/n + complex(eps, 0))
		normalizeRow(y, x, gamma, rr)
		return rr
	})
}

// LayerNormForwardComplex is LayerNormForward over complex128.
func LayerNormForwardComplex(y, x, gamma, beta []complex128, rows, hidden int, eps float64) {
	n := complex(float64(hidden), 0)
	layerNormRows(y, nil, nil, x, gamma, beta, rows, hidden, func(y, x, c []complex128) (mu, rs complex128) {
		var s complex128
		for _, v := range x {
			s += v
		}
		mu = s / n
		var q complex128
		for j, v := range x {
			c[j] = v - mu
			q += c[j] * c[j]
		}
		rs = 1 / cmplx.Sqrt(q/n+complex(eps, 0))
		affineRow(y, c, rs, gamma, beta)
		return mu, rs
	})
}

// RoPEForwardComplex is the RoPE forward of the given style over
// complex128 inputs (angles stay real).
func RoPEForwardComplex(y, x []complex128, pos []float64, rows, heads, headDim int, theta float64, style RoPEStyle) {
	ropeByAngles(y, x, pos, rows, heads, headDim, theta, style, func(a float64) (s, c complex128) {
		sa, ca := math.Sincos(a)
		return complex(sa, 0), complex(ca, 0)
	})
}

// ComplexStep returns Im(f(x + i·h·v))/h, the directional derivative
// ⟨∇f(x), v⟩ of a real-analytic f given by its complex extension. v is
// first scaled by a power of two to max|v| ∈ [1, 2) (and the result scaled
// back exactly), so h·v never underflows.
func ComplexStep(f func([]complex128) complex128, x, v []float64, h float64) float64 {
	mustLen("v", v, len(x))
	m := maxAbs(v)
	if m == 0 {
		return 0
	}
	_, e := math.Frexp(m)
	z := make([]complex128, len(x))
	for i := range x {
		z[i] = complex(x[i], h*math.Ldexp(v[i], 1-e))
	}
	return math.Ldexp(imag(f(z))/h, e-1)
}

// dotComplex returns Σ y_i·w_i without conjugation.
func dotComplex(y []complex128, w []float64) complex128 {
	var re, im kbn
	for i, v := range y {
		re.add(real(v) * w[i])
		im.add(imag(v) * w[i])
	}
	return complex(re.sum(), im.sum())
}
