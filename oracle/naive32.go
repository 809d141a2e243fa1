package oracle

import "math"

// The functions in this file evaluate each kernel formula in float32, in the
// naive serial order (Reduction depth n−1), with correctly rounded basic
// operations and square roots and nearly correctly rounded exp2/log2/sin/cos
// (binary64 library calls rounded to float32). Their unexported forms take
// an Arith32 for the divisions, square roots, exp2 and log2, which under
// Arith32.Adversarial take the worst values the instructions' documented
// errors allow (Case.CheckWith). They follow the operation
// sequences the tolerance functions assume, so they are (a) evidence that
// the bounds hold for SerialReduction and (b) a yardstick: a kernel's error
// divided by the naive float32 error says how much better or worse than
// "just doing it in float32" the kernel is.

func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) }

func rmsNormRow32(y []float32, x, gamma []float32, eps float32, ar Arith32) (rms float32) {
	var ss float32
	for _, v := range x {
		ss += v * v
	}
	ms := ar.Div(ss, float32(len(x)))
	r := ar.Sqrt(ms + eps)
	inv := ar.Div(1, r)
	for i, v := range x {
		y[i] = v * inv * gamma[i]
	}
	return r
}

// RMSNormForward32Naive is RMSNormForward in float32: ss = Σx² serially,
// rms = sqrtf(ss/n + eps), y = x·(1/rms)·γ. rms may be nil.
func RMSNormForward32Naive(y, rms []float32, x, gamma []float32, rows, hidden int, eps float32) {
	rmsNormForward32(y, rms, x, gamma, rows, hidden, eps, Arith32{})
}

func rmsNormForward32(y, rms []float32, x, gamma []float32, rows, hidden int, eps float32, ar Arith32) {
	rmsNormRows(y, rms, x, gamma, rows, hidden, func(y, x []float32) float32 {
		return rmsNormRow32(y, x, gamma, eps, ar)
	})
}

// RMSNormBackward32Naive is RMSNormBackward in float32 with the upstream
// operation order: ri = 1/sqrtf(mean(x²)+eps), S = Σγ·dy·x serially,
// c = S/n, dx = ri·(γ·dy − x·(ri·ri)·c), dγ += dy·x·ri serially over rows.
// dgamma may be nil.
func RMSNormBackward32Naive(dx, dgamma []float32, x, gamma, dy []float32, rows, hidden int, eps float32) {
	rmsNormBackward32(dx, dgamma, x, gamma, dy, rows, hidden, eps, Arith32{})
}

func rmsNormBackward32(dx, dgamma []float32, x, gamma, dy []float32, rows, hidden int, eps float32, ar Arith32) {
	mustNormBackward(gradOut, dx, dgamma, nil, x, gamma, dy, rows, hidden)
	clear(dgamma)
	n := float32(hidden)
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		var ss, dot float32
		for i, v := range xr {
			ss += v * v
			dot += gamma[i] * dyr[i] * v
		}
		ri := ar.Div(1, ar.Sqrt(ar.Div(ss, n)+eps))
		c := ar.Div(dot, n)
		ri2 := ri * ri
		out := dx[r*hidden : (r+1)*hidden]
		for i, v := range xr {
			out[i] = ri * (gamma[i]*dyr[i] - v*ri2*c)
		}
		for i := range dgamma {
			dgamma[i] += dyr[i] * xr[i] * ri
		}
	}
}

// FusedResidualRMSNorm32Naive computes s = residual + x in float32 and
// RMSNormForward32Naive of s. rms may be nil.
func FusedResidualRMSNorm32Naive(s, y, rms []float32, residual, x, gamma []float32, rows, hidden int, eps float32) {
	fusedResidualRMSNorm32(s, y, rms, residual, x, gamma, rows, hidden, eps, Arith32{})
}

func fusedResidualRMSNorm32(s, y, rms []float32, residual, x, gamma []float32, rows, hidden int, eps float32, ar Arith32) {
	residualSum(s, residual, x, rows, hidden)
	rmsNormForward32(y, rms, s, gamma, rows, hidden, eps, ar)
}

// PerHeadRMSNorm32Naive is PerHeadRMSNorm in float32 (each head normalised by
// RMSNormForward32Naive). rms may be nil.
func PerHeadRMSNorm32Naive(y, rms []float32, x, gamma []float32, rows, heads, headDim int, eps float32) {
	mustShape(rows, heads*headDim)
	RMSNormForward32Naive(y, rms, x, gamma, rows*heads, headDim, eps)
}

// layerNormStats32 returns the float32 mean and rstd of a row, two-pass
// (var = Σ(x−μ)²/n) or one-pass (var = max(Σx²/n − μ², 0)).
func layerNormStats32(x []float32, eps float32, onePass bool, ar Arith32) (mean, rstd float32) {
	n := float32(len(x))
	var s float32
	for _, v := range x {
		s += v
	}
	mean = ar.Div(s, n)
	var vr float32
	if onePass {
		var s2 float32
		for _, v := range x {
			s2 += v * v
		}
		vr = ar.Div(s2, n) - mean*mean
		if vr < 0 {
			vr = 0
		}
	} else {
		var q float32
		for _, v := range x {
			d := v - mean
			q += d * d
		}
		vr = ar.Div(q, n)
	}
	return mean, ar.Div(1, ar.Sqrt(vr+eps))
}

func layerNormForward32(y, mean, rstd []float32, x, gamma, beta []float32, rows, hidden int, eps float32, onePass bool, ar Arith32) {
	layerNormRows(y, mean, rstd, x, gamma, beta, rows, hidden, func(y, x, _ []float32) (mu, rs float32) {
		mu, rs = layerNormStats32(x, eps, onePass, ar)
		for j, v := range x {
			y[j] = (v-mu)*rs*gamma[j] + beta[j]
		}
		return mu, rs
	})
}

// LayerNormForward32Naive is LayerNormForward in float32, two-pass: μ = Σx/n,
// var = Σ(x−μ)²/n, rstd = 1/sqrtf(var+eps), y = (x−μ)·rstd·γ + β.
// mean and rstd may be nil.
func LayerNormForward32Naive(y, mean, rstd []float32, x, gamma, beta []float32, rows, hidden int, eps float32) {
	layerNormForward32(y, mean, rstd, x, gamma, beta, rows, hidden, eps, false, Arith32{})
}

// LayerNormForward32NaiveOnePass is LayerNormForward in float32 with the
// one-pass variance max(Σx²/n − μ², 0), the formula whose cancellation
// LayerNormForwardTol with OnePassVariance accounts for.
func LayerNormForward32NaiveOnePass(y, mean, rstd []float32, x, gamma, beta []float32, rows, hidden int, eps float32) {
	layerNormForward32(y, mean, rstd, x, gamma, beta, rows, hidden, eps, true, Arith32{})
}

// LayerNormBackward32Naive is LayerNormBackward in float32: it recomputes
// μ and rstd two-pass, x̂ = (x−μ)·rstd, g = γ·dy, m1 = Σg/n, m2 = Σg·x̂/n,
// dx = rstd·((g − m1) − x̂·m2), dγ += dy·x̂ and dβ += dy serially over rows.
// dgamma and dbeta may be nil.
func LayerNormBackward32Naive(dx, dgamma, dbeta []float32, x, gamma, dy []float32, rows, hidden int, eps float32) {
	layerNormBackward32(dx, dgamma, dbeta, x, gamma, dy, rows, hidden, eps, Arith32{})
}

func layerNormBackward32(dx, dgamma, dbeta []float32, x, gamma, dy []float32, rows, hidden int, eps float32, ar Arith32) {
	mustNormBackward(gradOut, dx, dgamma, dbeta, x, gamma, dy, rows, hidden)
	clear(dgamma)
	clear(dbeta)
	n := float32(hidden)
	xh := make([]float32, hidden)
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		mu, rs := layerNormStats32(xr, eps, false, ar)
		var s1, s2 float32
		for j, v := range xr {
			xh[j] = (v - mu) * rs
			g := gamma[j] * dyr[j]
			s1 += g
			s2 += g * xh[j]
		}
		m1 := ar.Div(s1, n)
		m2 := ar.Div(s2, n)
		out := dx[r*hidden : (r+1)*hidden]
		for j := range out {
			out[j] = rs * ((gamma[j]*dyr[j] - m1) - xh[j]*m2)
		}
		for j := range dgamma {
			dgamma[j] += dyr[j] * xh[j]
		}
		for j := range dbeta {
			dbeta[j] += dyr[j]
		}
	}
}

// RoPEFrequency32 is the float32 frequency the naive evaluation uses,
// exp2f(−(2i/headDim)·log2f(θ)), with exp2f and log2f taken as the binary64
// functions rounded to float32.
func RoPEFrequency32(i, headDim int, theta float32) float32 {
	return ropeFrequency32(i, headDim, theta, Arith32{})
}

func ropeFrequency32(i, headDim int, theta float32, ar Arith32) float32 {
	l := ar.Lg2(theta)
	e := ar.Div(float32(2*i), float32(headDim))
	return ar.Exp2(-e * l)
}

func rope32(y, x []float32, pos []float64, rows, heads, headDim int, theta float32, style RoPEStyle, sign float32, ar Arith32) {
	mustRoPE(ropeOut, y, x, pos, rows, heads, headDim)
	w, half := heads*headDim, headDim/2
	freq := make([]float32, half)
	for i := range freq {
		freq[i] = ropeFrequency32(i, headDim, theta, ar)
	}
	sn := make([]float32, half)
	cs := make([]float32, half)
	for r := 0; r < rows; r++ {
		p := float32(pos[r])
		for i, f := range freq {
			a := float64(p * f)
			sn[i] = sign * float32(math.Sin(a))
			cs[i] = float32(math.Cos(a))
		}
		rotateRow(y[r*w:(r+1)*w], x[r*w:(r+1)*w], sn, cs, headDim, style)
	}
}

// RoPENeoXForward32Naive is RoPENeoXForward in float32: freq from
// RoPEFrequency32, angle = float32(pos)·freq, sincos of the float32 angle,
// then the two products and one addition per output.
func RoPENeoXForward32Naive(y, x []float32, pos []float64, rows, heads, headDim int, theta float32) {
	rope32(y, x, pos, rows, heads, headDim, theta, RoPENeoX, 1, Arith32{})
}

// RoPENeoXBackward32Naive is RoPENeoXBackward in float32 (rotation by the
// negated float32 angle).
func RoPENeoXBackward32Naive(dx, dy []float32, pos []float64, rows, heads, headDim int, theta float32) {
	rope32(dx, dy, pos, rows, heads, headDim, theta, RoPENeoX, -1, Arith32{})
}

// RoPEGPTJForward32Naive is RoPEGPTJForward in float32.
func RoPEGPTJForward32Naive(y, x []float32, pos []float64, rows, heads, headDim int, theta float32) {
	rope32(y, x, pos, rows, heads, headDim, theta, RoPEGPTJ, 1, Arith32{})
}
