package properties

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// rmsCase is one drawn RMSNorm problem.
type rmsCase struct {
	rows, hidden int
	eps          float32
	x            gen.Tensor
	gamma        []float32
	// keep says the caller uses the case's data and checkRMSForward's
	// results after it returns. Otherwise the check ends the case: it returns
	// x.Data, the kernel's y and its own scratch to the pools, and returns an
	// empty rmsForward.
	keep bool
}

func drawRMSCase(rt *rapid.T, lim gen.Limits, dists ...gen.Dist) rmsCase {
	rows, hidden := gen.Shape(rt, lim)
	return rmsCase{rows: rows, hidden: hidden, eps: lim.DrawEps(rt, "eps"),
		x: values(rt, lim, "x", rows, hidden, dists...), gamma: lim.Gamma(rt, "gamma", hidden)}
}

func (c rmsCase) String() string {
	return fmt.Sprintf("rows=%d hidden=%d eps=%g x=%v", c.rows, c.hidden, c.eps, c.x)
}

// rmsForward is what checkRMSForward saw, when the case asked for it
// (rmsCase.keep): the kernel's y and the oracle's y and bound for it.
type rmsForward struct {
	y         []float32
	want, tol []float64
}

// rmsForwardOffsets and rmsBackwardOffsets are the check's tensor
// offsets (Obs.offsets) of the RMSNorm forward and backward, for the
// contracts of other files, which name no operation.
func rmsForwardOffsets(o *Obs, impl any) op.Offsets  { return o.offsets(impl, op.RMSNormForward) }
func rmsBackwardOffsets(o *Obs, impl any) op.Offsets { return o.offsets(impl, op.RMSNormBackward) }

// checkRMSForward runs impl on c and compares y and rms with the oracle.
func checkRMSForward(o *Obs, dev cudart.Device, impl RMSNormForwarder, c rmsCase) rmsForward {
	o.rt.Helper()
	s := op.Shape{Rows: c.rows, Hidden: c.hidden}
	n := c.rows * c.hidden
	a := &op.RMSNormForwardArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, X: c.x.Data, Gamma: c.gamma}
	if c.keep {
		a.Y = make([]float32, n)
	} else {
		a.Y = poisoned(n)
	}
	// With and without the optional rms output: they are different entries
	// (rmsnorm_fwd_rms and rmsnorm_fwd), and both must hold.
	// An implementation that saves no statistics is asked for none.
	if computes(impl, "rms") && rapid.Bool().Draw(o.rt, "with_rms") {
		a.RMS = make([]float32, c.rows)
	}
	a.Offsets = o.offsets(impl, op.RMSNormForward)
	o.Check("rmsnorm forward", impl.RMSNormForward(dev, a))
	if len(a.Y) != n {
		o.Fatalf("y: length mismatch: got %d, want %d, tol %d", len(a.Y), n, n)
	}
	// The oracle, its bound and the naive float32 yardstick, evaluated from
	// the float32 inputs a row at a time (oracle.RMSNormForwardRow32: the
	// values of RMSNormForwardWithTol and RMSNormForward32Naive, bit for
	// bit) and compared as they are made. The row sums come first, so that
	// rms is checked before y.
	row, _ := reductions(impl, s, c.hidden)
	ss, ss32 := make([]float64, c.rows), make([]float32, c.rows)
	oracle.RMSNormForwardSums32(ss, ss32, c.x.Data, c.rows, c.hidden)
	if a.RMS != nil {
		wantRMS, tolRMS := make([]float64, c.rows), make([]float64, c.rows)
		for r, v := range ss {
			wantRMS[r], tolRMS[r] = oracle.RMSNormRMSWithTol32(v, c.hidden, c.eps, row)
		}
		o.Within("rms", a.RMS, wantRMS, tolRMS)
	}
	// The oracle's y and bound: a row's worth of scratch, or the whole
	// tensor when the caller keeps them.
	var want, tol []float64
	if c.keep {
		want, tol = make([]float64, n), make([]float64, n)
	} else {
		want, tol = scratch64.get(c.hidden), scratch64.get(c.hidden)
	}
	naive := scratch32.get(c.hidden)
	cols := scratch64.get(3 * c.hidden)
	gm := oracle.NewGamma32(c.gamma, cols)
	for r := range c.rows {
		lo, hi := r*c.hidden, (r+1)*c.hidden
		w, t := want[:c.hidden], tol[:c.hidden]
		if c.keep {
			w, t = want[lo:hi], tol[lo:hi]
		}
		oracle.RMSNormForwardRow32(w, t, naive, c.x.Data[lo:hi], gm, ss[r], ss32[r], c.eps, row)
		o.withinNaive("y", a.Y[lo:hi], naive, w, t, lo)
	}
	scratch32.put(naive)
	scratch64.put(cols)
	if !c.keep {
		scratch64.put(want, tol)
		scratch32.put(a.Y, c.x.Data)
		return rmsForward{}
	}
	return rmsForward{y: a.Y, want: want, tol: tol}
}

// RMSNormForwardContract checks RMS-FWD-001 on impl.
func RMSNormForwardContract(t TB, impl RMSNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, RMSFwd)
	check(t, RMSFwd, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawRMSCase(rt, lim)
		o.Context(c.hidden, "%v", c)
		checkRMSForward(o, dev, impl, c)
	})
}

// EpsParityContract checks FALSIFY-CUDA-RMSNORM-EPS-PARITY-001 on impl: rows
// are scaled so that mean(x²) = ε·10^k, k ~ U(−1, 1), where ε moves y by far
// more than the bound.
func EpsParityContract(t TB, impl RMSNormForwarder) {
	t.Helper()
	dev, lim := onDevice(t, EpsParity)
	check(t, EpsParity, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		rows, hidden := gen.Shape(rt, lim)
		eps := lim.DrawEps(rt, "eps")
		k := rapid.Float64Range(-1, 1).Draw(rt, "log10(mean(x²)/eps)")
		seed := rapid.Uint64().Draw(rt, "x.seed")
		x := gen.MakeTensor(gen.Normal, 0, seed, rows, hidden)
		for r := 0; r < rows; r++ { // scale each row to mean(x²) = ε·10^k
			row := x.Data[r*hidden : (r+1)*hidden]
			ss := 0.0
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			if ss == 0 {
				continue
			}
			f := math.Sqrt(float64(eps) * math.Pow(10, k) * float64(hidden) / ss)
			for j := range row {
				row[j] = float32(float64(row[j]) * f)
			}
		}
		lim.Round("x", x.Data) // as stored, after scaling
		c := rmsCase{rows: rows, hidden: hidden, eps: eps, x: x, gamma: lim.Gamma(rt, "gamma", hidden), keep: true}
		o.Context(hidden, "%v mean(x²)=eps·10^%.2f", c, k)
		f := checkRMSForward(o, dev, impl, c)
		// Teeth: the oracle at 10ε must be refuted by the same bound, else the
		// property could not tell ε from 10ε (1e-5 from 1e-6).
		g := gen.F64(c.gamma)
		other := make([]float64, len(f.want))
		oracle.RMSNormForward(other, nil, gen.F64(x.Data), g, rows, hidden, 10*float64(eps))
		worst := refutedBy(f.y, other, f.tol)
		if worst <= 1 && hasNonzero(g) {
			o.Fatalf("the output is also within the bound of the oracle at ε'=10ε (max ratio %.3g): the check cannot tell ε from 10ε", worst)
		}
	})
}

func hasNonzero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return true
		}
	}
	return false
}

// bwdCase is one drawn RMSNorm backward problem: the forward's rms (ε
// included, rounded to float32 as a forward kernel stores it), dy and a
// direction for the finite-difference check. x64, gamma64 and dy64 are the
// inputs widened once for the oracle, the bound and the finite differences.
type bwdCase struct {
	rmsCase
	rms32              []float32
	dy                 gen.Tensor
	x64, gamma64, dy64 []float64
	// fd, when not nil, says a checkDirectional of this case follows and
	// ends it: it carries what checkRMSBackward hands over, and
	// checkDirectional returns the case's buffers to the scratch pools (nil:
	// no finite differences follow, nothing is recycled).
	fd *bwdFD
}

// bwdFD is what checkRMSBackward hands to the checkDirectional that follows.
type bwdFD struct {
	serialTolDX []float64 // the worst-case-order dx bound, from the oracle's row sums
	dx          []float32 // the kernel's dx (scratch)
}

// release returns the case's buffers to the scratch pools; c must not be
// used afterwards.
func (c bwdCase) release() {
	scratch32.put(c.x.Data, c.dy.Data)
	scratch64.put(c.x64, c.gamma64, c.dy64)
	if c.fd != nil {
		scratch32.put(c.fd.dx)
		scratch64.put(c.fd.serialTolDX)
		c.fd.dx, c.fd.serialTolDX = nil, nil
	}
}

func drawBwdCase(rt *rapid.T, lim gen.Limits) bwdCase {
	rows, hidden := gen.Shape(rt, lim)
	return drawBwdCaseAt(rt, lim, rows, hidden)
}

// drawBwdCaseAt draws a backward problem of a given shape.
func drawBwdCaseAt(rt *rapid.T, lim gen.Limits, rows, hidden int) bwdCase {
	c := bwdCase{rmsCase: rmsCase{rows: rows, hidden: hidden, eps: lim.DrawEps(rt, "eps"),
		x: values(rt, lim, "x", rows, hidden), gamma: lim.Gamma(rt, "gamma", hidden)}, fd: &bwdFD{}}
	c.dy = values(rt, lim, "dy", c.rows, c.hidden, gen.Normal, gen.MixedScale)
	c.x64, c.gamma64, c.dy64 = scratchWiden(c.x.Data), scratchWiden(c.gamma), scratchWiden(c.dy.Data)
	rms := make([]float64, c.rows)
	oracle.RMSNormRMS(rms, c.x64, c.rows, c.hidden, float64(c.eps))
	c.rms32 = make([]float32, c.rows)
	for i, v := range rms {
		c.rms32[i] = float32(v)
	}
	lim.Round("rms", c.rms32)
	return c
}

// checkRMSBackward runs impl on c and compares dx and dγ with the analytic
// oracle at c.eps. The kernel is given the forward's rms rounded to float32;
// oracle.RMSNormBackwardTol covers a stored rms with a forward's error.
func checkRMSBackward(o *Obs, dev cudart.Device, impl RMSNormBackwarder, c bwdCase) (dx, dg []float32) {
	o.rt.Helper()
	n := c.rows * c.hidden
	a := &op.RMSNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, RMS: c.rms32,
		DY: c.dy.Data, DGamma: make([]float32, c.hidden)}
	if c.fd != nil { // checkDirectional reads dx, then recycles it with the case
		scratch32.put(c.fd.dx)
		a.DX = poisoned(n)
		c.fd.dx = a.DX
	} else {
		a.DX = make([]float32, n)
	}
	a.Offsets = o.offsets(impl, op.RMSNormBackward)
	o.Check("rmsnorm backward", impl.RMSNormBackward(dev, a))
	wantDX, wantDG := scratch64.get(n), scratch64.get(c.hidden)
	tolDX, tolDG := scratch64.get(n), scratch64.get(c.hidden)
	var serial []float64
	if c.fd != nil {
		scratch64.put(c.fd.serialTolDX)
		serial = scratch64.get(n)
		c.fd.serialTolDX = serial
	}
	row, rows := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
	rows.Flush = flushingSums(impl) // dγ, dβ summed by flushing atomics
	oracle.RMSNormBackwardWithTol(wantDX, wantDG, tolDX, tolDG, serial, c.x64, c.gamma64, c.dy64, c.rows, c.hidden, float64(c.eps), row, rows)
	o.Within("dx", a.DX, wantDX, tolDX)
	o.cols = 0
	o.Within("dgamma", a.DGamma, wantDG, tolDG)
	o.cols = c.hidden
	scratch64.put(wantDX, wantDG, tolDX, tolDG)
	return a.DX, a.DGamma
}

func meanSquare(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return s / float64(len(x))
}

// RMSNormBackwardWarpContract checks P-RMS-BACK-001 on a single-warp
// backward (hidden ≤ 32): dx against finite differences of the float64
// forward along a random direction, and dx, dγ against the analytic oracle.
func RMSNormBackwardWarpContract(t TB, impl RMSNormBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, RMSBackWarp)
	lim.MaxHidden = 32
	check(t, RMSBackWarp, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawBwdCase(rt, lim)
		o.Context(c.hidden, "%v dy=%v", c.rmsCase, c.dy)
		dx, _ := checkRMSBackward(o, dev, impl, c)
		checkDirectional(rt, o, c, dx)
	})
}

// checkDirectional compares ⟨dx, v⟩ with the Richardson finite difference
// of the float64 loss L(x_r) = ⟨RMSNorm_ε(x_r), dy_r⟩, row by row, along a
// drawn direction v. The bound is Σ|v_j|·tolDX_j (the kernel's own error,
// worst-case reduction order) plus the finite difference's error estimate.
// When c.fd is not nil it ends the case: c, and dx if checkRMSBackward
// produced it, go back to the scratch pools.
func checkDirectional(rt *rapid.T, o *Obs, c bwdCase, dx []float32) {
	o.rt.Helper()
	vseed := rapid.Uint64().Draw(rt, "v.seed")
	v32 := scratch32.get(c.rows * c.hidden)
	gen.FillTensor(v32, gen.Normal, 0, vseed, c.rows, c.hidden)
	v := scratchWiden(v32)
	scratch32.put(v32)
	x, g, dy := c.x64, c.gamma64, c.dy64
	eps := float64(c.eps)
	// The dx bound for the worst-case order: from checkRMSBackward when it
	// ran on this case, else computed here.
	var tolDX []float64
	if c.fd != nil && c.fd.serialTolDX != nil {
		tolDX, c.fd.serialTolDX = c.fd.serialTolDX, nil
	} else {
		tolDX = scratch64.get(len(x))
		oracle.RMSNormBackwardTol(tolDX, nil, x, g, dy, c.rows, c.hidden, eps, oracle.SerialReduction(), oracle.SerialReduction())
	}
	// Deferred: a failure stops the check here too, and nothing reads these
	// afterwards (its message is formatted).
	defer scratch64.put(v, tolDX)
	if c.fd != nil {
		defer c.release()
	}
	for r := 0; r < c.rows; r++ {
		lo, hi := r*c.hidden, (r+1)*c.hidden
		xr, vr, dyr := x[lo:hi], v[lo:hi], dy[lo:hi]
		// L(x_r + t·v_r) = Σ_j y_j·dy_j with y = RMSNormForward of the
		// point, its rms by oracle.RMSNormRMSAlong: the same operations as
		// forming the point and calling oracle.RMSNormForward, in one pass.
		f := func(t float64) float64 {
			rr := oracle.RMSNormRMSAlong(xr, vr, t, eps)
			s := 0.0
			for j, xv := range xr {
				z := xv + t*vr[j]
				s += z / rr * g[j] * dyr[j]
			}
			return s
		}
		// Step: a thousandth of the row's rms, measured along v.
		h := math.Sqrt(meanSquare(xr)+eps) * 1e-3 / math.Max(1e-300, math.Sqrt(meanSquare(vr)))
		fd, fdErr := oracle.DirectionalDerivativeFDAlong(f, h, -1)
		got, bound := 0.0, fdErr
		for j := range vr {
			got += float64(dx[lo+j]) * vr[j]
			bound += math.Abs(vr[j]) * tolDX[lo+j]
		}
		// The row and the finite difference name a failure only (formatting
		// them for every row of a passing check costs more than the row).
		o.Ratiof(math.Abs(got-fd), bound, "⟨dx, v⟩ of row %d against the finite difference %.17g", r, fd)
	}
}

// RMSNormBackwardContract checks P-BRMS-BACK-001 on a batched backward.
func RMSNormBackwardContract(t TB, impl RMSNormBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, BRMSBack)
	check(t, BRMSBack, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawBwdCase(rt, lim)
		c.fd = nil // no finite differences follow
		o.Context(c.hidden, "%v dy=%v", c.rmsCase, c.dy)
		checkRMSBackward(o, dev, impl, c)
	})
}

// RMSNormBackwardFDContract checks C-BRMS-BACK-001 on a batched backward:
// its dx against finite differences of the float64 forward.
func RMSNormBackwardFDContract(t TB, impl RMSNormBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, BRMSBackFD)
	lim.MaxElements = min(lim.MaxElements, 1<<14) // FD costs 10 forwards a row
	check(t, BRMSBackFD, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawBwdCase(rt, lim)
		o.Context(c.hidden, "%v dy=%v", c.rmsCase, c.dy)
		n := c.rows * c.hidden
		a := &op.RMSNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, RMS: c.rms32,
			DY: c.dy.Data, DX: make([]float32, n), DGamma: make([]float32, c.hidden)}
		a.Offsets = o.offsets(impl, op.RMSNormBackward)
		o.Check("rmsnorm backward", impl.RMSNormBackward(dev, a))
		checkDirectional(rt, o, c, a.DX)
	})
}

// FusedResidualRMSNormContract checks FALSIFY-CUDA-FUSED-RMSNORM-DEADLOCK-001.
func FusedResidualRMSNormContract(t TB, impl FusedResidualRMSNormer) {
	t.Helper()
	dev, lim := onDevice(t, FusedRMSNorm)
	check(t, FusedRMSNorm, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawRMSCase(rt, lim)
		res := values(rt, lim, "residual", c.rows, c.hidden)
		alias := rapid.Bool().Draw(rt, "alias")
		o.Context(c.hidden, "%v residual=%v alias=%v", c, res, alias)
		n := c.rows * c.hidden
		a := &op.FusedResidualRMSNormArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, Residual: res.Data, X: c.x.Data,
			Gamma: c.gamma, Alias: alias, ResidualOut: make([]float32, n), Y: make([]float32, n)}
		a.Offsets = o.offsets(impl, op.FusedResidualRMSNorm)
		err := cudart.Watch(t.Config().WatchdogLimit(), "fused residual rmsnorm", func() error { return impl.FusedResidualRMSNorm(dev, a) })
		o.Check("fused residual rmsnorm", err)
		sum := make([]float32, n)
		for i := range sum {
			sum[i] = oracle.ResidualSum32(res.Data[i], c.x.Data[i])
		}
		o.Identical("residual_out", a.ResidualOut, sum)
		r, x, g := gen.F64(res.Data), gen.F64(c.x.Data), gen.F64(c.gamma)
		s, y := make([]float64, n), make([]float64, n)
		oracle.FusedResidualRMSNorm(s, y, nil, r, x, g, c.rows, c.hidden, float64(c.eps))
		tolS, tolY := make([]float64, n), make([]float64, n)
		row, _ := reductions(impl, op.Shape{Rows: c.rows, Hidden: c.hidden}, c.hidden)
		oracle.FusedResidualRMSNormTol(tolS, tolY, nil, r, x, g, c.rows, c.hidden, float64(c.eps), row)
		o.Within("y", a.Y, y, tolY)
	})
}

// The operations of this file: their interfaces, adapters and draws.
type (
	// RMSNormForwarder runs rmsnorm.forward.
	RMSNormForwarder interface {
		RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error
	}
	// RMSNormBackwarder runs rmsnorm.backward (any design).
	RMSNormBackwarder interface {
		RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error
	}
	// FusedResidualRMSNormer runs fused_residual_rmsnorm.
	FusedResidualRMSNormer interface {
		FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error
	}

	rmsFwdFn struct{ fn[op.RMSNormForwardArgs] }
	rmsBwdFn struct{ fn[op.RMSNormBackwardArgs] }
	fusedFn  struct {
		fn[op.FusedResidualRMSNormArgs]
	}
)

func (f rmsFwdFn) RMSNormForward(d cudart.Device, a *op.RMSNormForwardArgs) error { return f.run(d, a) }
func (f rmsBwdFn) RMSNormBackward(d cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.run(d, a)
}
func (f fusedFn) FusedResidualRMSNorm(d cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	return f.run(d, a)
}

// The Operations: the forward's problems are drawn from the op table; the
// backward's rms is the forward's of its x, and the fused one's alias is
// drawn.
var (
	RMSNormForwardOp = define(op.RMSNormForward, RMSNormForwarder.RMSNormForward,
		func(f fn[op.RMSNormForwardArgs]) RMSNormForwarder { return rmsFwdFn{f} }, nil)
	RMSNormBackwardOp = define(op.RMSNormBackward, RMSNormBackwarder.RMSNormBackward,
		func(f fn[op.RMSNormBackwardArgs]) RMSNormBackwarder { return rmsBwdFn{f} }, drawRMSBackwardFamily)
	FusedResidualRMSNormOp = define(op.FusedResidualRMSNorm, FusedResidualRMSNormer.FusedResidualRMSNorm,
		func(f fn[op.FusedResidualRMSNormArgs]) FusedResidualRMSNormer { return fusedFn{f} }, drawFusedFamily)
)

func drawFusedFamily(rt *rapid.T, lim gen.Limits) drawn[op.FusedResidualRMSNormArgs] {
	c := drawRMSCase(rt, lim)
	res := values(rt, lim, "residual", c.rows, c.hidden)
	alias := rapid.Bool().Draw(rt, "alias")
	return drawn[op.FusedResidualRMSNormArgs]{desc: fmt.Sprintf("%v alias=%v", c, alias),
		args: &op.FusedResidualRMSNormArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, Residual: res.Data, X: c.x.Data,
			Gamma: c.gamma, Alias: alias, ResidualOut: make([]float32, c.rows*c.hidden), Y: make([]float32, c.rows*c.hidden)}}
}

func drawRMSBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RMSNormBackwardArgs] {
	c := drawBwdCase(rt, lim)
	rms := make([]float32, len(c.rms32))
	copy(rms, c.rms32)
	return drawn[op.RMSNormBackwardArgs]{desc: fmt.Sprintf("%v dy=%v", c.rmsCase, c.dy),
		args: &op.RMSNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, RMS: rms,
			DY: c.dy.Data, DX: make([]float32, c.rows*c.hidden), DGamma: make([]float32, c.hidden)}}
}
