package oracle

import (
	"math"
	"math/cmplx"
)

// Softmax over the rows of a [rows][hidden] tensor:
//
//	y_j = exp(x_j − m) / Σ_k exp(x_k − m),   m = max_k x_k
//
// and its backward, for the upstream gradient dy and the forward's output y
// (the Jacobian of a row is diag(y) − y·yᵀ, symmetric):
//
//	dx_j = y_j·(dy_j − Σ_k y_k·dy_k)

// SoftmaxForward writes the row-wise softmax of x into y. The max is
// subtracted first (softmax is shift invariant, and exp then never
// overflows), and the row sum is compensated.
func SoftmaxForward(y, x []float64, rows, hidden int) {
	mustShape(rows, hidden)
	mustLen("y", y, rows*hidden)
	mustLen("x", x, rows*hidden)
	for r := 0; r < rows; r++ {
		xr, yr := x[r*hidden:(r+1)*hidden], y[r*hidden:(r+1)*hidden]
		m := math.Inf(-1)
		for _, v := range xr {
			m = math.Max(m, v)
		}
		var s kbn
		for j, v := range xr {
			yr[j] = math.Exp(v - m)
			s.add(yr[j])
		}
		sum := s.sum()
		for j := range yr {
			yr[j] /= sum
		}
	}
}

// SoftmaxForwardComplex is SoftmaxForward over complex128, for complex-step
// differentiation: the max of the real parts is subtracted, a constant
// shift that changes neither the value nor the derivative.
func SoftmaxForwardComplex(y, x []complex128, rows, hidden int) {
	mustShape(rows, hidden)
	for r := 0; r < rows; r++ {
		xr, yr := x[r*hidden:(r+1)*hidden], y[r*hidden:(r+1)*hidden]
		m := math.Inf(-1)
		for _, v := range xr {
			m = math.Max(m, real(v))
		}
		var s complex128
		for j, v := range xr {
			yr[j] = cmplx.Exp(v - complex(m, 0))
			s += yr[j]
		}
		for j := range yr {
			yr[j] /= s
		}
	}
}

// SoftmaxBackward writes dx_j = y_j·(dy_j − Σ_k y_k·dy_k) for every row,
// y being the forward's output (taken as exact), with a compensated sum.
func SoftmaxBackward(dx, y, dy []float64, rows, hidden int) {
	mustShape(rows, hidden)
	for _, t := range []struct {
		n string
		s []float64
	}{{"dx", dx}, {"y", y}, {"dy", dy}} {
		mustLen(t.n, t.s, rows*hidden)
	}
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		var s kbn
		for j := lo; j < hi; j++ {
			s.addProd(y[j], dy[j])
		}
		dot := s.sum()
		for j := lo; j < hi; j++ {
			dx[j] = y[j] * (dy[j] - dot)
		}
	}
}

// Ex2ApproxRelErr is the relative error this package assumes for the
// kernels' 2^t: PTX ex2.approx.f32 (and .ftz.f32). The PTX ISA gives its
// maximum error as 2 ulp of the correctly rounded result over the full
// range (older editions: relative error about 2^-22). 2 ulp from the
// correctly rounded value is at most 2.5 ulp, 5u, from the exact one, which
// also covers 2^-22 = 4u, and covers CUDA's exp2f/expf (≤ 2 ulp). ptxprop's
// emulator computes it correctly rounded, or anywhere within 2 ulp of that
// under adversarial approximations. A result below 2^-126 may be flushed to
// zero (.ftz), an absolute error of at most SmallestNormal32.
var Ex2ApproxRelErr = ulpErr(2)

// SoftmaxForwardTol writes per-element error bounds for a float32 softmax
// forward of x whose row sum has reduction order red. Assumed float32
// operation sequence per row (Triton's tl.exp and CUDA's exp2f of a scaled
// argument both compile to it):
//
//	m   = max_k x_k                      exact
//	d_j = x_j − m                        sub.rn
//	t_j = d_j · L, L = fl(log2 e)        mul.rn
//	e_j = ex2.approx(t_j)                Ex2ApproxRelErr, flush below 2^-126
//	s   = Σ e_j                          depth k = red.Depth(hidden)
//	y_j = e_j / s                        div.rn, div.full or div.approx (2 ulp:
//	                                     5u; s ∈ [1, hidden] is in range),
//	                                     or e_j·rcp(s) (≤ 4u); flush below 2^-126
//
// Derivation, with e_j = exp(d_j) exact for d_j = x_j − m:
//
//  1. t̂_j = d_j·log2e·(1+θ), |θ| ≤ γ₃ (three roundings: d, L, the product),
//     so |t̂_j − t_j| ≤ γ₃|t_j| and 2^t̂ = e_j·exp(ln2·(t̂−t)) with
//     |ln2·(t̂−t)| ≤ γ₃|d_j|: ρ_j = exp(γ₃|d_j|) − 1 relative.
//  2. |ê_j − e_j| ≤ E_j = e_j·((1+ρ_j)(1+5u) − 1) + 2^-126.
//  3. |ŝ − s| ≤ E_s = ΣE_j + γ_k·(s + ΣE_j) (every term is ≥ 0).
//  4. ê/ŝ − e/s = ((ê−e)·s − e·(ŝ−s))/(s·ŝ), so with ŝ ≥ s − E_s:
//     |ê/ŝ − y| ≤ A_j = (E_j + y_j·E_s)/(s − E_s).
//  5. The division adds 5u of the quotient and the flush 2^-126:
//     tol_j = A_j + 5u·(y_j + A_j) + 2^-126.
//
// s ≥ 1 (the max contributes e = 1), so the bound is relative to y near the
// max; a row whose |d_j| are large has ρ_j large only where e_j ≈ 0.
func SoftmaxForwardTol(tol, x []float64, rows, hidden int, red Reduction) {
	mustShape(rows, hidden)
	mustLen("tol", tol, rows*hidden)
	mustLen("x", x, rows*hidden)
	e := make([]float64, hidden)
	E := make([]float64, hidden)
	g3, gk := Gamma(3), Gamma(red.Depth(hidden))
	for r := 0; r < rows; r++ {
		xr, tr := x[r*hidden:(r+1)*hidden], tol[r*hidden:(r+1)*hidden]
		m := math.Inf(-1)
		for _, v := range xr {
			m = math.Max(m, v)
		}
		var s, sE kbn
		for j, v := range xr {
			d := v - m
			e[j] = math.Exp(d)
			rho := math.Expm1(g3 * math.Abs(d))
			E[j] = e[j]*relMul(rho, Ex2ApproxRelErr) + SmallestNormal32
			s.add(e[j])
			sE.add(E[j])
		}
		sum, sumE := s.sum(), sE.sum()
		Es := sumE + gk*(sum+sumE)
		lo := sum - Es
		for j := range xr {
			if lo <= 0 || math.IsInf(Es, 0) {
				tr[j] = math.Inf(1)
				continue
			}
			y := e[j] / sum
			a := (E[j] + y*Es) / lo
			tr[j] = a + Ex2ApproxRelErr*(y+a) + SmallestNormal32
		}
	}
}

// SoftmaxBackwardTol writes per-element error bounds for a float32 softmax
// backward of the float32 inputs y and dy whose dot product has reduction
// order red. Assumed float32 operation sequence per row:
//
//	S    = Σ_k y_k·dy_k       mul.rn then add.rn, or fma.rn accumulation;
//	                          depth k = red.Depth(hidden)
//	dx_j = y_j·(dy_j − S)     sub.rn, mul.rn
//	   or  y_j·dy_j − y_j·S   mul.rn, mul.rn, sub.rn
//
// Derivation: |Ŝ − S| ≤ E_S = γ_{k+1}·Σ|y_k·dy_k| + (k+1)·2η (one product
// rounding and k additions per term; a product may underflow). Both forms
// are then within
//
//	tol_j = |y_j|·E_g + u·(|dx_j| + |y_j|·E_g) + 3η,
//	E_g   = E_S + u·(|dy_j| + |S| + E_S)
//
// (first form: ĝ = (dy − Ŝ)(1+δ), |ĝ − g| ≤ E_S + u(|g| + E_S) ≤ E_g, then
// the product; second form: u|y·dy| + |y|E_S + u|y|(|S| + E_S) + u|dx̂|).
func SoftmaxBackwardTol(tol, y, dy []float64, rows, hidden int, red Reduction) {
	mustShape(rows, hidden)
	for _, t := range []struct {
		n string
		s []float64
	}{{"tol", tol}, {"y", y}, {"dy", dy}} {
		mustLen(t.n, t.s, rows*hidden)
	}
	k := red.Depth(hidden)
	gk := Gamma(k + 1)
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		var s kbn
		abs := 0.0
		for j := lo; j < hi; j++ {
			s.addProd(y[j], dy[j])
			abs += math.Abs(y[j] * dy[j])
		}
		S := s.sum()
		ES := gk*abs*(1+0x1p-50) + float64(k+1)*2*Eta32
		for j := lo; j < hi; j++ {
			Eg := ES + U32*(math.Abs(dy[j])+math.Abs(S)+ES)
			dx := math.Abs(y[j] * (dy[j] - S))
			tol[j] = math.Abs(y[j])*Eg + U32*(dx+math.Abs(y[j])*Eg) + 3*Eta32
		}
	}
}

// SoftmaxForward32Naive evaluates the forward in float32 in the assumed
// order, serially: exact max, x − m, ·fl(log2 e), a correctly rounded 2^t,
// a serial sum and a correctly rounded division (Case.CheckWith evaluates
// it with ex2.approx and div.full at their documented errors instead).
func SoftmaxForward32Naive(y, x []float32, rows, hidden int) {
	softmaxForward32(y, x, rows, hidden, Arith32{})
}

func softmaxForward32(y, x []float32, rows, hidden int, ar Arith32) {
	const l2e = float32(math.Log2E)
	for r := 0; r < rows; r++ {
		xr, yr := x[r*hidden:(r+1)*hidden], y[r*hidden:(r+1)*hidden]
		m := float32(math.Inf(-1))
		for _, v := range xr {
			m = max(m, v)
		}
		var s float32
		for j, v := range xr {
			t := (v - m) * l2e
			yr[j] = ar.Exp2(t)
			s += yr[j]
		}
		for j := range yr {
			yr[j] = ar.Div(yr[j], s)
		}
	}
}

// SoftmaxBackward32Naive evaluates the backward in float32: a serial dot
// product of rounded products, then y·(dy − S).
func SoftmaxBackward32Naive(dx, y, dy []float32, rows, hidden int) {
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		var s float32
		for j := lo; j < hi; j++ {
			s += float32(y[j] * dy[j]) // the conversion forbids fusing into an FMA
		}
		for j := lo; j < hi; j++ {
			dx[j] = y[j] * (dy[j] - s)
		}
	}
}

// SoftmaxDirectional returns ⟨∇L, vx⟩ for L = ⟨SoftmaxForward(x), w⟩:
// analytically as ⟨SoftmaxBackward(y, w), vx⟩, by complex step and by
// Richardson finite differences with step 1e-3/max|v| (softmax varies on
// the scale 1 of its inputs, whatever their magnitude).
func SoftmaxDirectional(x, w, vx []float64, rows, hidden int) Directional {
	n := rows * hidden
	y, dx := make([]float64, n), make([]float64, n)
	SoftmaxForward(y, x, rows, hidden)
	SoftmaxBackward(dx, y, w, rows, hidden)
	var out Directional
	out.Analytic = dotReal(dx, vx)
	// dx_j = y_j·dy_j − y_j·S: the terms are |y_j·w_j| and |y_j|·Σ|y_k·w_k|.
	for r := 0; r < rows; r++ {
		lo, hi := r*hidden, (r+1)*hidden
		sa := sumAbsProd(y[lo:hi], w[lo:hi])
		for j := lo; j < hi; j++ {
			out.Scale += math.Abs(vx[j]) * (math.Abs(y[j]*w[j]) + math.Abs(y[j])*sa)
		}
	}
	yc := make([]complex128, n)
	out.ComplexStep = ComplexStep(func(p []complex128) complex128 {
		SoftmaxForwardComplex(yc, p, rows, hidden)
		return dotComplex(yc, w)
	}, x, vx, ComplexStepH)
	h := 1e-3 / math.Max(maxAbs(vx), 1e-300)
	// The rounding of exp(x − m) grows with |x − m|·Eps64; the inputs' own
	// binary64 rounding with |x|·|∂L/∂x|.
	dev := 0.0
	for r := 0; r < rows; r++ {
		m := math.Inf(-1)
		for _, v := range x[r*hidden : (r+1)*hidden] {
			m = math.Max(m, v)
		}
		for j := r * hidden; j < (r+1)*hidden; j++ {
			dev += math.Abs(y[j]*w[j]) * (1 + math.Abs(x[j]-m))
		}
	}
	df := 64 * Eps64 * (dev + sumAbsProd(x, dx) + maxAbs(w))
	out.FD, out.FDErr = DirectionalDerivativeFDErr(func(p []float64) float64 {
		SoftmaxForward(y, p, rows, hidden)
		return dotReal(y, w)
	}, x, vx, h, df)
	return out
}
