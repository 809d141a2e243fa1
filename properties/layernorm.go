package properties

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
)

type lnCase struct {
	rmsCase
	beta []float32
}

func drawLNCase(rt *rapid.T, lim gen.Limits, dists ...gen.Dist) lnCase {
	c := lnCase{rmsCase: drawRMSCase(rt, lim, dists...)}
	c.beta = lim.Gamma(rt, "beta", c.hidden)
	return c
}

func runLN(o *Obs, dev cudart.Device, impl LayerNormForwarder, c lnCase, x []float32, stats bool) *op.LayerNormForwardArgs {
	o.rt.Helper()
	a := &op.LayerNormForwardArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, X: x, Gamma: c.gamma, Beta: c.beta,
		Y: make([]float32, len(x))}
	if stats {
		a.Mean, a.Rstd = make([]float32, c.rows), make([]float32, c.rows)
	}
	a.Offsets = o.offsets(impl, op.LayerNormForward)
	o.Check("layernorm forward", impl.LayerNormForward(dev, a))
	return a
}

func lnTol(impl any, c lnCase, x []float32) (want, mean, rstd, tol, tolMean, tolRstd []float64) {
	xf, g, b := gen.F64(x), gen.F64(c.gamma), gen.F64(c.beta)
	n := len(xf)
	want, mean, rstd = make([]float64, n), make([]float64, c.rows), make([]float64, c.rows)
	tol, tolMean, tolRstd = make([]float64, n), make([]float64, c.rows), make([]float64, c.rows)
	oracle.LayerNormForward(want, mean, rstd, xf, g, b, c.rows, c.hidden, float64(c.eps))
	row, _ := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
	oracle.LayerNormForwardTol(tol, tolMean, tolRstd, xf, g, b, c.rows, c.hidden, float64(c.eps), row, oracle.TwoPassVariance)
	return
}

// LayerNormForwardContract checks LN-FWD-001.
func LayerNormForwardContract(t TB, impl LayerNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, LNForward)
	check(t, LNForward, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawLNCase(rt, lim)
		o.Context(c.hidden, "%v", c.rmsCase)
		// The statistics are checked where the implementation saves
		// them; an inference kernel that saves none is judged on y.
		stats := computes(impl, "mean") && computes(impl, "rstd")
		a := runLN(o, dev, impl, c, c.x.Data, stats)
		want, mean, rstd, tol, tolMean, tolRstd := lnTol(impl, c, c.x.Data)
		if stats {
			o.Within("mean", a.Mean, mean, tolMean)
			o.Within("rstd", a.Rstd, rstd, tolRstd)
		}
		o.Within("y", a.Y, want, tol)
		naive := make([]float32, len(want))
		oracle.LayerNormForward32Naive(naive, nil, nil, c.x.Data, c.gamma, c.beta, c.rows, c.hidden, c.eps)
		o.Naive(naive, want, tol)
	})
}

// LayerNormShiftContract checks LN-SHIFT-001: x is drawn on the grid
// k·2^e with |k| < 2^12 and c = m·2^e with |m| < 2^11, so x + c is exact in
// float32 and the exact LayerNorm of both inputs is the same.
func LayerNormShiftContract(t TB, impl LayerNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, LNShift)
	check(t, LNShift, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawLNCase(rt, lim, gen.Normal, gen.MixedScale, gen.Constant)
		e := rapid.IntRange(-30, 10).Draw(rt, "grid.exp")
		m := rapid.IntRange(-(1<<11)+1, 1<<11-1).Draw(rt, "shift.k")
		x, xs := shiftGrid(c.x.Data, e, m)
		o.Context(c.hidden, "%v grid=2^%d shift=%d·2^%d", c.rmsCase, e, m, e)
		a := runLN(o, dev, impl, c, x, false)
		b := runLN(o, dev, impl, c, xs, false)
		want, _, _, tolA, _, _ := lnTol(impl, c, x)
		_, _, _, tolB, _, _ := lnTol(impl, c, xs)
		tol := make([]float64, len(tolA))
		for i := range tol {
			tol[i] = tolA[i] + tolB[i]
		}
		o.Within("LN(x)", a.Y, want, tolA)
		o.Within("LN(x+c) − LN(x)", b.Y, gen.F64(a.Y), tol)
	})
}

// shiftGrid puts data on the grid k·2^e (|k| < 2^12, scaled so that the
// largest |value| lands near 2^11) and returns it with its shift by m·2^e
// (|m| < 2^11): both are exact in float32, so they differ by exactly c.
func shiftGrid(data []float32, e, m int) (x, xs []float32) {
	ulp := math.Ldexp(1, e)
	x, xs = make([]float32, len(data)), make([]float32, len(data))
	top := math.Max(1e-300, maxAbs(data))
	for i, v := range data {
		k := math.Max(-(1<<12)+1, math.Min(1<<12-1, math.Round(float64(v)/top*(1<<11))))
		x[i] = float32(k * ulp)
		xs[i] = float32((k + float64(m)) * ulp)
	}
	return x, xs
}

func maxAbs(x []float32) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// LayerNormMomentsContract checks LN-MOMENTS-001.
func LayerNormMomentsContract(t TB, impl LayerNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, LNMoments)
	check(t, LNMoments, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawLNCase(rt, lim, gen.Normal, gen.MixedScale)
		for i := range c.gamma {
			c.gamma[i], c.beta[i] = 1, 0
		}
		o.Context(c.hidden, "%v", c.rmsCase)
		a := runLN(o, dev, impl, c, c.x.Data, false)
		want, _, _, tol, _, _ := lnTol(impl, c, c.x.Data)
		o.Within("y", a.Y, want, tol)
		for r := 0; r < c.rows; r++ {
			lo, hi := r*c.hidden, (r+1)*c.hidden
			n := float64(c.hidden)
			// The moments of the kernel's output row, with compensated sums
			// (gonum floats.SumCompensated) so that their own error stays far
			// below the bounds they are compared with.
			xr := gen.F64(c.x.Data[lo:hi])
			mu := floats.SumCompensated(xr) / n
			ys, absY, sqs, tols, sqTols, dev2 := make([]float64, c.hidden), make([]float64, c.hidden),
				make([]float64, c.hidden), tol[lo:hi], make([]float64, c.hidden), make([]float64, c.hidden)
			for j := range ys {
				y := float64(a.Y[lo+j])
				ys[j], absY[j], sqs[j] = y, math.Abs(y), y*y
				sqTols[j] = 2*math.Abs(want[lo+j])*tols[j] + tols[j]*tols[j]
				dev2[j] = (xr[j] - mu) * (xr[j] - mu)
			}
			sum, abs, sumTol := floats.SumCompensated(ys), floats.SumCompensated(absY), floats.SumCompensated(tols)
			sq, sqTol, v := floats.SumCompensated(sqs), floats.SumCompensated(sqTols), floats.SumCompensated(dev2)/n
			// |mean(ŷ)| ≤ Σ tol/n, since the exact y has mean 0; the float64
			// sums here add at most n·2⁻⁵³ of what they sum.
			o.Ratiof(math.Abs(sum/n), sumTol/n+2*n*oracle.Eps64*abs/n, "row %d mean", r)
			// mean(ŷ²) − mean(ŷ)² against the exact v/(v+ε): |mean(ŷ²) − mean(y²)| ≤
			// Σ(2|y|·tol + tol²)/n and mean(ŷ)² ≤ (Σ tol/n)².
			mean := sum / n
			wantVar := v / (v + float64(c.eps))
			o.Ratiof(math.Abs(sq/n-mean*mean-wantVar), sqTol/n+(sumTol/n)*(sumTol/n)+4*n*oracle.Eps64*(sq/n+wantVar),
				"row %d variance (want %.6g)", r, wantVar)
		}
	})
}

// LayerNormBackwardContract checks LN-BWD-001.
func LayerNormBackwardContract(t TB, impl LayerNormBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, LNBackward)
	check(t, LNBackward, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawRMSCase(rt, lim)
		dyT := values(rt, lim, "dy", c.rows, c.hidden, gen.Normal, gen.MixedScale)
		o.Context(c.hidden, "%v dy=%v", c, dyT)
		n := c.rows * c.hidden
		x, g, dy := gen.F64(c.x.Data), gen.F64(c.gamma), gen.F64(dyT.Data)
		// The forward's statistics, as a forward kernel stores them.
		mean, rstd := make([]float64, c.rows), make([]float64, c.rows)
		oracle.LayerNormForward(make([]float64, n), mean, rstd, x, g, make([]float64, c.hidden), c.rows, c.hidden, float64(c.eps))
		m32, r32 := make([]float32, c.rows), make([]float32, c.rows)
		for i := range m32 {
			m32[i], r32[i] = float32(mean[i]), float32(rstd[i])
		}
		a := &op.LayerNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, DY: dyT.Data,
			Mean: m32, Rstd: r32, DX: make([]float32, n), DGamma: make([]float32, c.hidden), DBeta: make([]float32, c.hidden)}
		a.Offsets = o.offsets(impl, op.LayerNormBackward)
		o.Check("layernorm backward", impl.LayerNormBackward(dev, a))
		dx, dg, db := make([]float64, n), make([]float64, c.hidden), make([]float64, c.hidden)
		oracle.LayerNormBackward(dx, dg, db, x, g, dy, c.rows, c.hidden, float64(c.eps))
		tdx, tdg, tdb := make([]float64, n), make([]float64, c.hidden), make([]float64, c.hidden)
		row, rows := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
		rows.Flush = flushingSums(impl) // dγ, dβ summed by flushing atomics
		oracle.LayerNormBackwardTol(tdx, tdg, tdb, x, g, dy, c.rows, c.hidden, float64(c.eps), row, rows)
		o.Within("dx", a.DX, dx, tdx)
		o.cols = 0
		o.Within("dgamma", a.DGamma, dg, tdg)
		o.Within("dbeta", a.DBeta, db, tdb)
	})
}

type qknCase struct {
	rows, heads, headDim int
	eps                  float32
	x                    gen.Tensor
	gamma                []float32
}

func drawQKN(rt *rapid.T, lim gen.Limits) qknCase {
	headDim := headDims().Draw(rt, "head_dim")
	heads := rapid.IntRange(1, max(1, min(32, lim.MaxHidden/headDim))).Draw(rt, "heads")
	rows := lim.DrawRows(rt, "rows", heads*headDim)
	s := lim.Conform(rt, op.Shape{Rows: rows, Hidden: heads * headDim, Heads: heads, HeadDim: headDim}, nil)
	rows, heads, headDim = s.Rows, s.Heads, s.HeadDim
	return qknCase{rows: rows, heads: heads, headDim: headDim, eps: lim.DrawEps(rt, "eps"),
		x: values(rt, lim, "x", rows, heads*headDim), gamma: lim.Gamma(rt, "gamma", headDim)}
}

func (c qknCase) String() string {
	return fmt.Sprintf("rows=%d heads=%d head_dim=%d eps=%g x=%v", c.rows, c.heads, c.headDim, c.eps, c.x)
}

func runQKN(o *Obs, dev cudart.Device, impl PerHeadRMSNormer, c qknCase, x []float32) []float32 {
	o.rt.Helper()
	a := &op.PerHeadRMSNormArgs{Rows: c.rows, Heads: c.heads, HeadDim: c.headDim, Eps: c.eps, X: x, Gamma: c.gamma,
		Y: make([]float32, len(x))}
	a.Offsets = o.offsets(impl, op.PerHeadRMSNorm)
	o.Check("per-head rmsnorm", impl.PerHeadRMSNorm(dev, a))
	return a.Y
}

// PerHeadRMSNormContract checks QKN-FWD-001.
func PerHeadRMSNormContract(t TB, impl PerHeadRMSNormer) {
	t.Helper()
	dev, lim := onDevice(t, QKNForward)
	check(t, QKNForward, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawQKN(rt, lim)
		o.Context(c.heads*c.headDim, "%v", c)
		y := runQKN(o, dev, impl, c, c.x.Data)
		x, g := scratchWiden(c.x.Data), scratchWiden(c.gamma)
		want, tol := scratch64.get(len(x)), scratch64.get(len(x))
		row, _ := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.heads * c.headDim, Heads: c.heads, HeadDim: c.headDim}, c.headDim)
		// oracle.PerHeadRMSNorm and PerHeadRMSNormTol are RMSNormForward and
		// its bound over rows·heads rows of headDim: in one pass.
		oracle.RMSNormForwardWithTol(want, nil, tol, nil, x, g, c.rows*c.heads, c.headDim, float64(c.eps), row)
		o.Within("y", y, want, tol)
		naive := scratch32.get(len(x))
		oracle.PerHeadRMSNorm32Naive(naive, nil, c.x.Data, c.gamma, c.rows, c.heads, c.headDim, c.eps)
		o.Naive(naive, want, tol)
		scratch32.put(naive)
		scratch64.put(x, g, want, tol)
	})
}

// PerHeadIndependenceContract checks QKN-HEAD-001: one (row, head) is
// redrawn; every other head's output must keep its bits.
func PerHeadIndependenceContract(t TB, impl PerHeadRMSNormer) {
	t.Helper()
	dev, lim := onDevice(t, QKNHeads)
	check(t, QKNHeads, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawQKN(rt, lim)
		r := rapid.IntRange(0, c.rows-1).Draw(rt, "row")
		h := rapid.IntRange(0, c.heads-1).Draw(rt, "head")
		o.Context(c.heads*c.headDim, "%v changed row %d head %d", c, r, h)
		y1 := runQKN(o, dev, impl, c, c.x.Data)
		x2 := append([]float32(nil), c.x.Data...)
		other := values(rt, lim, "x.head", 1, c.headDim)
		copy(x2[(r*c.heads+h)*c.headDim:], other.Data)
		y2 := runQKN(o, dev, impl, c, x2)
		lo, hi := (r*c.heads+h)*c.headDim, (r*c.heads+h+1)*c.headDim
		o.Identical("other heads before the changed one", y2[:lo], y1[:lo])
		o.Identical("other heads after the changed one", y2[hi:], y1[hi:])
	})
}

// The operations of this file: their interfaces, adapters and draws.
type (
	// LayerNormForwarder runs layernorm.forward.
	LayerNormForwarder interface {
		LayerNormForward(dev cudart.Device, a *op.LayerNormForwardArgs) error
	}
	// LayerNormBackwarder runs layernorm.backward.
	LayerNormBackwarder interface {
		LayerNormBackward(dev cudart.Device, a *op.LayerNormBackwardArgs) error
	}
	// PerHeadRMSNormer runs per_head_rmsnorm (QK-norm).
	PerHeadRMSNormer interface {
		PerHeadRMSNorm(dev cudart.Device, a *op.PerHeadRMSNormArgs) error
	}

	lnFwdFn   struct{ fn[op.LayerNormForwardArgs] }
	lnBwdFn   struct{ fn[op.LayerNormBackwardArgs] }
	perHeadFn struct{ fn[op.PerHeadRMSNormArgs] }
)

func (f lnFwdFn) LayerNormForward(d cudart.Device, a *op.LayerNormForwardArgs) error {
	return f.run(d, a)
}
func (f lnBwdFn) LayerNormBackward(d cudart.Device, a *op.LayerNormBackwardArgs) error {
	return f.run(d, a)
}
func (f perHeadFn) PerHeadRMSNorm(d cudart.Device, a *op.PerHeadRMSNormArgs) error {
	return f.run(d, a)
}

// The Operations: the forwards' problems are drawn from the op table; the
// backward's mean and rstd are the forward's of its x.
var (
	LayerNormForwardOp = define(op.LayerNormForward, LayerNormForwarder.LayerNormForward,
		func(f fn[op.LayerNormForwardArgs]) LayerNormForwarder { return lnFwdFn{f} }, nil)
	LayerNormBackwardOp = define(op.LayerNormBackward, LayerNormBackwarder.LayerNormBackward,
		func(f fn[op.LayerNormBackwardArgs]) LayerNormBackwarder { return lnBwdFn{f} }, drawLNBackwardFamily)
	PerHeadRMSNormOp = define(op.PerHeadRMSNorm, PerHeadRMSNormer.PerHeadRMSNorm,
		func(f fn[op.PerHeadRMSNormArgs]) PerHeadRMSNormer { return perHeadFn{f} }, nil)
)

func drawLNBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.LayerNormBackwardArgs] {
	c := drawRMSCase(rt, lim)
	dy := values(rt, lim, "dy", c.rows, c.hidden, gen.Normal, gen.MixedScale)
	mean, rstd := make([]float32, c.rows), make([]float32, c.rows)
	for r := 0; r < c.rows; r++ {
		m, v := 0.0, 0.0
		row := gen.F64(c.x.Data[r*c.hidden : (r+1)*c.hidden])
		for _, x := range row {
			m += x
		}
		m /= float64(c.hidden)
		for _, x := range row {
			v += (x - m) * (x - m)
		}
		mean[r], rstd[r] = float32(m), float32(1/math.Sqrt(v/float64(c.hidden)+float64(c.eps)))
	}
	return drawn[op.LayerNormBackwardArgs]{desc: fmt.Sprintf("%v dy=%v", c, dy),
		args: &op.LayerNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, DY: dy.Data,
			Mean: mean, Rstd: rstd, DX: make([]float32, c.rows*c.hidden), DGamma: make([]float32, c.hidden),
			DBeta: make([]float32, c.hidden)}}
}

// ropeParityTol returns 2·RoPETol for input x at positions pos (sign +1
// forward, −1 backward); c gives the heads, head_dim and θ.
