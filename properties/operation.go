package properties

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// The contract interfaces: one per operation of package op, each with the
// one method a contract calls.
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
	// RoPEForwarder runs rope.neox.forward (one position or one per row).
	RoPEForwarder interface {
		RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error
	}
	// RoPEBackwarder runs rope.neox.backward.
	RoPEBackwarder interface {
		RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error
	}
	// SoftmaxForwarder runs softmax.forward.
	SoftmaxForwarder interface {
		SoftmaxForward(dev cudart.Device, a *op.SoftmaxForwardArgs) error
	}
	// SoftmaxBackwarder runs softmax.backward.
	SoftmaxBackwarder interface {
		SoftmaxBackward(dev cudart.Device, a *op.SoftmaxBackwardArgs) error
	}
)

// OptionalOutputs is implemented by an implementation that computes only
// some of its operation's optional outputs (a bound inference kernel that
// saves no statistics). Computes reports whether it computes the optional
// output called name in the op table; an implementation without the method
// computes them all. Contracts ask only for the outputs it computes.
type OptionalOutputs interface {
	Computes(output string) bool
}

// computes reports whether impl computes the optional output called name.
func computes(impl any, name string) bool {
	o, ok := impl.(OptionalOutputs)
	return !ok || o.Computes(name)
}

// Operation ties an operation of package op (argument type A) to the
// interface I its contracts take, and to the problems the row-wise
// predictions (batch independence, row permutation, GPU/emulator parity)
// draw for it.
type Operation[A, I any] struct {
	Op *op.Op[A]
	// Call runs impl on a: I's one method.
	Call  func(impl I, dev cudart.Device, a *A) error
	adapt func(f fn[A]) I
	draw  func(rt *rapid.T, lim gen.Limits) drawn[A]
}

// Func returns run as an implementation of I. Kernels and Reductions
// answer for describe (a KernelLister and ReductionDescriber, or nil).
func (o *Operation[A, I]) Func(run func(dev cudart.Device, a *A) error, describe any) I {
	return o.adapt(fn[A]{run: run, describe: describe})
}

// The operations, in the order of op.All.
var (
	RMSNormForwardOp = &Operation[op.RMSNormForwardArgs, RMSNormForwarder]{Op: op.RMSNormForward,
		Call: RMSNormForwarder.RMSNormForward, adapt: func(f fn[op.RMSNormForwardArgs]) RMSNormForwarder { return rmsFwdFn{f} },
		draw: drawRMSForwardFamily}
	RMSNormBackwardOp = &Operation[op.RMSNormBackwardArgs, RMSNormBackwarder]{Op: op.RMSNormBackward,
		Call: RMSNormBackwarder.RMSNormBackward, adapt: func(f fn[op.RMSNormBackwardArgs]) RMSNormBackwarder { return rmsBwdFn{f} },
		draw: drawRMSBackwardFamily}
	FusedResidualRMSNormOp = &Operation[op.FusedResidualRMSNormArgs, FusedResidualRMSNormer]{Op: op.FusedResidualRMSNorm,
		Call: FusedResidualRMSNormer.FusedResidualRMSNorm, adapt: func(f fn[op.FusedResidualRMSNormArgs]) FusedResidualRMSNormer { return fusedFn{f} },
		draw: drawFusedFamily}
	LayerNormForwardOp = &Operation[op.LayerNormForwardArgs, LayerNormForwarder]{Op: op.LayerNormForward,
		Call: LayerNormForwarder.LayerNormForward, adapt: func(f fn[op.LayerNormForwardArgs]) LayerNormForwarder { return lnFwdFn{f} },
		draw: drawLNForwardFamily}
	LayerNormBackwardOp = &Operation[op.LayerNormBackwardArgs, LayerNormBackwarder]{Op: op.LayerNormBackward,
		Call: LayerNormBackwarder.LayerNormBackward, adapt: func(f fn[op.LayerNormBackwardArgs]) LayerNormBackwarder { return lnBwdFn{f} },
		draw: drawLNBackwardFamily}
	PerHeadRMSNormOp = &Operation[op.PerHeadRMSNormArgs, PerHeadRMSNormer]{Op: op.PerHeadRMSNorm,
		Call: PerHeadRMSNormer.PerHeadRMSNorm, adapt: func(f fn[op.PerHeadRMSNormArgs]) PerHeadRMSNormer { return perHeadFn{f} },
		draw: drawPerHeadFamily}
	RoPEForwardOp = &Operation[op.RoPEForwardArgs, RoPEForwarder]{Op: op.RoPEForward,
		Call: RoPEForwarder.RoPEForward, adapt: func(f fn[op.RoPEForwardArgs]) RoPEForwarder { return ropeFwdFn{f} },
		draw: drawRoPEForwardFamily}
	RoPEBackwardOp = &Operation[op.RoPEBackwardArgs, RoPEBackwarder]{Op: op.RoPEBackward,
		Call: RoPEBackwarder.RoPEBackward, adapt: func(f fn[op.RoPEBackwardArgs]) RoPEBackwarder { return ropeBwdFn{f} },
		draw: drawRoPEBackwardFamily}
	SoftmaxForwardOp = &Operation[op.SoftmaxForwardArgs, SoftmaxForwarder]{Op: op.SoftmaxForward,
		Call: SoftmaxForwarder.SoftmaxForward, adapt: func(f fn[op.SoftmaxForwardArgs]) SoftmaxForwarder { return softmaxFwdFn{f} },
		draw: drawSoftmaxForwardFamily}
	SoftmaxBackwardOp = &Operation[op.SoftmaxBackwardArgs, SoftmaxBackwarder]{Op: op.SoftmaxBackward,
		Call: SoftmaxBackwarder.SoftmaxBackward, adapt: func(f fn[op.SoftmaxBackwardArgs]) SoftmaxBackwarder { return softmaxBwdFn{f} },
		draw: drawSoftmaxBackwardFamily}
)

// operations lists every Operation for the row-wise predictions.
var operations = []family{RMSNormForwardOp, FusedResidualRMSNormOp, LayerNormForwardOp, PerHeadRMSNormOp,
	RoPEForwardOp, RoPEBackwardOp, RMSNormBackwardOp, LayerNormBackwardOp, SoftmaxForwardOp, SoftmaxBackwardOp}

// fn is an implementation given as a function; the fooFn types below give
// it the method of each interface.
type fn[A any] struct {
	run      func(dev cudart.Device, a *A) error
	describe any
}

// Kernels returns describe's kernels, if it lists them.
func (f fn[A]) Kernels() []*kernels.Kernel {
	if l, ok := f.describe.(KernelLister); ok {
		return l.Kernels()
	}
	return nil
}

// PTXEntries returns describe's entries, if it lists them.
func (f fn[A]) PTXEntries() []PTXEntry {
	if l, ok := f.describe.(PTXEntryLister); ok {
		return l.PTXEntries()
	}
	return nil
}

func (f fn[A]) describedBy() (describe, run any) { return f.describe, f.run }

// Computes reports whether describe computes the optional output called
// name (OptionalOutputs); true when it does not say.
func (f fn[A]) Computes(name string) bool { return computes(f.describe, name) }

// EntrySources returns describe's entries and their PTX, if it names
// them (for messages alone; see entrySources).
func (f fn[A]) EntrySources() (entries []string, ptx [][]byte) {
	if e, ok := f.describe.(entrySources); ok {
		return e.EntrySources()
	}
	return nil, nil
}

// Reductions returns describe's sums, if it describes them.
func (f fn[A]) Reductions(s op.Shape) []op.Reduction {
	if d, ok := f.describe.(ReductionDescriber); ok {
		return d.Reductions(s)
	}
	return nil
}

type (
	rmsFwdFn struct{ fn[op.RMSNormForwardArgs] }
	rmsBwdFn struct{ fn[op.RMSNormBackwardArgs] }
	fusedFn  struct {
		fn[op.FusedResidualRMSNormArgs]
	}
	lnFwdFn   struct{ fn[op.LayerNormForwardArgs] }
	lnBwdFn   struct{ fn[op.LayerNormBackwardArgs] }
	perHeadFn struct{ fn[op.PerHeadRMSNormArgs] }
	ropeFwdFn struct{ fn[op.RoPEForwardArgs] }
	ropeBwdFn struct{ fn[op.RoPEBackwardArgs] }

	softmaxFwdFn struct{ fn[op.SoftmaxForwardArgs] }
	softmaxBwdFn struct{ fn[op.SoftmaxBackwardArgs] }
)

func (f rmsFwdFn) RMSNormForward(d cudart.Device, a *op.RMSNormForwardArgs) error { return f.run(d, a) }
func (f rmsBwdFn) RMSNormBackward(d cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.run(d, a)
}
func (f fusedFn) FusedResidualRMSNorm(d cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	return f.run(d, a)
}
func (f lnFwdFn) LayerNormForward(d cudart.Device, a *op.LayerNormForwardArgs) error {
	return f.run(d, a)
}
func (f lnBwdFn) LayerNormBackward(d cudart.Device, a *op.LayerNormBackwardArgs) error {
	return f.run(d, a)
}
func (f perHeadFn) PerHeadRMSNorm(d cudart.Device, a *op.PerHeadRMSNormArgs) error {
	return f.run(d, a)
}
func (f ropeFwdFn) RoPEForward(d cudart.Device, a *op.RoPEForwardArgs) error   { return f.run(d, a) }
func (f ropeBwdFn) RoPEBackward(d cudart.Device, a *op.RoPEBackwardArgs) error { return f.run(d, a) }
func (f softmaxFwdFn) SoftmaxForward(d cudart.Device, a *op.SoftmaxForwardArgs) error {
	return f.run(d, a)
}
func (f softmaxBwdFn) SoftmaxBackward(d cudart.Device, a *op.SoftmaxBackwardArgs) error {
	return f.run(d, a)
}

// Impls lists implementations for the row-wise predictions. Each value
// joins the family of every operation whose interface it implements
// (RMSNormForwarder, …); a problem is drawn from one family at a time.
type Impls []any

// family is what the row-wise predictions need of an Operation.
type family interface {
	// family returns the problem generator for impl, or false when impl
	// does not implement the operation's interface.
	family(impl any, lim gen.Limits) (func(rt *rapid.T) problem, bool)
	operation() op.Operation
	// stub returns an implementation of the operation's interface that
	// runs run.
	stub(run func() error) any
	// implement returns run as an implementation of the operation's
	// interface (see Implement).
	implement(run func(dev cudart.Device, args any) error, describe any) any
}

func (o *Operation[A, I]) implement(run func(dev cudart.Device, args any) error, describe any) any {
	return o.Func(func(dev cudart.Device, a *A) error { return run(dev, a) }, describe)
}

// Implement returns run as an implementation of the interface of the
// operation called name in the op table: run gets the operation's
// arguments, a *A of its argument type (*op.RMSNormForwardArgs, …), and
// describe answers for it as for Func (kernels, PTX entries, reductions,
// the optional outputs it computes) and names it in the report. False when
// no operation is called name. A caller that holds an operation by its
// name (a binding file) needs no switch over the operations.
func Implement(name string, run func(dev cudart.Device, args any) error, describe any) (any, bool) {
	for _, o := range operations {
		if o.operation().Name() == name {
			return o.implement(run, describe), true
		}
	}
	return nil, false
}

func (o *Operation[A, I]) operation() op.Operation { return o.Op }

func (o *Operation[A, I]) stub(run func() error) any {
	return o.Func(func(cudart.Device, *A) error { return run() }, nil)
}

func (o *Operation[A, I]) family(impl any, lim gen.Limits) (func(rt *rapid.T) problem, bool) {
	i, ok := impl.(I)
	if !ok {
		return nil, false
	}
	return func(rt *rapid.T) problem {
		d := o.draw(rt, lim)
		for k, t := range o.Op.Tensors() {
			if t.Role == op.Out && t.Optional && !computes(impl, t.Name) {
				*o.Op.F32(d.args, k) = nil
			}
		}
		return newProblem(o, i, d.args, d)
	}, true
}

// drawn is one drawn problem of an operation: arguments with every output
// allocated, a description, and (for approximate PTX) the parity bound.
type drawn[A any] struct {
	args *A
	desc string
	// approxTol is set when the operation's PTX uses approximate
	// instructions: two conforming devices may then differ by up to twice
	// the oracle bound, which approxTol returns for a's inputs, not bit for
	// bit.
	approxTol func(a *A) []float64
}

// problem is one drawn launch of one family, as the row-wise predictions
// see it. run returns the row-wise outputs ([rows][outCols]) followed by
// the column sums (weight gradients).
type problem struct {
	family        string
	rows, outCols int
	desc          string
	run           func(dev cudart.Device) ([]float32, error)
	// selectRows returns the problem restricted to rows idx (in that order).
	selectRows func(idx []int) problem
	// outputs runs the problem as run does and returns each output tensor
	// apart, by its op table name.
	outputs func(dev cudart.Device) ([]output, error)
	// approxTol is nil when conforming devices agree bit for bit.
	approxTol func() []float64
	impl      any // the implementation that runs it
	// element names element i of run's outputs ("dgamma[3]").
	element func(i int) string
}

// output is one output tensor of a launch: its op table name, its values,
// and its columns per row (0 for a column sum, which is indexed by column).
type output struct {
	name string
	cols int
	data []float32
}

func (p problem) String() string { return p.family + " " + p.desc }

func newProblem[A, I any](o *Operation[A, I], impl I, a *A, d drawn[A]) problem {
	_, cols := o.Op.ByRow(a)
	p := problem{family: o.Op.Name(), rows: o.Op.Shape(a).Rows, outCols: cols, desc: d.desc, impl: impl,
		run: func(dev cudart.Device) ([]float32, error) {
			b := o.Op.Fresh(a)
			err := o.Call(impl, dev, b)
			out, _ := o.Op.ByRow(b)
			return out, err
		},
		outputs: func(dev cudart.Device) ([]output, error) {
			b := o.Op.Fresh(a)
			err := o.Call(impl, dev, b)
			return outputsOf(o.Op, b), err
		},
		selectRows: func(idx []int) problem { return newProblem(o, impl, o.Op.SelectRows(a, idx), d) },
		element:    func(i int) string { return byRowElement(o.Op, a, i) }}
	if d.approxTol != nil {
		p.approxTol = func() []float64 { return d.approxTol(a) }
	}
	return p
}

// outputsOf returns a's requested outputs in table order.
func outputsOf[A any](o *op.Op[A], a *A) []output {
	s := o.Shape(a)
	var out []output
	for i, t := range o.Tensors() {
		if t.Role != op.Out || o.IsNil(a, i) {
			continue
		}
		x := output{name: t.Name, data: *o.F32(a, i)}
		if t.Layout == op.Row {
			x.cols = t.Cols.Of(s)
		}
		out = append(out, x)
	}
	return out
}

// families lists the families of im's implementations.
func (im Impls) families(lim gen.Limits) ([]func(rt *rapid.T) problem, error) {
	var fs []func(rt *rapid.T) problem
	for _, impl := range im {
		n := len(fs)
		for _, o := range operations {
			if f, ok := o.family(impl, lim); ok {
				fs = append(fs, f)
			}
		}
		if len(fs) == n {
			return nil, fmt.Errorf("%T implements no operation's interface", impl)
		}
	}
	return fs, nil
}

// drawProblem draws a family of im and a problem from it.
func drawProblem(rt *rapid.T, im Impls, lim gen.Limits) problem {
	fs, err := im.families(lim)
	if err != nil {
		rt.Fatalf("%v", err)
	}
	if len(fs) == 0 {
		rt.Fatalf("no implementation given")
	}
	i := rapid.IntRange(0, len(fs)-1).Draw(rt, "family")
	return fs[i](rt)
}

func drawRMSForwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RMSNormForwardArgs] {
	c := drawRMSCase(rt, lim)
	return drawn[op.RMSNormForwardArgs]{desc: c.String(), args: &op.RMSNormForwardArgs{Rows: c.rows, Hidden: c.hidden,
		Eps: c.eps, X: c.x.Data, Gamma: c.gamma, Y: make([]float32, c.rows*c.hidden), RMS: make([]float32, c.rows)}}
}

func drawFusedFamily(rt *rapid.T, lim gen.Limits) drawn[op.FusedResidualRMSNormArgs] {
	c := drawRMSCase(rt, lim)
	res := values(rt, lim, "residual", c.rows, c.hidden)
	alias := rapid.Bool().Draw(rt, "alias")
	return drawn[op.FusedResidualRMSNormArgs]{desc: fmt.Sprintf("%v alias=%v", c, alias),
		args: &op.FusedResidualRMSNormArgs{Rows: c.rows, Hidden: c.hidden, Eps: c.eps, Residual: res.Data, X: c.x.Data,
			Gamma: c.gamma, Alias: alias, ResidualOut: make([]float32, c.rows*c.hidden), Y: make([]float32, c.rows*c.hidden)}}
}

func drawLNForwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.LayerNormForwardArgs] {
	c := drawLNCase(rt, lim)
	return drawn[op.LayerNormForwardArgs]{desc: c.rmsCase.String(), args: &op.LayerNormForwardArgs{Rows: c.rows,
		Hidden: c.hidden, Eps: c.eps, X: c.x.Data, Gamma: c.gamma, Beta: c.beta, Y: make([]float32, c.rows*c.hidden),
		Mean: make([]float32, c.rows), Rstd: make([]float32, c.rows)}}
}

func drawPerHeadFamily(rt *rapid.T, lim gen.Limits) drawn[op.PerHeadRMSNormArgs] {
	c := drawQKN(rt, lim)
	return drawn[op.PerHeadRMSNormArgs]{desc: c.String(), args: &op.PerHeadRMSNormArgs{Rows: c.rows, Heads: c.heads,
		HeadDim: c.headDim, Eps: c.eps, X: c.x.Data, Gamma: c.gamma, Y: make([]float32, c.rows*c.heads*c.headDim)}}
}

func drawRoPEForwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RoPEForwardArgs] {
	c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
	return drawn[op.RoPEForwardArgs]{desc: c.String(), args: &op.RoPEForwardArgs{Rows: c.rows, Heads: c.heads,
		HeadDim: c.headDim, Theta: c.theta, Positions: c.pos, X: c.x.Data, Y: make([]float32, len(c.x.Data))},
		approxTol: func(a *op.RoPEForwardArgs) []float64 { return ropeParityTol(a.X, a.Positions, c, 1) }}
}

func drawRoPEBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RoPEBackwardArgs] {
	c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
	return drawn[op.RoPEBackwardArgs]{desc: c.String(), args: &op.RoPEBackwardArgs{Rows: c.rows, Heads: c.heads,
		HeadDim: c.headDim, Theta: c.theta, Positions: c.pos, DY: c.x.Data, DX: make([]float32, len(c.x.Data))},
		approxTol: func(a *op.RoPEBackwardArgs) []float64 { return ropeParityTol(a.DY, a.Positions, c, -1) }}
}

func drawRMSBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RMSNormBackwardArgs] {
	c := drawBwdCase(rt, lim)
	rms := make([]float32, len(c.rms32))
	copy(rms, c.rms32)
	return drawn[op.RMSNormBackwardArgs]{desc: fmt.Sprintf("%v dy=%v", c.rmsCase, c.dy),
		args: &op.RMSNormBackwardArgs{Rows: c.rows, Hidden: c.hidden, X: c.x.Data, Gamma: c.gamma, RMS: rms,
			DY: c.dy.Data, DX: make([]float32, c.rows*c.hidden), DGamma: make([]float32, c.hidden)}}
}

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
func ropeParityTol(x []float32, pos []uint32, c ropeCase, sign float64) []float64 {
	p := make([]float64, len(pos))
	for i, v := range pos {
		p[i] = float64(v)
	}
	tol := make([]float64, len(x))
	oracle.RoPETol(tol, gen.F64(x), p, len(pos), c.heads, c.headDim, float64(c.theta), oracle.RoPENeoX, sign)
	for i := range tol {
		tol[i] *= 2
	}
	return tol
}
