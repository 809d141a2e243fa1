package oracle

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// The float64 references are checked against evaluations in math/big.Float
// at 256 bits: every operation there is exact to ~1e-77, so the difference
// is the reference's own error. It must be ≤ 1e-14 relative to the
// magnitude of the quantity (for outputs formed by cancellation, relative to
// the sum of the magnitudes cancelled, the only scale a rounding error can
// be judged against).

const bigPrec = 256

func bf(v float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(v) }
func bnew() *big.Float        { return new(big.Float).SetPrec(bigPrec) }
func badd(a, b *big.Float) *big.Float {
	return bnew().Add(a, b)
}
func bsub(a, b *big.Float) *big.Float { return bnew().Sub(a, b) }
func bmul(a, b *big.Float) *big.Float { return bnew().Mul(a, b) }
func bquo(a, b *big.Float) *big.Float { return bnew().Quo(a, b) }
func bsqrt(a *big.Float) *big.Float   { return bnew().Sqrt(a) }
func b64(a *big.Float) float64 {
	f, _ := a.Float64()
	return f
}
func babs(a *big.Float) float64 { return math.Abs(b64(a)) }

const bigRelTol = 1e-14

func checkRel(t *rapid.T, what string, i int, got, want, scale float64) {
	if e := math.Abs(got - want); e > bigRelTol*scale || math.IsNaN(got) {
		t.Fatalf("%s[%d]: got %.17g want %.17g |err| = %.3g > 1e-14·%.3g", what, i, got, want, e, scale)
	}
}

type bigRMS struct {
	v, r *big.Float // mean(x²)+eps, sqrt(v)
}

func bigRMSRow(x []float64, eps float64) bigRMS {
	ss := bnew()
	for _, v := range x {
		ss = badd(ss, bmul(bf(v), bf(v)))
	}
	v := badd(bquo(ss, bf(float64(len(x)))), bf(eps))
	return bigRMS{v: v, r: bsqrt(v)}
}

func smallRows(t *rapid.T) (rows, hidden int) {
	return rapid.IntRange(1, 3).Draw(t, "rows"), rapid.IntRange(1, 64).Draw(t, "hidden")
}

// drawSmallNorm draws a small shape, eps, x and γ for a normalisation.
func drawSmallNorm(t *rapid.T) (rows, hidden int, eps float64, x, gamma []float64) {
	rows, hidden = smallRows(t)
	eps = drawEps(rapidChooser{t})
	return rows, hidden, eps, drawData(t, "x", rows, hidden), drawGamma(t, "gamma", hidden)
}

func drawData(t *rapid.T, label string, rows, w int) []float64 {
	x := make([]float64, rows*w)
	fillRows(rapidChooser{t}, label, x, rows, w)
	return x
}

func drawGamma(t *rapid.T, label string, n int) []float64 {
	g := make([]float64, n)
	fillGamma(rapidChooser{t}, label, g)
	return g
}

func TestRMSNormMatchesBigFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, eps, x, gamma := drawSmallNorm(t)
		dy := drawData(t, "dy", rows, hidden)
		y, rms := make([]float64, rows*hidden), make([]float64, rows)
		RMSNormForward(y, rms, x, gamma, rows, hidden, eps)
		dx, dg := make([]float64, rows*hidden), make([]float64, hidden)
		RMSNormBackward(dx, dg, x, gamma, dy, rows, hidden, eps)
		n := bf(float64(hidden))
		dgB := make([]*big.Float, hidden)
		dgS := make([]float64, hidden)
		for i := range dgB {
			dgB[i] = bnew()
		}
		for r := 0; r < rows; r++ {
			xr := x[r*hidden : (r+1)*hidden]
			b := bigRMSRow(xr, eps)
			checkRel(t, "rms", r, rms[r], b64(b.r), b64(b.r))
			s := bnew()
			for j, v := range xr {
				s = badd(s, bmul(bmul(bf(gamma[j]), bf(dy[r*hidden+j])), bf(v)))
			}
			for i, v := range xr {
				k := r*hidden + i
				yb := bmul(bquo(bf(v), b.r), bf(gamma[i]))
				checkRel(t, "y", k, y[k], b64(yb), babs(yb))
				a := bquo(bmul(bf(gamma[i]), bf(dy[k])), b.r)
				bb := bquo(bmul(bf(v), s), bmul(bmul(n, b.v), b.r))
				checkRel(t, "dx", k, dx[k], b64(bsub(a, bb)), babs(a)+babs(bb))
				term := bquo(bmul(bf(dy[k]), bf(v)), b.r)
				dgB[i] = badd(dgB[i], term)
				dgS[i] += babs(term)
			}
		}
		for i := range dgB {
			checkRel(t, "dgamma", i, dg[i], b64(dgB[i]), dgS[i])
		}
	})
}

func TestLayerNormMatchesBigFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, eps, x, gamma := drawSmallNorm(t)
		beta := drawGamma(t, "beta", hidden)
		y, mean, rstd := make([]float64, rows*hidden), make([]float64, rows), make([]float64, rows)
		LayerNormForward(y, mean, rstd, x, gamma, beta, rows, hidden, eps)
		n := bf(float64(hidden))
		for r := 0; r < rows; r++ {
			xr := x[r*hidden : (r+1)*hidden]
			s := bnew()
			m1 := 0.0
			for _, v := range xr {
				s = badd(s, bf(v))
				m1 += math.Abs(v)
			}
			mu := bquo(s, n)
			q := bnew()
			c := make([]*big.Float, hidden)
			for j, v := range xr {
				c[j] = bsub(bf(v), mu)
				q = badd(q, bmul(c[j], c[j]))
			}
			rs := bquo(bf(1), bsqrt(badd(bquo(q, n), bf(eps))))
			checkRel(t, "mean", r, mean[r], b64(mu), babs(mu))
			checkRel(t, "rstd", r, rstd[r], b64(rs), b64(rs))
			for j := range xr {
				k := r*hidden + j
				p := bmul(bmul(c[j], rs), bf(gamma[j]))
				checkRel(t, "y", k, y[k], b64(badd(p, bf(beta[j]))), babs(p)+math.Abs(beta[j]))
			}
		}
	})
}

func TestRoPEMatchesBigFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := GenerateCase(KernelRoPENeoXForward, rapidChooser{t})
		style := RoPEStyle(rapid.IntRange(0, 1).Draw(t, "style"))
		sign := rapid.SampledFrom([]float64{1, -1}).Draw(t, "sign")
		y := make([]float64, len(c.X))
		rope(y, c.X, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, sign)
		half := c.HeadDim / 2
		ang := make([]float64, half)
		for r := 0; r < c.Rows; r++ {
			RoPEAngles(ang, c.Pos[r], c.HeadDim, c.Theta)
			// The angle itself against big: θ^(−2i/d) = exp(−(2i/d)·ln θ) is
			// not available in big, so check the exponent identity in
			// float64 with a looser bound and everything after in big.
			for i, a := range ang {
				want := c.Pos[r] * math.Exp(-2*float64(i)/float64(c.HeadDim)*math.Log(c.Theta))
				if math.Abs(a-want) > 64*Eps64*math.Abs(want)*(1+math.Log(c.Theta)) {
					t.Fatalf("angle[%d] = %.17g, exp/log form %.17g", i, a, want)
				}
			}
			for h := 0; h < c.Heads; h++ {
				base := r*c.HeadDim*c.Heads + h*c.HeadDim
				for i, a := range ang {
					s, co := math.Sincos(a)
					s *= sign
					ia, ib := style.pair(i, c.HeadDim)
					x0, x1 := bf(c.X[base+ia]), bf(c.X[base+ib])
					p0 := bsub(bmul(x0, bf(co)), bmul(x1, bf(s)))
					p1 := badd(bmul(x0, bf(s)), bmul(x1, bf(co)))
					sc := math.Abs(c.X[base+ia]) + math.Abs(c.X[base+ib])
					checkRel(t, "y", base+ia, y[base+ia], b64(p0), sc)
					checkRel(t, "y", base+ib, y[base+ib], b64(p1), sc)
				}
			}
		}
	})
}
