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
	mustShape(rows, hidden)
	n := complex(float64(hidden), 0)
	for r := 0; r < rows; r++ {
		row := x[r*hidden : (r+1)*hidden]
		var ss complex128
		for _, v := range row {
			ss += v * v
		}
		rr := cmplx.Sqrt(ss/n + complex(eps, 0))
		out := y[r*hidden : (r+1)*hidden]
		for i, v := range row {
			out[i] = v / rr * gamma[i]
		}
	}
}

// LayerNormForwardComplex is LayerNormForward over complex128.
func LayerNormForwardComplex(y, x, gamma, beta []complex128, rows, hidden int, eps float64) {
	mustShape(rows, hidden)
	n := complex(float64(hidden), 0)
	c := make([]complex128, hidden)
	for r := 0; r < rows; r++ {
		row := x[r*hidden : (r+1)*hidden]
		var s complex128
		for _, v := range row {
			s += v
		}
		mu := s / n
		var q complex128
		for j, v := range row {
			c[j] = v - mu
			q += c[j] * c[j]
		}
		rs := 1 / cmplx.Sqrt(q/n+complex(eps, 0))
		out := y[r*hidden : (r+1)*hidden]
		for j := range out {
			out[j] = c[j]*rs*gamma[j] + beta[j]
		}
	}
}

// RoPEForwardComplex is the RoPE forward of the given style over
// complex128 inputs (angles stay real).
func RoPEForwardComplex(y, x []complex128, pos []float64, rows, heads, headDim int, theta float64, style RoPEStyle) {
	mustRoPEShape(rows, heads, headDim)
	w := heads * headDim
	half := headDim / 2
	ang := make([]float64, half)
	for r := 0; r < rows; r++ {
		RoPEAngles(ang, pos[r], headDim, theta)
		for h := 0; h < heads; h++ {
			base := r*w + h*headDim
			for i, a := range ang {
				s, c := math.Sincos(a)
				ia, ib := style.pair(i, headDim)
				x0, x1 := x[base+ia], x[base+ib]
				y[base+ia] = x0*complex(c, 0) - x1*complex(s, 0)
				y[base+ib] = x0*complex(s, 0) + x1*complex(c, 0)
			}
		}
	}
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
