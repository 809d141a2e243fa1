package oracle

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Gradient properties: the analytic backward passes agree with the
// complex-step derivative of the forward (no cancellation, ~1e-13) and with
// Richardson-extrapolated finite differences (their own error estimate).
//
// Tolerances:
//   - complex step vs analytic: both are sums of the same Σ|∂L/∂θ_k·v_k|
//     terms computed with O(hidden) binary64 roundings, so
//     |CS − analytic| ≤ 1e-12·Scale·κ, where κ = 1 + max|x|·rstd accounts
//     for LayerNorm's complex mean (computed without the double-double of
//     the real reference: Re(x−μ) loses ε·|μ|/σ).
//   - finite differences vs complex step: |FD − CS| ≤ 2·FDErr +
//     1e-12·Scale·κ; FDErr is the truncation estimate |R − R1(h/2)| plus the
//     propagated evaluation error 7·δf/h (DirectionalDerivativeFD).

func direction(t *rapid.T, label string, n int) []float64 {
	v := make([]float64, n)
	rng := NewSoundnessChooser(rapid.Uint64().Draw(t, label+".seed"), 1).R
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// gradStats records the worst relative disagreements seen by a test.
type gradStats struct{ cs, fd, fdBound float64 }

func (g *gradStats) log(t *testing.T) {
	t.Logf("max |CS−analytic|/scale = %.3g, max |FD−analytic|/scale = %.3g, max |FD−CS|/tolerance = %.3g", g.cs, g.fd, g.fdBound)
}

func checkDirectional(t *rapid.T, st *gradStats, d Directional, kappa float64) {
	t.Helper()
	if d.Scale > 0 {
		st.cs = math.Max(st.cs, math.Abs(d.ComplexStep-d.Analytic)/d.Scale)
		st.fd = math.Max(st.fd, math.Abs(d.FD-d.Analytic)/d.Scale)
	}
	csTol := 1e-12 * d.Scale * kappa
	if e := math.Abs(d.ComplexStep - d.Analytic); e > csTol || math.IsNaN(d.ComplexStep) || math.IsNaN(d.Analytic) {
		t.Fatalf("complex step %.17g vs analytic %.17g: |diff| = %.3g > %.3g (scale %.3g)", d.ComplexStep, d.Analytic, e, csTol, d.Scale)
	}
	fdTol := 2*d.FDErr + csTol
	if fdTol > 0 {
		st.fdBound = math.Max(st.fdBound, math.Abs(d.FD-d.ComplexStep)/fdTol)
	}
	if e := math.Abs(d.FD - d.ComplexStep); e > fdTol || math.IsNaN(d.FD) {
		t.Fatalf("finite differences %.17g vs complex step %.17g: |diff| = %.3g > %.3g (FDErr %.3g, scale %.3g)", d.FD, d.ComplexStep, e, fdTol, d.FDErr, d.Scale)
	}
}

// checkDirectionals runs the property whose draw returns a Directional
// and its κ through checkDirectional and logs the worst disagreements.
func checkDirectionals(t *testing.T, draw func(t *rapid.T) (d Directional, kappa float64)) {
	var st gradStats
	defer st.log(t)
	rapid.Check(t, func(t *rapid.T) {
		d, kappa := draw(t)
		checkDirectional(t, &st, d, kappa)
	})
}

func TestRMSNormBackwardMatchesDerivatives(t *testing.T) {
	checkDirectionals(t, func(t *rapid.T) (Directional, float64) {
		rows, hidden, eps, x, gamma := drawSmallNorm(t)
		w := drawData(t, "w", rows, hidden)
		return RMSNormDirectional(x, gamma, w, direction(t, "vx", len(x)), direction(t, "vgamma", hidden), rows, hidden, eps), 1
	})
}

func TestPerHeadRMSNormBackwardMatchesDerivatives(t *testing.T) {
	checkDirectionals(t, func(t *rapid.T) (Directional, float64) {
		rows := rapid.IntRange(1, 3).Draw(t, "rows")
		heads := rapid.IntRange(1, 4).Draw(t, "heads")
		headDim := rapid.IntRange(1, 32).Draw(t, "headDim")
		eps := drawEps(rapidChooser{t})
		x := drawData(t, "x", rows*heads, headDim)
		gamma := drawGamma(t, "gamma", headDim)
		w := drawData(t, "w", rows*heads, headDim)
		return PerHeadRMSNormDirectional(x, gamma, w, direction(t, "vx", len(x)), direction(t, "vgamma", headDim), rows, heads, headDim, eps), 1
	})
}

func TestLayerNormBackwardMatchesDerivatives(t *testing.T) {
	checkDirectionals(t, func(t *rapid.T) (Directional, float64) {
		rows, hidden, eps, x, gamma := drawSmallNorm(t)
		beta := drawGamma(t, "beta", hidden)
		w := drawData(t, "w", rows, hidden)
		d := LayerNormDirectional(x, gamma, beta, w, direction(t, "vx", len(x)),
			direction(t, "vgamma", hidden), direction(t, "vbeta", hidden), rows, hidden, eps)
		rstd := make([]float64, rows)
		LayerNormForward(make([]float64, len(x)), nil, rstd, x, gamma, beta, rows, hidden, eps)
		kappa := 1.0
		for r := 0; r < rows; r++ {
			kappa = math.Max(kappa, 1+maxAbs(x[r*hidden:(r+1)*hidden])*rstd[r])
		}
		return d, kappa
	})
}

func TestRoPEBackwardIsAdjoint(t *testing.T) {
	checkDirectionals(t, func(t *rapid.T) (Directional, float64) {
		c := GenerateCase(KernelRoPENeoXForward, rapidChooser{t})
		w := drawData(t, "w", c.Rows, c.Hidden)
		return RoPENeoXDirectional(c.X, w, direction(t, "vx", len(c.X)), c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta), 1
	})
}

func TestSoftmaxBackwardMatchesDerivatives(t *testing.T) {
	checkDirectionals(t, func(t *rapid.T) (Directional, float64) {
		c := GenerateCase(KernelSoftmaxForward, rapidChooser{t})
		w := drawData(t, "w", c.Rows, c.Hidden)
		return SoftmaxDirectional(c.X, w, direction(t, "vx", len(c.X)), c.Rows, c.Hidden), 1
	})
}

func TestDirectionalDerivativeFD(t *testing.T) {
	// f(x) = exp(x0)·sin(x1): the derivative along v is known in closed form.
	f := func(p []float64) float64 { return math.Exp(p[0]) * math.Sin(p[1]) }
	rapid.Check(t, func(t *rapid.T) {
		x := []float64{rapid.Float64Range(-3, 3).Draw(t, "x0"), rapid.Float64Range(-3, 3).Draw(t, "x1")}
		v := []float64{rapid.Float64Range(-1, 1).Draw(t, "v0"), rapid.Float64Range(-1, 1).Draw(t, "v1")}
		want := math.Exp(x[0]) * (math.Sin(x[1])*v[0] + math.Cos(x[1])*v[1])
		got, est := DirectionalDerivativeFD(f, x, v, 1e-2)
		if math.Abs(got-want) > est+1e-15 {
			t.Fatalf("FD %.17g, want %.17g: |err| %.3g > estimate %.3g", got, want, math.Abs(got-want), est)
		}
		cs := ComplexStep(func(z []complex128) complex128 { return cexp(z[0]) * csin(z[1]) }, x, v, ComplexStepH)
		if math.Abs(cs-want) > 4*Eps64*math.Exp(x[0])*(math.Abs(v[0])+math.Abs(v[1])) {
			t.Fatalf("complex step %.17g, want %.17g", cs, want)
		}
	})
}

// Two levels of Richardson extrapolation remove the t² and t⁴ terms of the
// central difference D(t) = c1 + c3·t² + c5·t⁴ + c7·t⁶ of a polynomial
// c0 + c1·t + … + c7·t⁷ and leave c7·h⁶/64 (R1 carries −(5/16)·c7·t⁶, R
// (16·R1(h/2) − R1(h))/15 of it); R1(h/2) keeps −c5·h⁴/64 − (5/1024)·c7·h⁶.
// With small integer coefficients and h a power of two every evaluation
// and difference is exact, so the value is exactly c1 + c7·h⁶/64 and the
// estimate |R − R1(h/2)| + 7·δf/h with δf = max(df, 0) + 2^-46·max|f|.
func TestDirectionalDerivativeFDOnPolynomials(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c [8]float64
		for k := range c {
			c[k] = float64(rapid.IntRange(-8, 8).Draw(t, fmt.Sprintf("c%d", k)))
		}
		h := math.Ldexp(1, -rapid.IntRange(0, 3).Draw(t, "log2(1/h)"))
		df := rapid.SampledFrom([]float64{-1, 0, 0x1p-30}).Draw(t, "df")
		var at []float64
		fmax := 0.0
		f := func(s float64) float64 {
			at = append(at, s)
			p := 0.0
			for k := len(c) - 1; k >= 0; k-- {
				p = p*s + c[k]
			}
			fmax = math.Max(fmax, math.Abs(p))
			return p
		}
		got, est := DirectionalDerivativeFDAlong(f, h, df)
		if order := []float64{h, -h, h / 2, -h / 2, h / 4, -h / 4}; !slices.Equal(at, order) {
			t.Fatalf("f evaluated at %v, want %v", at, order)
		}
		h6 := math.Pow(h, 6)
		if want := c[1] + c[7]*h6/64; got != want {
			t.Fatalf("value %.17g, want c1 + c7·h⁶/64 = %.17g", got, want)
		}
		want := math.Abs(c[5]*h*h*h*h/64+21*c[7]*h6/1024) + 7*(max(df, 0)+0x1p-46*fmax)/h
		if math.Abs(est-want) > 1e-15*want {
			t.Fatalf("error estimate %.17g, want |R − R1(h/2)| + 7·δf/h = %.17g", est, want)
		}
	})
}

func cexp(z complex128) complex128 {
	e := math.Exp(real(z))
	s, c := math.Sincos(imag(z))
	return complex(e*c, e*s)
}

func csin(z complex128) complex128 {
	s, c := math.Sincos(real(z))
	return complex(s*math.Cosh(imag(z)), c*math.Sinh(imag(z)))
}
