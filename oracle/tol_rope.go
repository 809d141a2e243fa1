package oracle

import "math"

// RoPEFreqRelErr returns the bound φ_i on the relative error of a float32
// kernel's frequency freq_i = θ^(−2i/headDim), the largest of the documented
// ways of computing it (k ulp from the correctly rounded result is (2k+1)u
// relative):
//
//   - exp2(−(2i/d)·log2(θ)) as Triton and nvcc emit it: lg2.approx.f32
//     (2^-22 = 4u relative for θ outside (0.5, 2), 2^-22 absolute inside),
//     the quotient 2i/d by div.full.f32 (5u), the product (u). The exponent
//     t = −(2i/d)·log2 θ is then off by at most
//     E_t = (2i/d)·((|l| + e_l)(1+5u)(1+u) − |l| + (u/ln 2)(1+2u)), with
//     l = log2 θ, e_l the lg2 error at |l|(1+u) and the last term θ's own
//     rounding to float32 (|Δ log2 θ| ≤ log2(1+u)/(1−u)). 2^t̂ is then
//     within expm1(ln 2·E_t) relative of 2^t, and ex2.approx.f32 (2 ulp,
//     5u) follows. CUDA's exp2f/log2f (2 and 1 ulp) and expf/logf are
//     within these.
//   - powf(θ, −2i/d): the rounded exponent gives u·|ln freq|, θ's rounding
//     u, and powf ≤ 4 ulp (9u).
//   - a host table of float64 frequencies rounded to float32: u.
//
// Fast-math intrinsics (__expf, __powf) are not covered.
func RoPEFreqRelErr(i, headDim int, theta float64) float64 {
	e := 2 * float64(i) / float64(headDim)
	l := math.Abs(math.Log2(theta))
	el := Lg2ApproxRelErr * l * (1 + U32)
	if theta > 0.5*(1-U32) && theta < 2*(1+U32) {
		el = math.Max(el, Lg2ApproxAbsErr)
	}
	et := e * ((l+el)*relMul(DivFullRelErr, U32) + el + U32/math.Ln2*(1+2*U32))
	approx := relMul(math.Expm1(math.Ln2*et), ulpErr(2))
	lnf := e * math.Log(theta)
	pow := relMul(math.Expm1(U32*math.Abs(lnf)+U32*(1+2*U32)), ulpErr(4))
	return math.Max(approx, pow)
}

// RoPEAngleErr returns the bound Δ_i on |â − a| for the float32 angle
// â = fl(float32(pos)·freq̂_i) of exact angle a = pos·freq_i:
// Δ_i = |a|·((1+φ_i)(1+u)(1+u_p) − 1), with u_p = 0 when pos is a float32
// (integer positions up to 2^24) and u otherwise. At pos 32768 and i = 0
// this is ≈ 32768·11u ≈ 2.1e-2 rad; the single rounding of the product
// alone is pos·u ≈ 2e-3 rad.
func RoPEAngleErr(i, headDim int, theta, pos float64) float64 {
	return angleErr(pos, math.Pow(theta, -2*float64(i)/float64(headDim)), relMul(RoPEFreqRelErr(i, headDim, theta), U32))
}

// angleErr is RoPEAngleErr from the frequency freq_i and
// relMul(φ_i, u), which do not depend on the row: RoPETol computes them
// once per frequency.
func angleErr(pos, freq, rel float64) float64 {
	up := 0.0
	if !IsFloat32(pos) {
		up = U32
	}
	return math.Abs(pos*freq)*relMul(rel, up) + Eta32
}

// sincosErr is the relative error allowed for sincosf/sinf/cosf (≤ 2 ulp
// from the correctly rounded result after exact range reduction).
var sincosErr = ulpErr(2)

// RoPETol writes per-element error bounds for a float32 RoPE kernel of the
// given style applied to in (x for the forward, dy for the backward), sign
// +1 for the forward rotation R(a) and −1 for the backward R(−a); the exact
// reference is RoPE{NeoX,GPTJ}{Forward,Backward}.
//
// Assumed float32 operation sequence per row, pair (p, q) and frequency i:
//
//	f  = freq_i               (see RoPEFreqRelErr for the allowed forms)
//	a  = float32(pos)·f
//	s, c = sincosf(a)         (or sinf, cosf; ≤ 2 ulp, exact range reduction)
//	out_p = in_p·c ∓ in_q·s;  out_q = ±in_p·s + in_q·c   (products, one add)
//
// Derivation, with A the exact angle, Δ = RoPEAngleErr and S = |sin A|,
// C = |cos A|:
//
//  1. |sin â − sin A| ≤ Δ·max|cos| on [A−Δ, A+Δ] ≤ Δ·min(1, C+Δ) (mean
//     value theorem, |cos ξ − cos A| ≤ |ξ−A|), likewise for cos with S.
//  2. sincosf adds 5u of |sin â| ≤ S+Δ: e_s = Δ·min(1, C+Δ) + 5u(S+Δ) + 2η,
//     e_c = Δ·min(1, S+Δ) + 5u(C+Δ) + 2η.
//  3. out_p: E = |in_p|e_c + |in_q|e_s + u(|in_p|(C+e_c) + |in_q|(S+e_s)) + 2η
//     (two product roundings), then the addition: tol = E + u(|out_p| + E).
//     out_q symmetric.
//
// So tol ≈ (|in_p| + |in_q|)·(|A|·(5u·|ln f| + 11u) + 6u): the angle term
// dominates at large positions, the sincos and arithmetic terms near 0.
func RoPETol(tol, in []float64, pos []float64, rows, heads, headDim int, theta float64, style RoPEStyle, sign float64) {
	mustRoPE(ropeTolOut, tol, in, pos, rows, heads, headDim)
	w := heads * headDim
	half := headDim / 2
	freq, rel := make([]float64, half), make([]float64, half)
	RoPEFrequencies(freq, headDim, theta)
	for i := range rel {
		rel[i] = relMul(RoPEFreqRelErr(i, headDim, theta), U32)
	}
	ang := make([]float64, half)
	es := make([]float64, half)
	ec := make([]float64, half)
	sn := make([]float64, half)
	cs := make([]float64, half)
	for r := 0; r < rows; r++ {
		anglesOf(ang, freq, pos[r])
		for i, a := range ang {
			s, c := math.Sincos(a)
			sn[i], cs[i] = sign*s, c
			S, C := math.Abs(s), math.Abs(c)
			dl := angleErr(pos[r], freq[i], rel[i])
			es[i] = dl*math.Min(1, C+dl) + sincosErr*(S+dl) + 2*Eta32
			ec[i] = dl*math.Min(1, S+dl) + sincosErr*(C+dl) + 2*Eta32
		}
		for h := 0; h < heads; h++ {
			base := r*w + h*headDim
			for i := 0; i < half; i++ {
				ia, ib := style.pair(i, headDim)
				x0, x1 := math.Abs(in[base+ia]), math.Abs(in[base+ib])
				S, C := math.Abs(sn[i]), cs[i]
				C = math.Abs(C)
				yp := math.Abs(in[base+ia]*cs[i] - in[base+ib]*sn[i])
				yq := math.Abs(in[base+ia]*sn[i] + in[base+ib]*cs[i])
				ep := x0*ec[i] + x1*es[i] + U32*(x0*(C+ec[i])+x1*(S+es[i])) + 2*Eta32
				eq := x0*es[i] + x1*ec[i] + U32*(x0*(S+es[i])+x1*(C+ec[i])) + 2*Eta32
				tol[base+ia] = ep + U32*(yp+ep)
				tol[base+ib] = eq + U32*(yq+eq)
			}
		}
	}
}

// RoPENeoXForwardTol is RoPETol for RoPENeoXForward.
func RoPENeoXForwardTol(tol, x []float64, pos []float64, rows, heads, headDim int, theta float64) {
	RoPETol(tol, x, pos, rows, heads, headDim, theta, RoPENeoX, 1)
}

// RoPENeoXBackwardTol is RoPETol for RoPENeoXBackward (input dy).
func RoPENeoXBackwardTol(tol, dy []float64, pos []float64, rows, heads, headDim int, theta float64) {
	RoPETol(tol, dy, pos, rows, heads, headDim, theta, RoPENeoX, -1)
}

// RoPEGPTJForwardTol is RoPETol for RoPEGPTJForward.
func RoPEGPTJForwardTol(tol, x []float64, pos []float64, rows, heads, headDim int, theta float64) {
	RoPETol(tol, x, pos, rows, heads, headDim, theta, RoPEGPTJ, 1)
}
