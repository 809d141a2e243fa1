package oracle

import (
	"fmt"
	"math"
)

// ulpErr returns the relative error bound of a function documented to be
// within k ulp of the correctly rounded float32 result: the correctly rounded
// result is within ½ ulp of the exact value, and one ulp of a normal y is at
// most 2·U32·|y|, so |ŷ−y| ≤ (k+½)·ulp(y) ≤ (2k+1)·U32·|y|.
func ulpErr(k float64) float64 { return (2*k + 1) * U32 }

// rsqrtErr is the relative error allowed for the kernel's reciprocal square
// root r̂ of a computed v̂ (the error of v̂ itself is τ, separately), the
// largest of the forms kernels use:
//
//   - rsqrt.approx.f32: 2^-22.9 (RsqrtApproxRelErr), about 2.14u;
//   - CUDA rsqrtf: 2 ulp, 5u;
//   - 1/sqrt(v) as sqrt.approx.f32 (2^-23 = 2u) then div.full.f32 (5u),
//     Triton's 1.0 / tl.sqrt(v): |1/(1+θ) − 1| ≤ 2u/(1−2u) for the root,
//     then the quotient: relInv(2u) ⊕ 5u ≈ 7u. x/sqrt(v) has the same two
//     errors where x·r̂ has r̂'s and one rounding, so it is covered too.
var rsqrtErr = math.Max(math.Max(RsqrtApproxRelErr, ulpErr(2)), relMul(relInv(SqrtApproxRelErr), DivFullRelErr))

// storedRMSErr is the relative error allowed for a stored rms = √v̂
// beyond τ: sqrt.approx.f32 (2u; sqrt.rn is within it) or the reciprocal
// of a reciprocal square root, relInv(rsqrtErr) ⊕ 5u (div.full).
var storedRMSErr = math.Max(SqrtApproxRelErr, relMul(relInv(rsqrtErr), DivFullRelErr))

// meanDivRelErr is the relative error of a mean ŝ/n: div.full.f32 (5u), or
// ŝ·fl(1/n) with 1/n by div.full (5u) and the product (u). Since
// (1+5u)(1+u) ≤ (1+u)^6 it counts as six roundings in γ: meanDivRoundings.
// The quotient may underflow, by at most DivFullUnderflow (5η): 1/n never
// does and the product's own underflow is η < 5η.
const meanDivRoundings = 6

// rmsRowBound holds the exact statistics of one RMSNorm row and the relative
// error bounds of the float32 values a kernel derives from them.
type rmsRowBound struct {
	n      int
	ss     float64 // Σx² (exact)
	v      float64 // ss/n + eps
	rms    float64 // sqrt(v)
	ri     float64 // 1/rms
	tau    float64 // bound on |v̂ − v|/v
	rhoInv float64 // bound on the relative error of the kernel's 1/rms
	rhoRMS float64 // bound on the relative error of a stored rms
}

// rmsRow derives the bound on the kernel's v̂ = fl(fl(Σ fl(x²))/n + eps32)
// for one row (see RMSNormForwardTol for the derivation).
func rmsRow(x []float64, eps float64, red Reduction) rmsRowBound {
	return rmsRowOf(sumSquares(x), len(x), eps, red)
}

// rmsRowOf is rmsRow for a row of n values whose compensated Σx² is ss.
func rmsRowOf(ss float64, n int, eps float64, red Reduction) rmsRowBound {
	d := red.Depth(n)
	b := rmsRowBound{n: n, ss: ss}
	nf := float64(n)
	b.v = b.ss/nf + eps
	b.rms = math.Sqrt(b.v)
	b.ri = 1 / b.rms
	// (1) Σ fl(x_i²) with depth d: every term goes through one product
	// rounding and at most d addition roundings; all terms are ≥ 0.
	// Underflowing squares add at most Eta32 each.
	eSS := Gamma(d+1)*b.ss + nf*Eta32*(1+Gamma(d))
	// (2) mean: fl(ŝs/n) by div.full or fl(ŝs·fl(1/n)): γ_6 and 5η
	// (meanDivRoundings).
	eM := Gamma(meanDivRoundings)*(b.ss/nf) + (eSS/nf)*(1+Gamma(meanDivRoundings)) + DivFullUnderflow
	// (3) eps rounded to float32, then the addition.
	eEps := U32*eps + Eta32
	eV := eM + eEps + U32*(b.v+eM+eEps)
	b.tau = eV / b.v
	if b.v == 0 {
		b.tau = math.Inf(1)
	}
	// (4) 1/sqrt(v̂) = v^{-1/2}·(1+θ)^{-1/2} with |θ| ≤ τ, then the
	// reciprocal square root's own error.
	b.rhoInv = relMul(relRsqrt(b.tau, epsFloor(eps, b.v)), rsqrtErr)
	// A stored rms is sqrt(v̂) or 1/rsqrt(v̂): storedRMSErr.
	b.rhoRMS = relMul(relSqrt(b.tau, epsFloor(eps, b.v)), storedRMSErr)
	return b
}

// RMSNormForwardTol writes per-element error bounds for a float32
// RMSNormForward kernel: |ŷ_i − y_i| ≤ tolY[i] and |rmŝ_r − rms_r| ≤
// tolRMS[r] (tolRMS may be nil), where y and rms are the exact values
// RMSNormForward computes from the same float32 inputs. red is the shape of
// the kernel's Σx² reduction over hidden.
//
// Assumed float32 operation sequence (any FMA contraction only removes
// roundings and stays within the bound):
//
//	ss  = Σ x_i·x_i          in the order red (depth d = red.Depth(n))
//	ms  = ss/n  or ss·(1/n)  (div.full.f32 or div.rn)
//	v   = ms + float32(eps)
//	ri  = rsqrt(v) or 1/sqrt(v) (rsqrt.approx, rsqrtf, sqrt.approx and
//	      div.full), or sqrt(v) followed by x/rms
//	y_i = x_i·ri·γ_i         (two roundings, any association)
//
// Derivation, with u = U32 and γ_k = Gamma(k), η = Eta32; each
// instruction's error is its documented one (instr.go), not correct
// rounding:
//
//  1. Each of the n nonnegative terms fl(x_i²) carries one rounding and
//     goes through at most d rounded additions, so
//     |ŝs − ss| ≤ γ_{d+1}·ss + n·η·(1+γ_d) (η: an underflowing square).
//  2. Division by n: div.full is within 2 ulp (5u, or 5η on a subnormal
//     quotient); ss·fl(1/n) is 5u then u. (1+5u)(1+u) ≤ (1+u)^6, so
//     |m̂s − ss/n| ≤ γ_6·ss/n + (1+γ_6)·e_ss/n + 5η.
//  3. eps is rounded to float32 (u·eps + η), then v̂ = fl(m̂s + eps₃₂) adds
//     u·|v̂|: e_v = e_ms + e_eps + u·(v + e_ms + e_eps). Let τ = e_v/v.
//  4. v̂^{-1/2} = v^{-1/2}·(1+θ)^{-1/2} with |θ| ≤ τ, and
//     |(1+θ)^{-1/2} − 1| ≤ (1−τ)^{-1/2} − 1 ≈ τ/2; since ŝs ≥ 0, also
//     v̂ ≥ (eps(1−u) − η)(1−u), which keeps the bound finite when τ ≥ 1
//     (underflowed tiny rows). The reciprocal square root adds rsqrtErr
//     (≈ 7u: sqrt.approx 2u then div.full 5u; rsqrt.approx and rsqrtf are
//     within it). So ρ = (1+τ')(1+rsqrtErr) − 1 with τ' = (1−τ)^{-1/2} − 1.
//  5. ŷ_i = x_i·r̂i·γ_i·(1+δ₁)(1+δ₂): |ŷ_i − y_i| ≤ |y_i|·((1+ρ)(1+γ_2) − 1)
//     plus η·((5|γ_i| + |x_i|)(1+u) + 1) for an underflowing x_i·ri (η, or
//     5η for x_i/rms by div.full, then times γ_i), ri·γ_i and the final
//     product.
//
// First order: tolY ≈ |y_i|·((d+8)/2 + 9)·u. For rms: sqrt(v̂) or
// 1/rsqrt(v̂): tolRMS = rms·((1+(1−(1−τ)^{1/2}))(1+storedRMSErr) − 1).
func RMSNormForwardTol(tolY, tolRMS []float64, x, gamma []float64, rows, hidden int, eps float64, red Reduction) {
	mustRMSNormForward(rmsNormTolOut, tolY, tolRMS, x, gamma, rows, hidden)
	rmsForwardTol(nil, nil, tolY, tolRMS, x, gamma, rows, hidden, eps, red)
}

// RMSNormForwardWithTol is RMSNormForward and RMSNormForwardTol in one
// pass: each row's compensated Σx² is computed once and serves the
// reference y, rms and their bounds tolY, tolRMS, which are bit for bit
// what the two functions write. rms and tolRMS may be nil.
func RMSNormForwardWithTol(y, rms, tolY, tolRMS []float64, x, gamma []float64, rows, hidden int, eps float64, red Reduction) {
	mustRMSNormForward(rmsNormOut, y, rms, x, gamma, rows, hidden)
	mustRMSNormForward(rmsNormTolOut, tolY, tolRMS, x, gamma, rows, hidden)
	rmsForwardTol(y, rms, tolY, tolRMS, x, gamma, rows, hidden, eps, red)
}

// RMSNormForwardSums32 writes, for each row of the float32 tensor x
// (rows×hidden), the oracle's Σx² to ss (len rows) and, when ss32 is not
// nil, the naive float32 Σx² to ss32 (len rows), in one pass over x. ss[r]
// is the compensated sum that RMSNormForward, RMSNormForwardTol and
// RMSNormForwardWithTol take of the widened row, bit for bit; ss32[r] is
// RMSNormForward32Naive's serial float32 sum. Together with
// RMSNormForwardRow32 they let a check evaluate the reference, its bound and
// the naive yardstick a row at a time from float32 data: the two sums are
// dependent chains whose latencies overlap in one loop, and nothing is
// widened or stored beyond a row.
func RMSNormForwardSums32(ss []float64, ss32 []float32, x []float32, rows, hidden int) {
	mustShape(rows, hidden)
	mustLen("ss", ss, rows)
	mustLenOpt("ss32", ss32, rows)
	mustLen("x", x, rows*hidden)
	// Each row's sums are dependent chains (a csum step is four dependent
	// additions), so a row at a time runs at their latency. Four rows side
	// by side give the CPU four independent chains to overlap; each row's
	// terms are still added in its own order, so every sum is bit for bit
	// the one a row alone would give (TestRMSNormForwardRow32IsBitIdentical).
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0 := x[r*hidden : (r+1)*hidden]
		x1 := x[(r+1)*hidden : (r+2)*hidden][:len(x0)]
		x2 := x[(r+2)*hidden : (r+3)*hidden][:len(x0)]
		x3 := x[(r+3)*hidden : (r+4)*hidden][:len(x0)]
		var a0, a1, a2, a3 csum
		var s0, s1, s2, s3 float32
		for i, v0 := range x0 {
			v1, v2, v3 := x1[i], x2[i], x3[i]
			w0, w1, w2, w3 := float64(v0), float64(v1), float64(v2), float64(v3)
			a0, a1, a2, a3 = a0.plus(w0*w0), a1.plus(w1*w1), a2.plus(w2*w2), a3.plus(w3*w3)
			s0, s1, s2, s3 = s0+v0*v0, s1+v1*v1, s2+v2*v2, s3+v3*v3
		}
		for k, a := range [4]csum{a0, a1, a2, a3} {
			ss[r+k] = sumSquares32Of(a, x[(r+k)*hidden:(r+k+1)*hidden])
		}
		if ss32 != nil {
			ss32[r], ss32[r+1], ss32[r+2], ss32[r+3] = s0, s1, s2, s3
		}
	}
	for ; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		// The square of a float32 is exact in binary64 (squareIsExact), so
		// sumSquares adds v² alone: the same csum, term by term.
		var a csum
		var s32 float32
		for _, v := range xr {
			w := float64(v)
			a = a.plus(w * w)
			s32 += v * v
		}
		if ss32 != nil {
			ss32[r] = s32
		}
		ss[r] = sumSquares32Of(a, xr)
	}
}

// sumSquares32Of returns sumSquares of the widened xr given a, the csum of
// its squares: a's sum, or, when TwoSum overflowed, sumSquares' fallback
// (unreachable: Σx² ≤ n·2^256 for float32 data).
func sumSquares32Of(a csum, xr []float32) float64 {
	if a.overflowed() {
		var k kbn
		for _, v := range xr {
			k.addProd(float64(v), float64(v))
		}
		return k.sum()
	}
	return a.sum()
}

// RMSNormRMSWithTol32 returns rms = sqrt(ss/hidden + eps) and its bound for
// a row of hidden values whose Σx² (RMSNormForwardSums32) is ss: what
// RMSNormForwardWithTol writes to rms[r] and tolRMS[r], bit for bit.
func RMSNormRMSWithTol32(ss float64, hidden int, eps float32, red Reduction) (rms, tolRMS float64) {
	b := rmsRowOf(ss, hidden, float64(eps), red)
	return b.rms, b.rms * b.rhoRMS
}

// Gamma32 is a float32 weight vector γ with the per-column terms of
// RMSNormForwardRow32 formed once, not once per row: float64(γ_i), |γ_i|
// and |γ_i|·(1+U32). Make it with NewGamma32.
type Gamma32 struct {
	gamma      []float32
	g, ag, agU []float64
}

// NewGamma32 prepares gamma for RMSNormForwardRow32 in scratch, which must
// have at least 3·len(gamma) elements (nil: allocated) and belongs to the
// result until its last use.
func NewGamma32(gamma []float32, scratch []float64) Gamma32 {
	n := len(gamma)
	if scratch == nil {
		scratch = make([]float64, 3*n)
	}
	if len(scratch) < 3*n {
		panic(fmt.Sprintf("oracle: len(scratch) = %d, want at least %d", len(scratch), 3*n))
	}
	gm := Gamma32{gamma: gamma, g: scratch[:n], ag: scratch[n : 2*n], agU: scratch[2*n : 3*n]}
	for i, v := range gamma {
		g := float64(v)
		gm.g[i], gm.ag[i] = g, math.Abs(g)
		gm.agU[i] = gm.ag[i] * (1 + U32)
	}
	return gm
}

// RMSNormForwardRow32 writes one row's reference y and bound tolY from
// float32 inputs x (the row) and gamma, given the row's sums ss and ss32
// (RMSNormForwardSums32): bit for bit what RMSNormForwardWithTol writes for
// that row of the widened inputs at eps = float64(eps32) and red. When naive
// is not nil it also receives RMSNormForward32Naive's y of the row (ss32 is
// read only then). y, tolY and naive have len(x) elements, as has gamma.
func RMSNormForwardRow32(y, tolY []float64, naive []float32, x []float32, gamma Gamma32, ss float64, ss32, eps32 float32, red Reduction) {
	n := len(x)
	mustShape(1, n)
	mustLen("y", y, n)
	mustLen("tolY", tolY, n)
	mustLenOpt("naive", naive, n)
	mustLen("gamma", gamma.gamma, n)
	b := rmsRowOf(ss, n, float64(eps32), red)
	rel := relMul(b.rhoInv, Gamma(2))
	rms, ri := b.rms, b.ri
	y, tolY = y[:n], tolY[:n]
	g, ag, agU := gamma.g[:n], gamma.ag[:n], gamma.agU[:n]
	// rmsForwardTol's loop on v = float64(x_i), g = float64(γ_i).
	for i, xv := range x {
		v := float64(xv)
		y[i] = v / rms * g[i]
		tolY[i] = yBoundAbs(math.Abs(v), ag[i], agU[i], ri, rel)
	}
	if naive == nil {
		return
	}
	// rmsNormRow32's second half, from its sum.
	naive = naive[:n]
	g32 := gamma.gamma[:n]
	inv := 1 / sqrt32(ss32/float32(n)+eps32)
	for i, xv := range x {
		naive[i] = xv * inv * g32[i]
	}
}

// yBound is the bound on |ŷ − y| for y = v·ri·g (RMSNormForwardTol, steps
// 5 and the underflow floor), given rel, the relative part for the row.
// |v·ri·g| is formed as |v|·ri·|g|: round to nearest is symmetric and
// ri > 0, so it is the same number as |fl(fl(v·ri)·g)|.
func yBound(v, g, ri, rel float64) float64 {
	ag := math.Abs(g)
	return yBoundAbs(math.Abs(v), ag, ag*(1+U32), ri, rel)
}

// yBoundAbs is yBound from av = |v|, ag = |g| and agU = ag·(1+U32): the
// same operations in the same order.
func yBoundAbs(av, ag, agU, ri, rel float64) float64 {
	return av*ri*ag*rel + DivFullUnderflow*agU + Eta32*(av*(1+U32)+1)
}

// rmsForwardTol writes the bounds of RMSNormForwardTol and, when y is not
// nil, the reference of RMSNormForward from the same row sums.
func rmsForwardTol(y, rms, tolY, tolRMS []float64, x, gamma []float64, rows, hidden int, eps float64, red Reduction) {
	gamma = gamma[:hidden]
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		b := rmsRow(xr, eps, red)
		if rms != nil {
			rms[r] = b.rms // rmsOf(xr, eps): the same sum, division, addition and root
		}
		if tolRMS != nil {
			tolRMS[r] = b.rms * b.rhoRMS
		}
		rel := relMul(b.rhoInv, Gamma(2))
		out := tolY[r*hidden : (r+1)*hidden]
		out = out[:len(xr)]
		if y != nil { // one loop for y (normalizeRow) and its bound
			yr := y[r*hidden : (r+1)*hidden]
			yr = yr[:len(xr)]
			for i, v := range xr {
				g := gamma[i]
				yr[i] = v / b.rms * g
				out[i] = yBound(v, g, b.ri, rel)
			}
			continue
		}
		for i, v := range xr {
			out[i] = yBound(v, gamma[i], b.ri, rel)
		}
	}
}

// RMSNormBackwardTol writes per-element error bounds for a float32
// RMSNormBackward kernel: |dx̂ − dx| ≤ tolDX elementwise and |dγ̂ − dγ| ≤
// tolDGamma (may be nil). red is the shape of the per-row reductions over
// hidden (Σx² and Σγ·dy·x); rowRed is the shape of the sum over rows that
// produces dγ (SerialReduction covers any order, atomics included).
//
// Notation: n = hidden, ri = 1/rms, g_j = γ_j·dy_j, p_j = g_j·x_j,
// S = Σp_j, P = Σ|p_j|, A_i = ri·g_i, B_i = x_i·ri³·S/n, dx_i = A_i − B_i.
//
// Assumed float32 operation sequences: the kernel obtains ri either by
// recomputing it as in RMSNormForwardTol or as 1/rms (div.full) from a
// stored rms, so its relative error is at most
// ρ = max((1+ρ_inv)(1+u), (1+relInv(ρ_rms))(1+5u)) − 1 (ρ_inv, ρ_rms the
// relative errors of ri and of a stored rms in RMSNormForwardTol, same
// red). Then any of
//
//	V1: xh_j = x_j·ri; c = (Σ g_j·xh_j)/n; dx_i = ri·(g_i − xh_i·c)
//	V2: c = (Σ g_j·x_j)/n; dx_i = ri·(g_i − x_i·(ri·ri)·c)   (upstream)
//
// Derivation:
//
//  1. The reduction: each term takes ≤ 3 roundings (V1: g, xh, product)
//     before ≤ d additions: |Ŝ − S| ≤ γ_{d+3}·P (+ the ri inside V1's terms,
//     counted with ρ below). Underflows add η·Σ_j(|x_j| + (|g_j|+1)/ri + 1)
//     in units of S.
//  2. Path A (g_i and one factor ri): |Â_i − A_i| ≤ |A_i|·((1+ρ)(1+γ_2) − 1).
//  3. Path B (three factors ri, the division by n, up to 5 other
//     roundings in V2; the division is div.full, 5u ≤ γ_5, so 10 in all):
//     |B̂_i − B_i| ≤ |B_i|·((1+ρ)³(1+γ_10) − 1) + |x_i|·ri³/n·e_S·(1+ρ)³(1+γ_10).
//  4. The subtraction rounds once relative to the computed difference:
//     tol = E + u·(|dx_i| + E), E = sum of the path errors.
//  5. Underflow floor: every intermediate that may underflow contributes η
//     (5η for the quotient by n, div.full; taken for all) times the
//     magnitude of what later multiplies it (V1 and V2), through at most
//     8 roundings, the division among them (γ_12):
//     5η·(1+γ_12)·(2(ri+1) + 3|x_i|(ri²+ri³) + 2ri(1 + (ri+1)|S|/n) + 2).
//
// dγ_i = Σ_r dy·x·ri: each term has ρ_r and two roundings, then the
// rows reduction of depth d_r = rowRed.Depth(rows):
// tol = Σ_r |dy·x|·ri·((1+ρ_r)(1+γ_{2+d_r}) − 1) + η·Σ_r(ri + |dy| + 1)·(1+γ_{d_r+1}),
// plus rows·2^-125·(1+γ_{d_r+1}) when rowRed flushes (Reduction.Flush).
func RMSNormBackwardTol(tolDX, tolDGamma []float64, x, gamma, dy []float64, rows, hidden int, eps float64, red, rowRed Reduction) {
	mustNormBackward(gradTolOut, tolDX, tolDGamma, nil, x, gamma, dy, rows, hidden)
	rmsBackward(nil, nil, tolDX, tolDGamma, nil, x, gamma, dy, rows, hidden, eps, red, rowRed)
}

// RMSNormBackwardWithTol is RMSNormBackward and RMSNormBackwardTol in one
// pass: each row's compensated Σx² and Σγ·dy·x are computed once and serve
// the reference dx, dγ and their bounds, which are bit for bit what the two
// functions write. dgamma and tolDGamma may be nil. serialTolDX, when not
// nil, also receives the dx bound of RMSNormBackwardTol for
// SerialReduction (valid for every summation order) from the same sums.
func RMSNormBackwardWithTol(dx, dgamma, tolDX, tolDGamma, serialTolDX []float64, x, gamma, dy []float64, rows, hidden int, eps float64, red, rowRed Reduction) {
	mustNormBackward(gradOut, dx, dgamma, nil, x, gamma, dy, rows, hidden)
	mustNormBackward(gradTolOut, tolDX, tolDGamma, nil, x, gamma, dy, rows, hidden)
	mustLenOpt("serialTolDX", serialTolDX, rows*hidden)
	rmsBackward(dx, dgamma, tolDX, tolDGamma, serialTolDX, x, gamma, dy, rows, hidden, eps, red, rowRed)
}

// rmsBackward writes the reference gradients of RMSNormBackward when dx is
// not nil, the bounds of RMSNormBackwardTol when tolDX is not nil, and the
// dx bound for SerialReduction when serialTolDX is not nil, from one
// compensated Σx² and S = Σγ·dy·x per row (the oracle's rms and
// Σγ·dy·x/(n·rms²) and the bound's ri and S are the same numbers).
func rmsBackward(dx, dgamma, tolDX, tolDGamma, serialTolDX []float64, x, gamma, dy []float64, rows, hidden int, eps float64, red, rowRed Reduction) {
	n := float64(hidden)
	d := red.Depth(hidden)
	dr := rowRed.Depth(rows)
	gamma = gamma[:hidden]
	var dg []csum // dγ's column sums; rr keeps each row's rms in case one must be redone
	var rr []float64
	if dgamma != nil {
		dg, rr = make([]csum, hidden), make([]float64, rows)
	}
	clear(tolDGamma)
	kDG := 1 + Gamma(dr+1) // hoisted: the same value as written inline

	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		dyr = dyr[:len(xr)]
		// Σx², S = Σγ·dy·x (γ·dy of two float32 values is exact), both
		// compensated, and P = Σ|γ·dy·x|.
		var sd csum
		var p float64
		for j, v := range xr {
			g := gamma[j] * dyr[j]
			q := g * v
			sd = sd.plus(q)
			if e := prodErr(g, v, q); e != 0 {
				sd = sd.plus(e)
			}
			p += math.Abs(q)
		}
		if sd.overflowed() {
			var k kbn
			for j, v := range xr {
				k.addProd(gamma[j]*dyr[j], v)
			}
			sd = csum{k.sum(), 0}
		}
		s := sd.sum()
		b := rmsRowOf(sumSquares(xr), hidden, eps, red)
		ri := b.ri
		if dx != nil {
			// The reference: rms = sqrt(Σx²/n + eps), c = S/(n·rms²).
			c := s / (n * b.v)
			out := dx[r*hidden : (r+1)*hidden]
			out = out[:len(xr)]
			for i, xv := range xr {
				out[i] = ri * (gamma[i]*dyr[i] - xv*c)
			}
			if dg != nil {
				rr[r] = b.rms
				dg = dg[:len(xr)]
				for i := range dg {
					dg[i] = dg[i].plus(dyr[i] * xr[i] / b.rms)
				}
			}
		}
		if tolDX == nil {
			continue
		}
		var fs float64
		for j, v := range xr {
			g := gamma[j] * dyr[j]
			fs += math.Abs(v) + (math.Abs(g)+1)/ri + 1
		}
		rho := rmsBackwardTolRow(tolDX[r*hidden:(r+1)*hidden], xr, gamma, dyr, s, p, fs, b, d)
		if serialTolDX != nil {
			out := serialTolDX[r*hidden : (r+1)*hidden]
			if ds := SerialReduction().Depth(hidden); ds == d {
				copy(out, tolDX[r*hidden:(r+1)*hidden])
			} else {
				rmsBackwardTolRow(out, xr, gamma, dyr, s, p, fs, rmsRowOf(b.ss, hidden, eps, SerialReduction()), ds)
			}
		}
		if tolDGamma != nil {
			rel := relMul(rho, Gamma(2+dr))
			tdg := tolDGamma[:len(xr)]
			for i := range tdg {
				tdg[i] += math.Abs(dyr[i]*xr[i])*ri*rel + Eta32*(ri+math.Abs(dyr[i])+1)*kDG
			}
		}
	}
	if fl := rowRed.flushAbs(rows); tolDGamma != nil && fl > 0 {
		for i := range tolDGamma[:hidden] {
			tolDGamma[i] += fl
		}
	}
	for i := range dg {
		if dg[i].overflowed() {
			var k kbn
			for r, rr := range rr {
				k.add(dy[r*hidden+i] * x[r*hidden+i] / rr)
			}
			dg[i] = csum{k.sum(), 0}
		}
		dgamma[i] = dg[i].sum()
	}
}

// rmsBackwardTolRow writes the dx bound of RMSNormBackwardTol for one row
// whose S, P and underflow sum fs are given, for the rms bound b and
// reduction depth d, and returns ρ, the relative error bound of the
// kernel's 1/rms.
func rmsBackwardTolRow(out, xr, gamma, dyr []float64, s, p, fs float64, b rmsRowBound, d int) (rho float64) {
	n := float64(len(xr))
	ri := b.ri
	rho = math.Max(relMul(b.rhoInv, U32), relMul(relInv(b.rhoRMS), DivFullRelErr))
	eS := Gamma(d+3)*p + Eta32*fs*(1+Gamma(d+3))
	rho3 := relMul(relMul(rho, rho), rho)
	eA := relMul(rho, Gamma(2))
	eB := relMul(rho3, Gamma(10))
	ri3n := ri * ri * ri / n
	// Constants of the expression, hoisted (the same values as written
	// inline: the evaluation order is unchanged).
	k8 := DivFullUnderflow * (1 + Gamma(12))
	as := math.Abs(s)
	opB := 1 + eB
	fA := 2 * (ri + 1)
	fR := ri*ri + ri*ri*ri
	fB := 2 * ri * (1 + (ri+1)*as/n)
	out, gamma, dyr = out[:len(xr)], gamma[:len(xr)], dyr[:len(xr)]
	for i, v := range xr {
		g := gamma[i] * dyr[i]
		av := math.Abs(v)
		a := math.Abs(ri * g)
		bb := av * ri3n * as
		dxm := math.Abs(ri*g - v*ri3n*s)
		e := a*eA + bb*eB + av*ri3n*eS*opB
		floor := k8 * (fA + 3*av*fR + fB + 2)
		out[i] = e + U32*(dxm+e) + floor
	}
	return rho
}

// FusedResidualRMSNormTol writes error bounds for a float32 fused
// residual-add + RMSNorm kernel against FusedResidualRMSNorm.
//
// s: the kernel stores ŝ = fl(residual + x), one rounding, so
// |ŝ_i − s_i| ≤ u·|s_i| = tolS[i]. This is also checkable bit for bit:
// ŝ must equal float32(s) exactly (see ResidualSum32).
//
// y: the kernel normalises ŝ, not s. With ŝ_j = s_j(1+δ_j), |δ_j| ≤ u, every
// ŝ_j² is within (1±u)² of s_j² and eps is unchanged, so rms(ŝ)/rms(s) ∈
// [1−u, 1+u] and y_i(ŝ)/y_i(s) ∈ [(1−u)/(1+u), (1+u)/(1−u)]: the rounding of
// s moves y_i by at most |y_i|·2u/(1−u). The kernel's own error is bounded
// by RMSNormForwardTol evaluated at ŝ, which differs from its value at s by
// a relative O(u) that the factor (1+8u) absorbs. Hence
//
//	tolY_i   = T_i·(1+8u)·(1+2u/(1−u)) + |y_i|·2u/(1−u)
//	tolRMS_r = R_r·(1+8u)·(1+u) + u·rms_r
//
// with T, R from RMSNormForwardTol(s). tolRMS may be nil.
func FusedResidualRMSNormTol(tolS, tolY, tolRMS []float64, residual, x, gamma []float64, rows, hidden int, eps float64, red Reduction) {
	mustShape(rows, hidden)
	mustLen("tolS", tolS, rows*hidden)
	s := make([]float64, rows*hidden)
	residualSum(s, residual, x, rows, hidden)
	for i, v := range s {
		tolS[i] = U32 * math.Abs(v)
	}
	y, rms := make([]float64, rows*hidden), make([]float64, rows)
	RMSNormForwardWithTol(y, rms, tolY, tolRMS, s, gamma, rows, hidden, eps, red)
	u2 := 2 * U32 / (1 - U32)
	for k, v := range y {
		tolY[k] = tolY[k]*(1+8*U32)*(1+u2) + math.Abs(v)*u2
	}
	for r := range tolRMS {
		tolRMS[r] = tolRMS[r]*(1+8*U32)*(1+U32) + U32*rms[r]
	}
}

// ResidualSum32 returns the float32 sum a fused residual kernel must store,
// fl32(residual + x), for bit-exact comparison.
func ResidualSum32(residual, x float32) float32 { return residual + x }

// PerHeadRMSNormTol writes the error bounds of a float32 per-head RMSNorm
// kernel: each head of headDim values is an RMSNorm row (RMSNormForwardTol
// with rows·heads rows, hidden = headDim, red the reduction over headDim).
// tolRMS (length rows·heads) may be nil.
func PerHeadRMSNormTol(tolY, tolRMS []float64, x, gamma []float64, rows, heads, headDim int, eps float64, red Reduction) {
	mustShape(rows, heads*headDim)
	RMSNormForwardTol(tolY, tolRMS, x, gamma, rows*heads, headDim, eps, red)
}
