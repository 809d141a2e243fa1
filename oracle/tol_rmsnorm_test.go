package oracle

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// The RMSNorm bounds are checked against their derivations' first-order
// terms, computed here from the steps in the doc comments of
// RMSNormForwardTol and RMSNormBackwardTol, not from the code: with
// n = hidden, d = red.Depth(n), ms = Σx²/n, v = ms + eps and u = U32,
//
//	τ      = u·((d+8)·ms + 2·eps)/v      (steps 1–3: Σx², /n by div.full
//	                                      (5u) or ·fl(1/n) (6u), + eps)
//	tolY   = |y|·(τ/2 + 9u)              (4: sqrt.approx 2u then div.full
//	                                      5u; 5: x·ri·γ)
//	tolRMS = rms·(τ/2 + 12u)             (1/rsqrt: 7u, then div.full 5u)
//	ρ      = τ/2 + 17u                   (the backward's 1/rms from such a
//	                                      stored rms: 12u, then div.full 5u)
//	tolDX  = |A|(ρ+2u) + |B|(3ρ+10u) + |x|·ri³/n·(d+3)u·Σ|γ·dy·x| + u|dx|
//	tolDγ  = Σ_rows |dy·x|·ri·(ρ + (2+d_r)u)
//
// with A = ri·γ·dy and B = x·ri³·Σγ·dy·x/n (RMSNormBackwardTol's names).
//
// On data away from underflow the bounds' second-order terms, about
// (5d/2 + 30)·u of them, stay below 5·10⁻⁵ for n ≤ 300, while one rounding
// more or less in a step moves the term it enters by u over the term's
// first-order coefficient, at least 3·10⁻³: firstOrderTol is between.
const firstOrderTol = 1e-4

// awayFromZero returns n float32 values ±scale·(1+|N(0,1)|): no value is
// near zero, so no square, product or row statistic underflows and the
// bounds' underflow floors are negligible.
func awayFromZero(t *rapid.T, label string, n int, scale float64) []float64 {
	v := direction(t, label, n)
	for i, z := range v {
		v[i] = math.Copysign(scale*(1+math.Abs(z)), z)
	}
	return RoundToFloat32(v)
}

// drawFirstOrderCase draws a shape, reductions, eps and float32 data for
// the first-order checks; gamma is near one.
func drawFirstOrderCase(t *rapid.T) (rows, hidden int, x, gamma, dy []float64, eps float64, red, rowRed Reduction) {
	rows = rapid.IntRange(1, 5).Draw(t, "rows")
	hidden = rapid.IntRange(1, 300).Draw(t, "hidden")
	red, rowRed = drawReductions(t, rows, hidden)
	eps = rapid.SampledFrom([]float64{0, 1e-6, 1e-5}).Draw(t, "eps")
	scale := rapid.SampledFrom([]float64{0.1, 1, 1e3}).Draw(t, "scale")
	x = awayFromZero(t, "x", rows*hidden, scale)
	dy = awayFromZero(t, "dy", rows*hidden, rapid.SampledFrom([]float64{1e-3, 1, 1e2}).Draw(t, "dy.scale"))
	gamma = awayFromZero(t, "gamma", hidden, 1)
	for i := range gamma {
		gamma[i] = float64(float32(1 + 0.1*gamma[i]))
	}
	return rows, hidden, x, gamma, dy, eps, red, rowRed
}

// requireFirstOrder fails unless got is within firstOrderTol of want,
// relatively.
func requireFirstOrder(t *rapid.T, what string, i int, got, want float64) {
	t.Helper()
	if !(math.Abs(got-want) <= firstOrderTol*want) {
		t.Fatalf("%s[%d] = %.9g, first-order derivation %.9g: ratio %.9g", what, i, got, want, got/want)
	}
}

// rowTau returns the first-order τ of one row and its ms and v.
func rowTau(xr []float64, eps float64, red Reduction) (tau, v float64) {
	n := len(xr)
	ms := 0.0
	for _, x := range xr {
		ms += x * x
	}
	ms /= float64(n)
	v = ms + eps
	return U32 * (float64(red.Depth(n)+8)*ms + 2*eps) / v, v
}

func TestRMSNormForwardTolFirstOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, x, gamma, _, eps, red, _ := drawFirstOrderCase(t)
		tolY, tolRMS := make([]float64, rows*hidden), make([]float64, rows)
		RMSNormForwardTol(tolY, tolRMS, x, gamma, rows, hidden, eps, red)
		for r := 0; r < rows; r++ {
			xr := x[r*hidden : (r+1)*hidden]
			tau, v := rowTau(xr, eps, red)
			rms := math.Sqrt(v)
			requireFirstOrder(t, "tolRMS", r, tolRMS[r], rms*(tau/2+12*U32))
			for i, xv := range xr {
				k := r*hidden + i
				requireFirstOrder(t, "tolY", k, tolY[k], math.Abs(xv/rms*gamma[i])*(tau/2+9*U32))
			}
		}
	})
}

func TestRMSNormBackwardTolFirstOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, x, gamma, dy, eps, red, rowRed := drawFirstOrderCase(t)
		tolDX, tolDG := make([]float64, rows*hidden), make([]float64, hidden)
		RMSNormBackwardTol(tolDX, tolDG, x, gamma, dy, rows, hidden, eps, red, rowRed)
		n, d, dr := float64(hidden), float64(red.Depth(hidden)), float64(rowRed.Depth(rows))
		wantDG := make([]float64, hidden)
		for r := 0; r < rows; r++ {
			xr, dyr := x[r*hidden:(r+1)*hidden], dy[r*hidden:(r+1)*hidden]
			tau, v := rowTau(xr, eps, red)
			ri := 1 / math.Sqrt(v)
			rho := tau/2 + 17*U32
			s, p := 0.0, 0.0
			for j, xv := range xr {
				s += gamma[j] * dyr[j] * xv
				p += math.Abs(gamma[j] * dyr[j] * xv)
			}
			for i, xv := range xr {
				a := ri * gamma[i] * dyr[i]
				b := xv * ri * ri * ri * s / n
				want := math.Abs(a)*(rho+2*U32) + math.Abs(b)*(3*rho+10*U32) +
					math.Abs(xv)*ri*ri*ri/n*(d+3)*U32*p + U32*math.Abs(a-b)
				requireFirstOrder(t, "tolDX", r*hidden+i, tolDX[r*hidden+i], want)
				wantDG[i] += math.Abs(dyr[i]*xv) * ri * (rho + (2+dr)*U32)
			}
		}
		for i, want := range wantDG {
			requireFirstOrder(t, "tolDGamma", i, tolDG[i], want)
		}
	})
}

// A dγ summed over rows by additions that flush subnormal terms and
// results to zero (atom.add.f32 on global memory) stays within the bound
// of a flushing rows reduction at subnormal scale, where the bound of
// gradual underflow does not hold.
func TestRMSNormBackwardTolFlushingSums(t *testing.T) {
	ftz := func(v float32) float32 {
		if math.Abs(float64(v)) < 0x1p-126 {
			return float32(math.Copysign(0, float64(v)))
		}
		return v
	}
	rng := rand.New(rand.NewPCG(1, 2))
	exceeded := false
	for trial := 0; trial < 200; trial++ {
		rows, hidden := 1+rng.IntN(16), 1+rng.IntN(8)
		x, dy, gamma := make([]float64, rows*hidden), make([]float64, rows*hidden), make([]float64, hidden)
		for i := range x {
			x[i] = float64(float32(rng.NormFloat64() * 0x1p-130)) // subnormal rows
			dy[i] = float64(float32(rng.NormFloat64()))
		}
		for i := range gamma {
			gamma[i] = 1
		}
		const eps = 1e-5
		dg := make([]float32, hidden)
		for r := 0; r < rows; r++ {
			ss := 0.0
			for j := 0; j < hidden; j++ {
				ss += x[r*hidden+j] * x[r*hidden+j]
			}
			ri := float32(1 / math.Sqrt(ss/float64(hidden)+eps))
			for j := 0; j < hidden; j++ {
				term := float32(float32(dy[r*hidden+j])*float32(x[r*hidden+j])) * ri
				dg[j] = ftz(ftz(dg[j]) + ftz(term)) // one atomic addition
			}
		}
		want, dx := make([]float64, hidden), make([]float64, rows*hidden)
		tolDX, tol, tolFlush := make([]float64, rows*hidden), make([]float64, hidden), make([]float64, hidden)
		RMSNormBackwardWithTol(dx, want, tolDX, tol, nil, x, gamma, dy, rows, hidden, eps, SerialReduction(), SerialReduction())
		RMSNormBackwardTol(tolDX, tolFlush, x, gamma, dy, rows, hidden, eps, SerialReduction(), Reduction{Threads: 1, Flush: true})
		for j := range want {
			e := math.Abs(float64(dg[j]) - want[j])
			if e > tolFlush[j] {
				t.Fatalf("rows=%d hidden=%d dγ[%d]: flushed sum %g, want %g: |err| %g > flushing bound %g", rows, hidden, j, dg[j], want[j], e, tolFlush[j])
			}
			exceeded = exceeded || e > tol[j]
		}
	}
	if !exceeded {
		t.Error("no flushed sum exceeded the gradual-underflow bound: the test shows nothing")
	}
}
