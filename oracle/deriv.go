package oracle

import "math"

// DirectionalDerivativeFD estimates ⟨∇f(x), v⟩ by central differences
// D(t) = (f(x+tv) − f(x−tv))/(2t) at t = h, h/2, h/4 combined by two levels
// of Richardson extrapolation:
//
//	R1(t) = (4·D(t/2) − D(t))/3            error O(t⁴)
//	R     = (16·R1(h/2) − R1(h))/15        error O(h⁶)
//
// errEstimate = |R − R1(h/2)| + 7·δf/h bounds the error of R when the
// truncation series behaves (|R − R1(h/2)| estimates R1(h/2)'s O(h⁴) error,
// which exceeds R's) and f is evaluated with absolute error ≤ δf. The
// rounding term follows from the coefficients: D(t) carries δf/t, R1(h)
// (8+1)/3·δf/h = 3δf/h, R1(h/2) 6δf/h, R (16·6+3)/15·δf/h < 7δf/h.
// δf is taken as 2^-46·max|f| over the evaluations (f with internal
// cancellation needs DirectionalDerivativeFDErr).
//
// The loss helpers (RMSNormDirectional, ...) pass
// δf = 64·Eps64·(Σ|y_k·w_k| + Σ|θ_k·∂L/∂θ_k|): the first term is the
// rounding of the forward and the dot product, the second the effect of
// rounding the perturbed inputs θ ± t·v to binary64.
func DirectionalDerivativeFD(f func([]float64) float64, x, v []float64, h float64) (value, errEstimate float64) {
	return DirectionalDerivativeFDErr(f, x, v, h, -1)
}

// DirectionalDerivativeFDErr is DirectionalDerivativeFD with an absolute
// evaluation error δf of f at x given by the caller; δf + 2^-46·max|f|
// is used, so values of f at the perturbed points larger than at x (the
// second-order terms of a function whose gradient is tiny) are covered.
func DirectionalDerivativeFDErr(f func([]float64) float64, x, v []float64, h, df float64) (value, errEstimate float64) {
	mustLen("v", v, len(x))
	z := make([]float64, len(x))
	return DirectionalDerivativeFDAlong(func(t float64) float64 {
		for i := range x {
			z[i] = x[i] + t*v[i]
		}
		return f(z)
	}, h, df)
}

// DirectionalDerivativeFDAlong is DirectionalDerivativeFDErr for f given
// along the line: f(t) is F(x + t·v) with the point formed element by
// element as x_i + t·v_i (one product and one sum, each rounded to
// binary64), which gives DirectionalDerivativeFDErr(F, x, v, h, df) bit for
// bit while letting f evaluate without storing the point (e.g.
// RMSNormRMSAlong). f is called at t = h, −h, h/2, −h/2, h/4, −h/4, in that
// order.
func DirectionalDerivativeFDAlong(f func(t float64) float64, h, df float64) (value, errEstimate float64) {
	fmax := 0.0
	eval := func(t float64) float64 {
		fv := f(t)
		fmax = math.Max(fmax, math.Abs(fv))
		return fv
	}
	d := func(t float64) float64 { return (eval(t) - eval(-t)) / (2 * t) }
	d1, d2, d4 := d(h), d(h/2), d(h/4)
	r1a := (4*d2 - d1) / 3
	r1b := (4*d4 - d2) / 3
	r := (16*r1b - r1a) / 15
	if df < 0 {
		df = 0
	}
	df += 0x1p-46 * fmax
	return r, math.Abs(r-r1b) + 7*df/h
}

// Directional holds one directional derivative ⟨∇L, v⟩ of a scalar loss
// L = ⟨y, w⟩ computed three independent ways, and the scale
// Scale against which their differences are relative.
type Directional struct {
	Analytic    float64 // from the oracle's backward (dy = w)
	ComplexStep float64 // Im L(θ + i·h·v)/h, h = ComplexStepH
	FD          float64 // Richardson-extrapolated central differences
	FDErr       float64 // DirectionalDerivativeFD's error estimate
	// Scale is Σ_k |v_k|·(sum of the magnitudes of the terms the backward
	// formula adds to form ∂L/∂θ_k), e.g. (|A_k| + |B_k|)·|v_k| for RMSNorm's
	// dx_k = A_k − B_k. Rounding errors of every method are relative to it,
	// not to |Analytic|, which may be the result of heavy cancellation.
	Scale float64
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// dotReal returns the compensated Σ y_i·w_i.
func dotReal(y, w []float64) float64 {
	var acc kbn
	for i := range y {
		acc.addProd(y[i], w[i])
	}
	return acc.sum()
}

// sumAbsProd returns Σ |y_i·w_i|.
func sumAbsProd(y, w []float64) float64 {
	s := 0.0
	for i := range y {
		s += math.Abs(y[i] * w[i])
	}
	return s
}

// RMSNormDirectional returns ⟨∇L, (vx, vgamma)⟩ for
// L(x, γ) = ⟨RMSNormForward(x, γ), w⟩: analytically from RMSNormBackward
// with dy = w, by complex step, and by Richardson finite differences with
// step 1e-3·min(rms)/max|v|.
func RMSNormDirectional(x, gamma, w, vx, vgamma []float64, rows, hidden int, eps float64) Directional {
	dx := make([]float64, rows*hidden)
	dg := make([]float64, hidden)
	RMSNormBackward(dx, dg, x, gamma, w, rows, hidden, eps)
	var out Directional
	out.Analytic = dotReal(dx, vx) + dotReal(dg, vgamma)
	out.Scale = rmsNormGradScale(x, gamma, w, vx, vgamma, rows, hidden, eps)
	nx := rows * hidden
	yc := make([]complex128, nx)
	out.ComplexStep = ComplexStep(func(p []complex128) complex128 {
		RMSNormForwardComplex(yc, p[:nx], p[nx:], rows, hidden, eps)
		return dotComplex(yc, w)
	}, concat(x, gamma), concat(vx, vgamma), ComplexStepH)
	y := make([]float64, nx)
	rms := make([]float64, rows)
	RMSNormForward(y, rms, x, gamma, rows, hidden, eps)
	h := fdStep(rms, concat(vx, vgamma))
	df := 64 * Eps64 * (sumAbsProd(y, w) + sumAbsProd(concat(x, gamma), concat(dx, dg)))
	out.FD, out.FDErr = DirectionalDerivativeFDErr(func(p []float64) float64 {
		RMSNormForward(y, nil, p[:nx], p[nx:], rows, hidden, eps)
		return dotReal(y, w)
	}, concat(x, gamma), concat(vx, vgamma), h, df)
	return out
}

// PerHeadRMSNormDirectional is RMSNormDirectional for PerHeadRMSNorm.
func PerHeadRMSNormDirectional(x, gamma, w, vx, vgamma []float64, rows, heads, headDim int, eps float64) Directional {
	return RMSNormDirectional(x, gamma, w, vx, vgamma, rows*heads, headDim, eps)
}

// LayerNormDirectional returns ⟨∇L, (vx, vgamma, vbeta)⟩ for
// L = ⟨LayerNormForward(x, γ, β), w⟩ three ways (see Directional); the
// finite-difference step is 1e-3·min(sqrt(var+eps))/max|v|.
func LayerNormDirectional(x, gamma, beta, w, vx, vgamma, vbeta []float64, rows, hidden int, eps float64) Directional {
	dx := make([]float64, rows*hidden)
	dg := make([]float64, hidden)
	db := make([]float64, hidden)
	LayerNormBackward(dx, dg, db, x, gamma, w, rows, hidden, eps)
	var out Directional
	out.Analytic = dotReal(dx, vx) + dotReal(dg, vgamma) + dotReal(db, vbeta)
	out.Scale = layerNormGradScale(x, gamma, w, vx, vgamma, vbeta, rows, hidden, eps)
	nx := rows * hidden
	yc := make([]complex128, nx)
	p0 := concat(x, gamma, beta)
	v := concat(vx, vgamma, vbeta)
	out.ComplexStep = ComplexStep(func(p []complex128) complex128 {
		LayerNormForwardComplex(yc, p[:nx], p[nx:nx+hidden], p[nx+hidden:], rows, hidden, eps)
		return dotComplex(yc, w)
	}, p0, v, ComplexStepH)
	y := make([]float64, nx)
	rstd := make([]float64, rows)
	LayerNormForward(y, nil, rstd, x, gamma, beta, rows, hidden, eps)
	sd := make([]float64, rows)
	for i, r := range rstd {
		sd[i] = 1 / r
	}
	h := fdStep(sd, v)
	df := 64 * Eps64 * (sumAbsProd(y, w) + sumAbsProd(p0, concat(dx, dg, db)))
	out.FD, out.FDErr = DirectionalDerivativeFDErr(func(p []float64) float64 {
		LayerNormForward(y, nil, nil, p[:nx], p[nx:nx+hidden], p[nx+hidden:], rows, hidden, eps)
		return dotReal(y, w)
	}, p0, v, h, df)
	return out
}

// RoPENeoXDirectional returns ⟨∇L, vx⟩ for L = ⟨RoPENeoXForward(x), w⟩:
// analytically as ⟨RoPENeoXBackward(w), vx⟩ (the adjoint), by complex step
// and by finite differences (exact up to rounding, L is linear).
func RoPENeoXDirectional(x, w, vx []float64, pos []float64, rows, heads, headDim int, theta float64) Directional {
	n := rows * heads * headDim
	dx := make([]float64, n)
	RoPENeoXBackward(dx, w, pos, rows, heads, headDim, theta)
	var out Directional
	out.Analytic = dotReal(dx, vx)
	out.Scale = ropeGradScale(w, vx, pos, rows, heads, headDim, theta)
	yc := make([]complex128, n)
	out.ComplexStep = ComplexStep(func(p []complex128) complex128 {
		RoPEForwardComplex(yc, p, pos, rows, heads, headDim, theta, RoPENeoX)
		return dotComplex(yc, w)
	}, x, vx, ComplexStepH)
	y := make([]float64, n)
	RoPENeoXForward(y, x, pos, rows, heads, headDim, theta)
	df := 64 * Eps64 * (sumAbsProd(y, w) + sumAbsProd(x, dx))
	out.FD, out.FDErr = DirectionalDerivativeFDErr(func(p []float64) float64 {
		RoPENeoXForward(y, p, pos, rows, heads, headDim, theta)
		return dotReal(y, w)
	}, x, vx, 1/math.Max(maxAbs(vx), 1e-300), df) // L is linear: any step is exact but for rounding
	return out
}

// rmsNormGradScale returns Σ_k |vx_k|·(|A_k| + |B_k|) + Σ_i |vγ_i|·Σ_r|dy·x/rms|
// (see RMSNormBackward for A, B).
func rmsNormGradScale(x, gamma, w, vx, vgamma []float64, rows, hidden int, eps float64) float64 {
	n := float64(hidden)
	scale := 0.0
	for r := 0; r < rows; r++ {
		xr, wr := x[r*hidden:(r+1)*hidden], w[r*hidden:(r+1)*hidden]
		ri := 1 / rmsOf(xr, eps)
		var s kbn
		for j, v := range xr {
			s.addProd(gamma[j]*wr[j], v)
		}
		b := math.Abs(s.sum()) * ri * ri * ri / n
		for i, v := range xr {
			scale += math.Abs(vx[r*hidden+i]) * (ri*math.Abs(gamma[i]*wr[i]) + math.Abs(v)*b)
			scale += math.Abs(vgamma[i] * wr[i] * v * ri)
		}
	}
	return scale
}

// layerNormGradScale returns Σ_k |vx_k|·rstd·(|g_k| + |m1| + |x̂_k·m2|) +
// Σ|vγ·dy·x̂| + Σ|vβ·dy| (see LayerNormBackward).
func layerNormGradScale(x, gamma, w, vx, vgamma, vbeta []float64, rows, hidden int, eps float64) float64 {
	n := float64(hidden)
	c := make([]float64, hidden)
	scale := 0.0
	for r := 0; r < rows; r++ {
		_, rs := lnStats(c, x[r*hidden:(r+1)*hidden], eps)
		wr := w[r*hidden : (r+1)*hidden]
		var m1, m2 kbn
		for j := range c {
			g := gamma[j] * wr[j]
			m1.add(g)
			m2.addProd(g, c[j]*rs)
		}
		a, b := math.Abs(m1.sum()/n), math.Abs(m2.sum()/n)
		for j := range c {
			xh := math.Abs(c[j] * rs)
			scale += math.Abs(vx[r*hidden+j]) * rs * (math.Abs(gamma[j]*wr[j]) + a + xh*b)
			scale += math.Abs(vgamma[j]*wr[j])*xh + math.Abs(vbeta[j]*wr[j])
		}
	}
	return scale
}

// ropeGradScale returns Σ |v_k|·(|w_p·cos| + |w_q·sin|) over the terms of
// dx = R(a)ᵀ·w.
func ropeGradScale(w, vx []float64, pos []float64, rows, heads, headDim int, theta float64) float64 {
	half := headDim / 2
	freq, ang := make([]float64, half), make([]float64, half)
	RoPEFrequencies(freq, headDim, theta)
	sn, cs := make([]float64, half), make([]float64, half)
	scale := 0.0
	for r := 0; r < rows; r++ {
		anglesOf(ang, freq, pos[r])
		for i, a := range ang {
			s, c := math.Sincos(a)
			sn[i], cs[i] = math.Abs(s), math.Abs(c)
		}
		for h := 0; h < heads; h++ {
			base := (r*heads + h) * headDim
			for i := range ang {
				s, c := sn[i], cs[i]
				p, q := base+i, base+i+half
				wp, wq := math.Abs(w[p]), math.Abs(w[q])
				scale += math.Abs(vx[p])*(wp*c+wq*s) + math.Abs(vx[q])*(wp*s+wq*c)
			}
		}
	}
	return scale
}

// fdStep returns 1e-3·min(scales)/max|v| (1e-3 if v is zero).
func fdStep(scales, v []float64) float64 {
	s := math.Inf(1)
	for _, x := range scales {
		s = math.Min(s, x)
	}
	m := maxAbs(v)
	if m == 0 || math.IsInf(s, 1) || s == 0 {
		return 1e-3
	}
	return 1e-3 * s / m
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
