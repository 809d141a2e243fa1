package oracle

import "math"

// VarianceAlgorithm names how a LayerNorm kernel computes the variance.
type VarianceAlgorithm int

const (
	// TwoPassVariance is var = Σ(x−μ̂)²/n after a first pass computing μ̂.
	TwoPassVariance VarianceAlgorithm = iota
	// OnePassVariance is var = max(Σx²/n − μ̂², 0), which cancels
	// catastrophically when |μ| ≫ σ.
	OnePassVariance
)

// String returns "two-pass" or "one-pass".
func (a VarianceAlgorithm) String() string {
	if a == OnePassVariance {
		return "one-pass"
	}
	return "two-pass"
}

// lnRowBound holds the exact statistics of one LayerNorm row and the error
// bounds of the kernel's float32 statistics.
type lnRowBound struct {
	mu, variance, r float64   // exact mean, variance, rstd
	c               []float64 // exact x − μ
	eMu             float64   // |μ̂ − μ|
	eps             []float64 // ε_j ≥ |ĉ_j − c_j|, ĉ_j = fl(x_j − μ̂)
	rho             float64   // relative error of r̂
}

// lnRow derives the error of μ̂, ĉ_j and r̂ for one row; see
// LayerNormForwardTol.
func lnRow(x []float64, eps float64, red Reduction, alg VarianceAlgorithm) lnRowBound {
	n := len(x)
	nf := float64(n)
	d := red.Depth(n)
	b := lnRowBound{c: make([]float64, n), eps: make([]float64, n)}
	b.mu, b.variance = centered(b.c, x)
	var m1 float64
	for _, v := range x {
		m1 += math.Abs(v)
	}
	m1 /= nf
	// Mean: d additions then the division by n (div.full or ·fl(1/n):
	// γ_6, meanDivRoundings). No underflow error in additions; the
	// quotient may underflow, by 5η (div.full's 2 ulp of 2^-149, plus ½).
	b.eMu = Gamma(d+meanDivRoundings)*m1 + DivFullUnderflow
	var q, sumAbsC, sumEps2 float64
	for j, cj := range b.c {
		b.eps[j] = b.eMu + U32*(math.Abs(cj)+b.eMu)
		q += cj * cj
		sumAbsC += math.Abs(cj)
		sumEps2 += b.eps[j] * b.eps[j]
	}
	var eVar float64
	switch alg {
	case OnePassVariance:
		var s2 kbn
		for _, v := range x {
			s2.addProd(v, v)
		}
		m2 := s2.sum() / nf
		eM2 := Gamma(d+1+meanDivRoundings)*m2 + Eta32*(1+Gamma(d+meanDivRoundings)) + DivFullUnderflow
		am := math.Abs(b.mu)
		eMu2 := 2*am*b.eMu + b.eMu*b.eMu + U32*(am+b.eMu)*(am+b.eMu) + Eta32
		eVar = eM2 + eMu2 + U32*(b.variance+eM2+eMu2)
	default:
		// Σĉ² − Σc² = 2Σc_j·e_j + Σe_j², e_j = Δ + δ_j(c_j+Δ), Δ = μ−μ̂;
		// 2ΔΣc_j = 0 exactly, so only 2u(Q + |Δ|Σ|c|) + Σε_j² remain.
		eQ1 := 2*U32*(q+b.eMu*sumAbsC) + sumEps2
		eQ := eQ1 + Gamma(d+1)*(q+eQ1) + nf*Eta32*(1+Gamma(d))
		eVar = (eQ/nf)*(1+Gamma(meanDivRoundings)) + Gamma(meanDivRoundings)*b.variance + DivFullUnderflow
	}
	v := b.variance + eps
	eEps := U32*eps + Eta32
	eV := eVar + eEps + U32*(v+eVar+eEps)
	tau := eV / v
	if v == 0 {
		tau = math.Inf(1)
	}
	b.r = 1 / math.Sqrt(v)
	// var̂ ≥ 0 (a sum of squares, or clamped), so v̂ ≥ eps₃₂(1−u).
	b.rho = relMul(relRsqrt(tau, epsFloor(eps, v)), rsqrtErr)
	return b
}

// LayerNormForwardTol writes per-element error bounds for a float32
// LayerNormForward kernel: |ŷ − y| ≤ tolY, |μ̂ − μ| ≤ tolMean,
// |rstd̂ − rstd| ≤ tolRstd (tolMean and tolRstd may be nil). red is the
// shape of the kernel's reductions over hidden; alg its variance formula.
//
// Assumed float32 operation sequence:
//
//	μ̂   = (Σ x_j)/n                        order red, depth d
//	ĉ_j = x_j − μ̂
//	var = (Σ ĉ_j²)/n                       TwoPassVariance
//	var = max((Σ x_j²)/n − μ̂·μ̂, 0)         OnePassVariance
//	r̂   = rsqrtf(var + float32(eps))  or 1/sqrtf(·)
//	ŷ_j = ĉ_j·r̂·γ_j + β_j                   (≤ 3 roundings, any FMA)
//
// Derivation (M1 = Σ|x|/n, c_j = x_j − μ, Q = Σc_j², r = (var+eps)^{-1/2}):
//
//  0. Every division by n is div.full.f32 (2 ulp: 5u, or 5η on a
//     subnormal quotient) or a product with fl(1/n) (5u then u); as
//     (1+5u)(1+u) ≤ (1+u)^6 it counts as 6 roundings, and its underflow
//     as 5η. A correctly rounded division is within this.
//  1. |μ̂ − μ| ≤ e_μ = γ_{d+6}·M1 + 5η. The bound uses Σ|x|, not |μ|: with
//     an offset row (|μ| ≫ σ) the sum's rounding errors scale with the
//     magnitudes summed, and the subtraction x − μ̂ exposes them.
//  2. ĉ_j = (c_j + Δ)(1+δ_j), Δ = μ − μ̂: |ĉ_j − c_j| ≤ ε_j = e_μ + u(|c_j| + e_μ).
//  3. Two-pass: Σĉ_j² − Q = 2ΔΣc_j + 2Σδ_j c_j(c_j+Δ) + Σe_j² and Σc_j = 0,
//     so |Σĉ² − Q| ≤ e₁ = 2u(Q + e_μΣ|c_j|) + Σε_j² (the mean error enters
//     only at second order), then the squares and d additions:
//     e_Q = e₁ + γ_{d+1}(Q + e₁) + nη(1+γ_d), e_var = (1+γ_6)e_Q/n + γ_6·var + 5η.
//     One-pass: e_m2 = γ_{d+7}·Σx²/n + η(1+γ_{d+6}) + 5η, e_μ² = 2|μ|e_μ + e_μ² + u(|μ|+e_μ)² + η,
//     e_var = e_m2 + e_μ² + u(var + e_m2 + e_μ²) (clamping at 0 only helps).
//  4. v = var + eps: e_v = e_var + u·eps + η + u(v + e_var + u·eps + η),
//     τ = e_v/v, ρ = (max(1−τ, ℓ)^{-1/2} − 1) ⊕ rsqrtErr (⊕: (1+a)(1+b)−1;
//     rsqrtErr ≈ 7u covers rsqrt.approx, and sqrt.approx then div.full), where
//     ℓ = (eps(1−u) − η)(1−u)/v uses var̂ ≥ 0 (two-pass: a sum of squares;
//     one-pass: clamped), which keeps the one-pass bound finite when the
//     cancellation destroys every digit of var.
//  5. |ĉ_j·r̂ − c_j·r| ≤ r(ε_j(1+ρ) + |c_j|ρ); two product roundings and the
//     addition of β: E₁ = |γ_j|·r·(ε_j(1+ρ) + |c_j|ρ)(1+γ_2) + γ_2|γ_j c_j|r
//     + η(5|γ_j| + |c_j| + ε_j + 1)(1+u) (an underflowing ĉ·r̂, or ĉ/σ̂ by
//     div.full at 5η, times γ; r̂·γ; and the product), tolY_j = E₁ + u(|y_j| + E₁).
//
// tolMean = e_μ and tolRstd = r·ρ.
func LayerNormForwardTol(tolY, tolMean, tolRstd []float64, x, gamma, beta []float64, rows, hidden int, eps float64, red Reduction, alg VarianceAlgorithm) {
	mustLayerNormForward(layerNormTol, tolY, tolMean, tolRstd, x, gamma, beta, rows, hidden)
	for r := 0; r < rows; r++ {
		b := lnRow(x[r*hidden:(r+1)*hidden], eps, red, alg)
		if tolMean != nil {
			tolMean[r] = b.eMu
		}
		if tolRstd != nil {
			tolRstd[r] = b.r * b.rho
		}
		out := tolY[r*hidden : (r+1)*hidden]
		for j, cj := range b.c {
			ag := math.Abs(gamma[j])
			e1 := ag*b.r*(b.eps[j]*(1+b.rho)+math.Abs(cj)*b.rho)*(1+Gamma(2)) +
				Gamma(2)*ag*math.Abs(cj)*b.r + (DivFullUnderflow*ag+Eta32*(math.Abs(cj)+b.eps[j]+1))*(1+U32)
			y := math.Abs(cj*b.r*gamma[j] + beta[j])
			out[j] = e1 + U32*(y+e1)
		}
	}
}

// LayerNormBackwardTol writes per-element error bounds for a float32
// LayerNormBackward kernel (tolDGamma, tolDBeta may be nil). red is the
// shape of the per-row reductions, rowRed of the sums over rows.
//
// Assumed float32 operation sequence: μ̂, r̂ as in LayerNormForwardTol
// (two-pass; recomputed, or read from the forward's stored mean and rstd),
// then
//
//	xh_j = ĉ_j·r̂;  g_j = γ_j·dy_j
//	m1 = (Σ g_j)/n;  m2 = (Σ g_j·xh_j)/n         order red
//	dx_i = r̂·((g_i − m1) − xh_i·m2)
//	dγ_i = Σ_rows dy_i·xh_i;  dβ_i = Σ_rows dy_i   order rowRed
//
// Derivation (exact x̂ = c·r, g = γ·dy, z_i = g_i − m1 − x̂_i·m2, dx = r·z):
//
//  1. |xh_j − x̂_j| ≤ h_j = r(ε_j(1+ρ) + |c_j|ρ)(1+u) + u·r|c_j| + η.
//  2. |ĝ_j − g_j| ≤ e_g = u|g_j| + η.
//  3. |m̂1 − m1| ≤ (Σe_g/n)(1+γ_{d+6}) + γ_{d+6}Σ|g|/n + 5η (d additions,
//     the division by n as in LayerNormForwardTol step 0).
//  4. terms t_j = g_j·x̂_j: |t̂_j − t_j| ≤ te_j = (|g_j|h_j + (|x̂_j|+h_j)e_g)(1+u)
//     + u|t_j| + η; |m̂2 − m2| ≤ (Σte/n)(1+γ_{d+6}) + γ_{d+6}Σ|t|/n + 5η.
//  5. The inner expression propagates E_z = e_g + e_m1 + h_i(|m2| + e_m2)
//     + |x̂_i|e_m2 + η and rounds three times:
//     tol_z = E_z(1+γ_3) + u(|g_i| + |m1| + |x̂_i·m2| + |z_i|)(1+γ_2).
//  6. dx̂ = fl(r̂·ẑ): tol = r(1+ρ)(1+u)·tol_z + r|z_i|·(ρ ⊕ u) + η.
//
// dγ: per term |dy|h(1+u) + u|dy·x̂| + η, then depth d_r = rowRed.Depth(rows):
// tol = Σ(term errors)(1+γ_{d_r}) + γ_{d_r}Σ|dy·x̂|. dβ: γ_{d_r}Σ|dy|.
func LayerNormBackwardTol(tolDX, tolDGamma, tolDBeta []float64, x, gamma, dy []float64, rows, hidden int, eps float64, red, rowRed Reduction) {
	mustNormBackward(gradTolOut, tolDX, tolDGamma, tolDBeta, x, gamma, dy, rows, hidden)
	nf := float64(hidden)
	d := red.Depth(hidden)
	dr := rowRed.Depth(rows)
	gdr := Gamma(dr)
	var dgErr, dgAbs, dbAbs []float64
	if tolDGamma != nil {
		dgErr = make([]float64, hidden)
		dgAbs = make([]float64, hidden)
	}
	if tolDBeta != nil {
		dbAbs = make([]float64, hidden)
	}
	h := make([]float64, hidden)
	xh := make([]float64, hidden)
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		b := lnRow(xr, eps, red, TwoPassVariance)
		var m1, m2 kbn
		var sumEg, sumG, sumTe, sumT float64
		for j, cj := range b.c {
			xh[j] = cj * b.r
			h[j] = b.r*(b.eps[j]*(1+b.rho)+math.Abs(cj)*b.rho)*(1+U32) + U32*b.r*math.Abs(cj) + Eta32
			g := gamma[j] * dyr[j]
			eg := U32*math.Abs(g) + Eta32
			t := g * xh[j]
			m1.add(g)
			m2.addProd(g, xh[j])
			sumEg += eg
			sumG += math.Abs(g)
			sumT += math.Abs(t)
			sumTe += (math.Abs(g)*h[j]+(math.Abs(xh[j])+h[j])*eg)*(1+U32) + U32*math.Abs(t) + Eta32
		}
		mm1 := m1.sum() / nf
		mm2 := m2.sum() / nf
		eM1 := (sumEg/nf)*(1+Gamma(d+meanDivRoundings)) + Gamma(d+meanDivRoundings)*sumG/nf + DivFullUnderflow
		eM2 := (sumTe/nf)*(1+Gamma(d+meanDivRoundings)) + Gamma(d+meanDivRoundings)*sumT/nf + DivFullUnderflow
		out := tolDX[r*hidden : (r+1)*hidden]
		for i := range out {
			g := gamma[i] * dyr[i]
			eg := U32*math.Abs(g) + Eta32
			z := g - mm1 - xh[i]*mm2
			ez := eg + eM1 + h[i]*(math.Abs(mm2)+eM2) + math.Abs(xh[i])*eM2 + Eta32
			tz := ez*(1+Gamma(3)) + U32*(math.Abs(g)+math.Abs(mm1)+math.Abs(xh[i]*mm2)+math.Abs(z))*(1+Gamma(2))
			out[i] = b.r*(1+b.rho)*(1+U32)*tz + b.r*math.Abs(z)*relMul(b.rho, U32) + Eta32
			if dgErr != nil {
				dgErr[i] += math.Abs(dyr[i])*h[i]*(1+U32) + U32*math.Abs(dyr[i]*xh[i]) + Eta32
				dgAbs[i] += math.Abs(dyr[i] * xh[i])
			}
			if dbAbs != nil {
				dbAbs[i] += math.Abs(dyr[i])
			}
		}
	}
	fl := rowRed.flushAbs(rows)
	for i := 0; i < hidden; i++ {
		if tolDGamma != nil {
			tolDGamma[i] = dgErr[i]*(1+gdr) + gdr*dgAbs[i] + fl
		}
		if tolDBeta != nil {
			tolDBeta[i] = gdr*dbAbs[i] + fl
		}
	}
}
