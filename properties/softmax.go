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

// softmaxOffsets are the constants a drawn softmax row is shifted by: rows
// whose values are far above 88.7 (exp overflows float32) or far below
// −103 (exp underflows) are the ones a kernel that skips the max
// subtraction gets wrong.
var softmaxOffsets = []float32{0, 0, 0, 100, -120, 3000, -20000}

// softmaxCase is one drawn softmax problem: logits x of rows × hidden.
type softmaxCase struct {
	rows, hidden int
	offset       float32
	x            gen.Tensor
}

func (c softmaxCase) String() string {
	return fmt.Sprintf("rows=%d hidden=%d x=%v+%g", c.rows, c.hidden, c.x, c.offset)
}

// drawSoftmaxCase draws logits from dists (the finite ones when none),
// each shifted by a drawn offset and stored as the binding stores x.
func drawSoftmaxCase(rt *rapid.T, lim gen.Limits, dists ...gen.Dist) softmaxCase {
	rows, hidden := gen.Shape(rt, lim)
	c := softmaxCase{rows: rows, hidden: hidden, x: values(rt, lim, "x", rows, hidden, dists...),
		offset: rapid.SampledFrom(softmaxOffsets).Draw(rt, "x.offset")}
	if c.offset != 0 {
		for i := range c.x.Data {
			c.x.Data[i] += c.offset
		}
		lim.Round("x", c.x.Data)
	}
	return c
}

// softmaxBwdCase is one drawn backward problem: y = softmax(x) rounded to
// float32 (as a forward stores it) and the upstream gradient dy.
type softmaxBwdCase struct {
	softmaxCase
	y, dy []float32
	exact []float64 // softmax(x) in float64, before y's rounding
}

func drawSoftmaxBwdCase(rt *rapid.T, lim gen.Limits) softmaxBwdCase {
	c := softmaxBwdCase{softmaxCase: drawSoftmaxCase(rt, lim)}
	y := make([]float64, c.rows*c.hidden)
	oracle.SoftmaxForward(y, gen.F64(c.x.Data), c.rows, c.hidden)
	c.y, c.exact = make([]float32, len(y)), y
	for i, v := range y {
		c.y[i] = float32(v)
	}
	lim.Round("y", c.y)
	c.dy = values(rt, lim, "dy", c.rows, c.hidden, gen.Normal, gen.MixedScale).Data
	return c
}

func runSoftmax(o *Obs, dev cudart.Device, impl SoftmaxForwarder, rows, hidden int, x []float32) []float32 {
	o.rt.Helper()
	a := &op.SoftmaxForwardArgs{Rows: rows, Hidden: hidden, X: x, Y: poisoned(rows * hidden)}
	a.Offsets = o.offsets(impl, op.SoftmaxForward)
	o.Check("softmax forward", impl.SoftmaxForward(dev, a))
	return a.Y
}

// softmaxOracle returns the float64 softmax of x and the bound for impl's
// reduction order (the serial worst case when impl does not describe it).
func softmaxOracle(impl any, rows, hidden int, x []float32) (want, tol []float64) {
	row, _ := reductions(impl, op.Shape{Rows: rows, Hidden: hidden}, hidden)
	xs := gen.F64(x)
	want, tol = make([]float64, len(xs)), make([]float64, len(xs))
	oracle.SoftmaxForward(want, xs, rows, hidden)
	oracle.SoftmaxForwardTol(tol, xs, rows, hidden, row)
	return want, tol
}

// SoftmaxForwardContract checks SOFTMAX-FWD-001 on impl.
func SoftmaxForwardContract(t TB, impl SoftmaxForwarder) {
	t.Helper()
	dev, lim := onDevice(t, SoftmaxFwd)
	check(t, SoftmaxFwd, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawSoftmaxCase(rt, lim)
		o.Context(c.hidden, "%v", c)
		y := runSoftmax(o, dev, impl, c.rows, c.hidden, c.x.Data)
		want, tol := softmaxOracle(impl, c.rows, c.hidden, c.x.Data)
		o.Within("y", y, want, tol)
	})
}

// SoftmaxShiftContract checks SOFTMAX-SHIFT-001: x is put on the grid
// k·2^e (|k| < 2^12) and shifted by m·2^e (|m| < 2^11), so that x + c is
// exact in float32; the two outputs differ by at most the sum of their
// bounds. e reaches 2^6, so rows reach 2^18: exp without the max overflows.
func SoftmaxShiftContract(t TB, impl SoftmaxForwarder) {
	t.Helper()
	dev, lim := onDevice(t, SoftmaxShift)
	check(t, SoftmaxShift, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawSoftmaxCase(rt, lim, gen.Normal, gen.MixedScale, gen.Constant)
		e := rapid.IntRange(-20, 6).Draw(rt, "grid.exp")
		m := rapid.IntRange(-(1<<11)+1, 1<<11-1).Draw(rt, "shift.k")
		x, xs := shiftGrid(c.x.Data, e, m)
		lim.Round("x", x)
		lim.Round("x", xs)
		o.Context(c.hidden, "%v grid=2^%d shift=%d·2^%d", c, e, m, e)
		a := runSoftmax(o, dev, impl, c.rows, c.hidden, x)
		b := runSoftmax(o, dev, impl, c.rows, c.hidden, xs)
		want, tolA := softmaxOracle(impl, c.rows, c.hidden, x)
		_, tolB := softmaxOracle(impl, c.rows, c.hidden, xs)
		tol := make([]float64, len(tolA))
		for i := range tol {
			tol[i] = tolA[i] + tolB[i]
		}
		o.Within("softmax(x)", a, want, tolA)
		o.Within("softmax(x+c) − softmax(x)", b, gen.F64(a), tol)
	})
}

// SoftmaxSumContract checks SOFTMAX-SUM-001: every output is ≥ −tol and each
// row of the output sums to 1: |Σ_j ŷ_j − 1| ≤ Σ_j |ŷ_j − y_j| ≤ Σ_j tol_j
// (the exact y sums to 1), plus the compensated float64 sum's own error.
func SoftmaxSumContract(t TB, impl SoftmaxForwarder) {
	t.Helper()
	dev, lim := onDevice(t, SoftmaxSum)
	check(t, SoftmaxSum, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawSoftmaxCase(rt, lim)
		o.Context(c.hidden, "%v", c)
		y := runSoftmax(o, dev, impl, c.rows, c.hidden, c.x.Data)
		_, tol := softmaxOracle(impl, c.rows, c.hidden, c.x.Data)
		if s := o.storage["y"]; s != oracle.StorageFloat32 {
			for i := range tol { // a 16-bit y is rounded once more
				tol[i] += oracle.StorageTol(s, float64(y[i]), tol[i])
			}
		}
		for r := 0; r < c.rows; r++ {
			lo, hi := r*c.hidden, (r+1)*c.hidden
			row := gen.F64(y[lo:hi])
			for j, v := range row {
				// y* ≥ 0, so ŷ ≥ −tol: ex2.approx's bound (2 ulp of a
				// result that rounds to 0 or a subnormal) does not forbid a
				// tiny negative value.
				if !(v >= -tol[lo+j]) {
					o.Fatalf("row %d: y[%d] = %g is below −tol = %g", r, lo+j, v, -tol[lo+j])
				}
			}
			sum := floats.SumCompensated(row)
			bound := floats.Sum(tol[lo:hi]) + 4*oracle.Eps64*float64(c.hidden)*math.Abs(sum)
			o.Ratiof(math.Abs(sum-1), bound, "row %d: Σy − 1 (Σy = %.9g)", r, sum)
		}
	})
}

// SoftmaxBackwardContract checks SOFTMAX-BWD-001 on impl: dx against the
// analytic backward at the float32 y it is given, within the derived
// bound; then ⟨dx, v⟩ along a random v against the complex-step and the
// Richardson finite-difference derivative of L(x) = ⟨softmax(x), dy⟩ at the
// logits, whose exact y* differs from the stored ŷ by Δ = ŷ − y*:
// dx(ŷ) − dx(y*) = Δ_j·(dy_j − S*) − ŷ_j·Σ_k Δ_k·dy_k, S* = Σ_k y*_k·dy_k.
func SoftmaxBackwardContract(t TB, impl SoftmaxBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, SoftmaxBwd)
	lim = lim.Cap(1 << 16) // a complex-step and six forward evaluations a check
	check(t, SoftmaxBwd, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawSoftmaxBwdCase(rt, lim)
		o.Context(c.hidden, "%v dy", c.softmaxCase)
		n := c.rows * c.hidden
		a := &op.SoftmaxBackwardArgs{Rows: c.rows, Hidden: c.hidden, Y: c.y, DY: c.dy, DX: poisoned(n)}
		a.Offsets = o.offsets(impl, op.SoftmaxBackward)
		o.Check("softmax backward", impl.SoftmaxBackward(dev, a))
		row, _ := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
		y, dy := gen.F64(c.y), gen.F64(c.dy)
		want, tol := make([]float64, n), make([]float64, n)
		oracle.SoftmaxBackward(want, y, dy, c.rows, c.hidden)
		oracle.SoftmaxBackwardTol(tol, y, dy, c.rows, c.hidden, row)
		o.Within("dx", a.DX, want, tol)

		v := gen.F64(gen.Values(rt, "v", c.rows, c.hidden, gen.Normal).Data)
		d := oracle.SoftmaxDirectional(gen.F64(c.x.Data), dy, v, c.rows, c.hidden)
		got, bound := 0.0, 0.0
		for r := 0; r < c.rows; r++ {
			lo, hi := r*c.hidden, (r+1)*c.hidden
			S, dS := 0.0, 0.0
			for j := lo; j < hi; j++ {
				S += c.exact[j] * dy[j]
				dS += math.Abs((y[j] - c.exact[j]) * dy[j])
			}
			for j := lo; j < hi; j++ {
				got += float64(a.DX[j]) * v[j]
				rnd := math.Abs(y[j]-c.exact[j])*math.Abs(dy[j]-S) + math.Abs(y[j])*dS
				bound += math.Abs(v[j]) * (tol[j] + rnd*(1+0x1p-40))
			}
		}
		// The float64 dot product ⟨dx, v⟩ and the derivatives' own error.
		bound += 2*float64(n)*oracle.Eps64*floats.Dot(absF(gen.F64(a.DX)), absF(v)) + 1e-11*d.Scale
		o.Ratio("⟨dx, v⟩ vs complex step", math.Abs(got-d.ComplexStep), bound)
		o.Ratio(fmt.Sprintf("⟨dx, v⟩ vs finite differences (FD %.9g)", d.FD), math.Abs(got-d.FD), bound+d.FDErr)
	})
}

func absF(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Abs(v)
	}
	return out
}

func drawSoftmaxForwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.SoftmaxForwardArgs] {
	c := drawSoftmaxCase(rt, lim)
	return drawn[op.SoftmaxForwardArgs]{desc: c.String(), args: &op.SoftmaxForwardArgs{Rows: c.rows, Hidden: c.hidden,
		X: c.x.Data, Y: make([]float32, c.rows*c.hidden)},
		// ex2.approx: conforming devices agree within twice the bound
		// (the serial order's, which covers every order).
		approxTol: func(a *op.SoftmaxForwardArgs) []float64 {
			tol := make([]float64, len(a.X))
			oracle.SoftmaxForwardTol(tol, gen.F64(a.X), a.Rows, a.Hidden, oracle.SerialReduction())
			for i := range tol {
				tol[i] *= 2
			}
			return tol
		}}
}

func drawSoftmaxBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.SoftmaxBackwardArgs] {
	c := drawSoftmaxBwdCase(rt, lim)
	return drawn[op.SoftmaxBackwardArgs]{desc: c.softmaxCase.String() + " dy", args: &op.SoftmaxBackwardArgs{Rows: c.rows,
		Hidden: c.hidden, Y: c.y, DY: c.dy, DX: make([]float32, c.rows*c.hidden)}}
}

// The operations of this file: their interfaces, adapters and draws.
type (
	// SoftmaxForwarder runs softmax.forward.
	SoftmaxForwarder interface {
		SoftmaxForward(dev cudart.Device, a *op.SoftmaxForwardArgs) error
	}
	// SoftmaxBackwarder runs softmax.backward.
	SoftmaxBackwarder interface {
		SoftmaxBackward(dev cudart.Device, a *op.SoftmaxBackwardArgs) error
	}

	softmaxFwdFn struct{ fn[op.SoftmaxForwardArgs] }
	softmaxBwdFn struct{ fn[op.SoftmaxBackwardArgs] }
)

func (f softmaxFwdFn) SoftmaxForward(d cudart.Device, a *op.SoftmaxForwardArgs) error {
	return f.run(d, a)
}
func (f softmaxBwdFn) SoftmaxBackward(d cudart.Device, a *op.SoftmaxBackwardArgs) error {
	return f.run(d, a)
}

// The Operations: the forward's rows are offset and its PTX approximate;
// the backward's y is the forward's of a drawn x.
var (
	SoftmaxForwardOp = define(op.SoftmaxForward, SoftmaxForwarder.SoftmaxForward,
		func(f fn[op.SoftmaxForwardArgs]) SoftmaxForwarder { return softmaxFwdFn{f} }, drawSoftmaxForwardFamily)
	SoftmaxBackwardOp = define(op.SoftmaxBackward, SoftmaxBackwarder.SoftmaxBackward,
		func(f fn[op.SoftmaxBackwardArgs]) SoftmaxBackwarder { return softmaxBwdFn{f} }, drawSoftmaxBackwardFamily)
)
