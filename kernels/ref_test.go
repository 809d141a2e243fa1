package kernels

// Float64 references and error bounds for the device tests.
//
// These are deliberately simple: one loop per formula, float64 throughout,
// and a per-element bound derived from the float32 op sequence documented
// at the top of each kernel (src/*.cu) with the reduction depths the
// descriptors report (Reduction.Depth). Notation: u = 2⁻²⁴, γ(n) = n·u/(1−n·u);
// a sum of terms each carrying relative error ≤ γ(k), added with depth d,
// is off by at most γ(d+k)·Σ|term| (Higham, Accuracy and Stability of
// Numerical Algorithms, §3.1/§4.2). The bounds are first-order and keep one
// extra u per formula for the second-order terms; they are the test's own
// and are to be reconciled with package oracle's derivations.
//
// Inputs are float32 values; the reference evaluates the exact formula on
// them (so an rms or mean/rstd given to a backward is used as given, as the
// kernel must).

import "math"

const unit = 1.0 / (1 << 24)

func gam(n float64) float64 { return n * unit / (1 - n*unit) }

func f64(v float32) float64 { return float64(v) }

// refRMSNorm: y = x/rms·γ, rms = sqrt(mean(x²)+eps), for one row (or head).
// d is the depth of the Σx² reduction. Bounds: Σx² has relative error
// γ(d) (positive terms), the division and the eps add one u each, sqrt
// halves the relative error and adds u, rcp adds u, two multiplies add 2u:
// rms ≤ γ(d/2+3) relative, y ≤ γ(d/2+6) relative (one u of slack each).
func refRMSNorm(x, gamma []float32, eps float32, d int, y, yb []float64) (rms, rmsb float64) {
	ss := 0.0
	for _, v := range x {
		ss += f64(v) * f64(v)
	}
	rms = math.Sqrt(ss/float64(len(x)) + f64(eps))
	for j, v := range x {
		y[j] = f64(v) / rms * f64(gamma[j])
		yb[j] = gam(float64(d)/2+6) * math.Abs(y[j])
	}
	return rms, gam(float64(d)/2+3) * rms
}

// refRMSNormBwd: one row. rms is the forward's (eps included), used as
// given. With inv = 1/rms, x̂ = x·inv, g = γ·dy, A = Σ|g·x̂|:
//
//	dx = (g − x̂·Σ(g·x̂)/H)·inv
//	|err| ≤ γ(d+10)·inv·(|g| + |x̂|·A/H)
//
// (x̂, g: 3u; the dot sum: γ(d+3)·A; /H: u; x̂·m: 3u; g−t: u; ·inv: 2u; one
// u of slack). The row's dγ terms dy·x̂ and their magnitudes are added to
// dg and dgAbs.
func refRMSNormBwd(x, gamma, dy []float32, rms float32, d int, dx, dxb, dg, dgAbs []float64) {
	h := float64(len(x))
	inv := 1 / f64(rms)
	dot, a := 0.0, 0.0
	for j := range x {
		t := f64(gamma[j]) * f64(dy[j]) * f64(x[j]) * inv
		dot += t
		a += math.Abs(t)
	}
	for j := range x {
		xh := f64(x[j]) * inv
		g := f64(gamma[j]) * f64(dy[j])
		dx[j] = (g - xh*dot/h) * inv
		dxb[j] = gam(float64(d)+10) * inv * (math.Abs(g) + math.Abs(xh)*a/h)
		dg[j] += f64(dy[j]) * xh
		dgAbs[j] += math.Abs(f64(dy[j]) * xh)
	}
}

// layerNormRow holds the reference statistics of one row.
type layerNormRow struct {
	mean, rstd   float64 // exact
	meanB, rstdB float64 // bounds on the kernel's mean (absolute) and rstd (relative)
}

// refLayerNorm: y = (x−mean)·rstd·γ + β for one row, rstd = 1/sqrt(var+eps),
// d the depth of both row sums. Mean: δμ ≤ γ(d+1)·Σ|x|/H. Variance from
// d̂ = fl(x − μ̂) (Σ(x−μ) = 0 cancels the first-order effect of δμ): the
// kernel's var+eps is within ρ = γ(d+5) + (δμ² + 2δμ·u·mean|x−μ|)/(var+eps)
// relative of the true one, so rstd is within ρ/2 + γ(2). y = fma(d̂·r̂, γ, β):
//
//	|err| ≤ |γ|·r·(δμ + |x−μ|·(ρ/2 + γ(5))) + u·(|γ·x̂| + |β|)
//
// (all with one u of slack, ×1.01 for second-order terms).
func refLayerNorm(x, gamma, beta []float32, eps float32, d int, y, yb []float64) layerNormRow {
	h := float64(len(x))
	s, sa := 0.0, 0.0
	for _, v := range x {
		s += f64(v)
		sa += math.Abs(f64(v))
	}
	mu := s / h
	v, da := 0.0, 0.0
	for _, xv := range x {
		v += (f64(xv) - mu) * (f64(xv) - mu)
		da += math.Abs(f64(xv) - mu)
	}
	v /= h
	r := 1 / math.Sqrt(v+f64(eps))
	dmu := gam(float64(d)+2) * sa / h
	rho := gam(float64(d)+5) + (dmu*dmu*1.01+2*dmu*unit*da/h)/(v+f64(eps))
	rrel := rho/2 + gam(3)
	for j, xv := range x {
		dd := f64(xv) - mu
		xh := dd * r
		y[j] = xh*f64(gamma[j]) + f64(beta[j])
		yb[j] = 1.01 * (math.Abs(f64(gamma[j]))*r*(dmu+math.Abs(dd)*(rrel+gam(5))) +
			unit*(math.Abs(xh*f64(gamma[j]))+math.Abs(f64(beta[j]))))
	}
	return layerNormRow{mean: mu, rstd: r, meanB: dmu, rstdB: rrel}
}

// refLayerNormBwd: one row with the given (float32) mean and rstd. With
// x̂ = (x−μ)·r, g = γ·dy, G = Σ|g|, A = Σ|g·x̂|:
//
//	dx = r·(g − Σg/H − x̂·Σ(g·x̂)/H)
//	|err| ≤ γ(d+10)·r·(|g| + G/H + |x̂|·A/H)
//
// The row's dγ (dy·x̂) and dβ (dy) terms are added to the accumulators.
func refLayerNormBwd(x, gamma, dy []float32, mean, rstd float32, d int, dx, dxb, dg, dgAbs, db, dbAbs []float64) {
	h := float64(len(x))
	mu, r := f64(mean), f64(rstd)
	s1, s2, ga, a := 0.0, 0.0, 0.0, 0.0
	for j := range x {
		g := f64(gamma[j]) * f64(dy[j])
		xh := (f64(x[j]) - mu) * r
		s1 += g
		s2 += g * xh
		ga += math.Abs(g)
		a += math.Abs(g * xh)
	}
	for j := range x {
		g := f64(gamma[j]) * f64(dy[j])
		xh := (f64(x[j]) - mu) * r
		dx[j] = r * (g - s1/h - xh*s2/h)
		dxb[j] = gam(float64(d)+10) * r * (math.Abs(g) + ga/h + math.Abs(xh)*a/h)
		dg[j] += f64(dy[j]) * xh
		dgAbs[j] += math.Abs(f64(dy[j]) * xh)
		db[j] += f64(dy[j])
		dbAbs[j] += math.Abs(f64(dy[j]))
	}
}

// ropeAngleErr bounds |angle_f32 − angle| for pair i of head_dim hd at
// position pos (pos < 2²⁴, exact in float32). The kernel computes
// p = fl(fl(2i/hd)·log2f(θ)) (relative error ≤ u + 2u + u: log2f is within
// 1 ulp ≤ 2u), freq = exp2f(−p) (ex2.approx, within 2 ulp ≤ 4u), so
// freq's relative error is ≤ ln2·|p|·4u + 4u, and angle = fl(pos·freq)
// adds u. One u of slack.
func ropeAngleErr(i, hd int, pos uint32, theta float32) (angle, bound float64) {
	p := 2 * float64(i) / float64(hd) * math.Log2(f64(theta))
	angle = float64(pos) * math.Exp2(-p)
	return angle, math.Abs(angle) * (math.Ln2*math.Abs(p)*4*unit*1.01 + 6*unit)
}

// refRoPE rotates one head (forward, or backward with the transpose) and
// bounds each output: sinf/cosf are within 2 ulp (4u relative) of the
// functions at the rounded angle, which are within δa of the exact ones;
// each output adds two products and one sum (3u):
//
//	|err| ≤ (|a|+|b|)·(δa·(1+4u) + 8u)
func refRoPE(in []float32, hd int, pos uint32, theta float32, inverse bool, out, ob []float64) {
	half := hd / 2
	for i := 0; i < half; i++ {
		ang, da := ropeAngleErr(i, hd, pos, theta)
		s, c := math.Sincos(ang)
		a, b := f64(in[i]), f64(in[i+half])
		if !inverse {
			out[i], out[i+half] = a*c-b*s, a*s+b*c
		} else {
			out[i], out[i+half] = a*c+b*s, b*c-a*s
		}
		e := (math.Abs(a) + math.Abs(b)) * (da*(1+4*unit) + 8*unit)
		ob[i], ob[i+half] = e, e
	}
}
