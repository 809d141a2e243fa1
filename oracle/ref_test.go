package oracle

// Reference copies of the oracle's RMSNorm functions (over its unchanged
// compensated accumulator kbn) and ULPDistance32 as they were before the single-pass
// versions (commit 4e1ad7d): the optimised code must reproduce them bit for
// bit (fast_test.go), as must DirectionalDerivativeFDAlong the original
// DirectionalDerivativeFDErr.

import "math"

func refULPDistance32(a, b float32) uint64 {
	if a != a || b != b {
		return math.MaxUint64
	}
	ka, kb := refOrderedKey32(a), refOrderedKey32(b)
	if ka > kb {
		return uint64(ka - kb)
	}
	return uint64(kb - ka)
}

// refOrderedKey32 maps float32 bit patterns onto integers whose order matches
// the order of the floats; ±0 both map to 0.
func refOrderedKey32(f float32) int64 {
	bits := math.Float32bits(f)
	mag := int64(bits & 0x7fffffff)
	if bits&0x80000000 != 0 {
		return -mag
	}
	return mag
}

func refRMSOf(row []float64, eps float64) float64 {
	var acc kbn
	for _, v := range row {
		acc.addProd(v, v)
	}
	return math.Sqrt(acc.sum()/float64(len(row)) + eps)
}

func refRMSNormForward(y, rms []float64, x, gamma []float64, rows, hidden int, eps float64) {
	mustShape(rows, hidden)
	mustLen("y", y, rows*hidden)
	mustLenOpt("rms", rms, rows)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
	for r := 0; r < rows; r++ {
		row := x[r*hidden : (r+1)*hidden]
		rr := refRMSOf(row, eps)
		if rms != nil {
			rms[r] = rr
		}
		out := y[r*hidden : (r+1)*hidden]
		for i, v := range row {
			out[i] = v / rr * gamma[i]
		}
	}
}

func refRMSNormBackward(dx, dgamma []float64, x, gamma, dy []float64, rows, hidden int, eps float64) {
	mustShape(rows, hidden)
	mustLen("dx", dx, rows*hidden)
	mustLenOpt("dgamma", dgamma, hidden)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
	mustLen("dy", dy, rows*hidden)
	var dg []kbn
	if dgamma != nil {
		dg = make([]kbn, hidden)
	}
	n := float64(hidden)
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		var ss, dot kbn
		for i, v := range xr {
			ss.addProd(v, v)
			dot.addProd(gamma[i]*dyr[i], v) // γ·dy of two float32 values is exact
		}
		v := ss.sum()/n + eps
		rr := math.Sqrt(v)
		ri := 1 / rr
		c := dot.sum() / (n * v) // Σγ·dy·x/(n·rms²)
		out := dx[r*hidden : (r+1)*hidden]
		for i, xv := range xr {
			out[i] = ri * (gamma[i]*dyr[i] - xv*c)
		}
		for i := range dg {
			dg[i].add(dyr[i] * xr[i] / rr)
		}
	}
	for i := range dg {
		dgamma[i] = dg[i].sum()
	}
}

func refRMSRow(x []float64, eps float64, red Reduction) rmsRowBound {
	n := len(x)
	d := red.Depth(n)
	var acc kbn
	for _, v := range x {
		acc.addProd(v, v)
	}
	b := rmsRowBound{n: n, ss: acc.sum()}
	nf := float64(n)
	b.v = b.ss/nf + eps
	b.rms = math.Sqrt(b.v)
	b.ri = 1 / b.rms
	// (1) Σ fl(x_i²) with depth d: every term goes through one product
	// rounding and at most d addition roundings; all terms are ≥ 0.
	// Underflowing squares add at most Eta32 each.
	eSS := Gamma(d+1)*b.ss + nf*Eta32*(1+Gamma(d))
	// (2) mean: fl(ŝs/n) or fl(ŝs·fl(1/n)), at most two roundings.
	eM := Gamma(2)*(b.ss/nf) + (eSS/nf)*(1+Gamma(2)) + 2*Eta32
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
	// A stored rms is sqrtf(v̂) (½ ulp) or 1/rsqrtf(v̂) (5u then u).
	b.rhoRMS = relMul(relSqrt(b.tau, epsFloor(eps, b.v)), relMul(rsqrtErr, U32))
	return b
}

func refRMSNormForwardTol(tolY, tolRMS []float64, x, gamma []float64, rows, hidden int, eps float64, red Reduction) {
	mustShape(rows, hidden)
	mustLen("tolY", tolY, rows*hidden)
	mustLenOpt("tolRMS", tolRMS, rows)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		b := refRMSRow(xr, eps, red)
		if tolRMS != nil {
			tolRMS[r] = b.rms * b.rhoRMS
		}
		rel := relMul(b.rhoInv, Gamma(2))
		out := tolY[r*hidden : (r+1)*hidden]
		for i, v := range xr {
			y := math.Abs(v * b.ri * gamma[i])
			out[i] = y*rel + Eta32*(math.Abs(gamma[i])*(1+U32)+math.Abs(v)*(1+U32)+1)
		}
	}
}

func refRMSNormBackwardTol(tolDX, tolDGamma []float64, x, gamma, dy []float64, rows, hidden int, eps float64, red, rowRed Reduction) {
	mustShape(rows, hidden)
	mustLen("tolDX", tolDX, rows*hidden)
	mustLenOpt("tolDGamma", tolDGamma, hidden)
	mustLen("x", x, rows*hidden)
	mustLen("gamma", gamma, hidden)
	mustLen("dy", dy, rows*hidden)
	n := float64(hidden)
	d := red.Depth(hidden)
	dr := rowRed.Depth(rows)
	for i := range tolDGamma {
		tolDGamma[i] = 0
	}
	for r := 0; r < rows; r++ {
		xr := x[r*hidden : (r+1)*hidden]
		dyr := dy[r*hidden : (r+1)*hidden]
		b := refRMSRow(xr, eps, red)
		ri := b.ri
		rho := relMul(b.rhoInv, U32)
		var sAcc kbn
		var p, fs float64
		for j, v := range xr {
			g := gamma[j] * dyr[j]
			sAcc.addProd(g, v)
			p += math.Abs(g * v)
			fs += math.Abs(v) + (math.Abs(g)+1)/ri + 1
		}
		s := sAcc.sum()
		eS := Gamma(d+3)*p + Eta32*fs*(1+Gamma(d+3))
		rho3 := relMul(relMul(rho, rho), rho)
		eA := relMul(rho, Gamma(2))
		eB := relMul(rho3, Gamma(6))
		ri3n := ri * ri * ri / n
		out := tolDX[r*hidden : (r+1)*hidden]
		for i, v := range xr {
			g := gamma[i] * dyr[i]
			a := math.Abs(ri * g)
			bb := math.Abs(v) * ri3n * math.Abs(s)
			dx := math.Abs(ri*g - v*ri3n*s)
			e := a*eA + bb*eB + math.Abs(v)*ri3n*eS*(1+eB)
			floor := Eta32 * (1 + Gamma(8)) * (2*(ri+1) + 3*math.Abs(v)*(ri*ri+ri*ri*ri) + 2*ri*(1+(ri+1)*math.Abs(s)/n) + 2)
			out[i] = e + U32*(dx+e) + floor
		}
		if tolDGamma != nil {
			rel := relMul(rho, Gamma(2+dr))
			for i := range tolDGamma {
				tolDGamma[i] += math.Abs(dyr[i]*xr[i])*ri*rel + Eta32*(ri+math.Abs(dyr[i])+1)*(1+Gamma(dr+1))
			}
		}
	}
}

func refDirectionalDerivativeFDErr(f func([]float64) float64, x, v []float64, h, df float64) (value, errEstimate float64) {
	mustLen("v", v, len(x))
	z := make([]float64, len(x))
	fmax := 0.0
	eval := func(t float64) float64 {
		for i := range x {
			z[i] = x[i] + t*v[i]
		}
		fv := f(z)
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
