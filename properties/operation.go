package properties

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/gen"
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
// predictions (batch independence, row permutation, determinism, GPU/emulator
// parity) draw for it. Each is declared once, by define, beside its
// operation's contracts; operations() lists them in op table order.
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

var (
	definedMu sync.Mutex
	defined   = map[string]family{}
)

// define declares the Operation of o: I's method call, the adapter that
// gives a function that method (a type of one line beside the interface),
// and the problems the row-wise predictions draw (nil: drawn from the op
// table alone, drawTable, for an operation whose inputs are independent
// and whose PTX is exact). Declaring an operation twice is a programming
// error and panics at init.
func define[A, I any](o *op.Op[A], call func(I, cudart.Device, *A) error, adapt func(fn[A]) I,
	draw func(rt *rapid.T, lim gen.Limits) drawn[A]) *Operation[A, I] {
	if draw == nil {
		draw = func(rt *rapid.T, lim gen.Limits) drawn[A] { return drawTable(o, rt, lim) }
	}
	x := &Operation[A, I]{Op: o, Call: call, adapt: adapt, draw: draw}
	definedMu.Lock()
	defer definedMu.Unlock()
	if defined[o.Name()] != nil {
		panic(fmt.Sprintf("properties: operation %s defined twice", o.Name()))
	}
	defined[o.Name()] = x
	return x
}

// operations lists every defined Operation in op table order.
func operations() []family {
	definedMu.Lock()
	defer definedMu.Unlock()
	var out []family
	for _, o := range op.All() {
		if f := defined[o.Name()]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

// fn is an implementation given as a function; each operation's adapter
// type (beside its interface) gives it the interface's method.
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

// TakesOffsets reports whether describe takes op.Offsets (OffsetTaker);
// true when it does not say.
func (f fn[A]) TakesOffsets() bool { return takesOffsets(f.describe) }

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

// Impls lists implementations for the row-wise predictions. Each value
// joins the family of every operation whose interface it implements
// (RMSNormForwarder, …); a problem is drawn from one family at a time.
type Impls []any

// family is what the row-wise predictions need of an Operation.
type family interface {
	AnyOperation
	implements(impl any) bool
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
	for _, o := range operations() {
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
		if off := drawOffsets(rt, lim, impl, o.Op); off != nil {
			o.Op.SetOffsets(d.args, off)
			d.desc += fmt.Sprintf(" offsets=%v", off)
		}
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
	// depend runs the problem under a dependence trace (DEPEND-001).
	depend func(dev cudart.Device) ([]string, error)
	// finiteIn reports whether every float input is finite (see
	// finiteOutputs, which asks only once it has seen a non-finite output).
	finiteIn func() bool
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
		depend:     func(dev cudart.Device) ([]string, error) { return traceDependence(o, impl, a, dev) },
		element:    func(i int) string { return byRowElement(o.Op, a, i) },
		finiteIn:   func() bool { return finiteInputs(o.Op, a) }}
	if d.approxTol != nil {
		p.approxTol = func() []float64 { return d.approxTol(a) }
	}
	return p
}

// finiteInputs reports whether every float input tensor of a is finite.
func finiteInputs[A any](o *op.Op[A], a *A) bool {
	for i, t := range o.Tensors() {
		if t.Role != op.In || t.Kind != "f32" {
			continue
		}
		for _, v := range *o.F32(a, i) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return false
			}
		}
	}
	return true
}

// finiteOutputs fails the check when an element of out (p's outputs, by
// row then column sums; element i named by name, nil for p.element) is
// NaN or ±Inf and p's inputs are finite. Every operation of the op table
// maps finite inputs, with ε > 0 and within the ranges the generators
// draw, to finite outputs, as its oracle does. The
// predictions that compare an implementation with itself (alone against
// in a batch, run against rerun, one device against another) would
// otherwise pass a kernel that gives the same NaN every time: one that
// reads past its input into a guard band's canary, where a GPU does not
// fault.
func (o *Obs) finiteOutputs(p problem, what string, out []float32, name func(i int) string) {
	o.rt.Helper()
	for i, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			if !p.finiteIn() {
				return
			}
			if name == nil {
				name = p.element
			}
			o.Fatalf("%s: %s is %g from finite inputs: every operation maps finite inputs to finite outputs", what, name(i), v)
		}
	}
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
		for _, o := range operations() {
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

// drawTable draws a problem of o from the op table alone: a shape (rows
// and hidden, or rows, heads and head_dim), each numeric parameter from
// its generator (scalarDraws), each Row input from the value distributions,
// each Shared input as a weight (gen.Limits.Gamma), each uint32 input as
// positions, and every output allocated.
func drawTable[A any](o *op.Op[A], rt *rapid.T, lim gen.Limits) drawn[A] {
	var s op.Shape
	if o.PerHead() {
		s.HeadDim = headDims().Draw(rt, "head_dim")
		s.Heads = rapid.IntRange(1, max(1, min(32, lim.MaxHidden/s.HeadDim))).Draw(rt, "heads")
		s.Hidden = s.Heads * s.HeadDim
	} else {
		s.Hidden = lim.DrawHidden(rt, "hidden")
	}
	s.Rows = lim.DrawRows(rt, "rows", s.Hidden)
	s = lim.Conform(rt, s, nil)
	a := o.New(s)
	desc := []string{s.String()}
	for _, name := range o.Scalars() {
		if d := scalarDraws[name]; d != nil {
			x := d(rt, lim, name)
			o.SetScalar(a, name, x)
			desc = append(desc, fmt.Sprintf("%s=%g", name, x))
		}
	}
	for i, t := range o.Tensors() {
		switch {
		case t.Role != op.In:
		case t.Kind == "u32":
			p := *o.U32(a, i)
			for j := range p {
				p[j] = uint32(lim.DrawPosition(rt, t.Name))
			}
		case t.Layout == op.Row:
			v := values(rt, lim, t.Name, s.Rows, t.Cols.Of(s))
			*o.F32(a, i) = v.Data
			desc = append(desc, fmt.Sprintf("%s=%v", t.Name, v))
		default:
			*o.F32(a, i) = lim.Gamma(rt, t.Name, t.Len(s))
		}
	}
	return drawn[A]{args: a, desc: strings.Join(desc, " ")}
}

// scalarDraws draws each numeric parameter of the op table by its name.
var scalarDraws = map[string]func(rt *rapid.T, lim gen.Limits, label string) float64{
	"eps":   func(rt *rapid.T, lim gen.Limits, l string) float64 { return float64(lim.DrawEps(rt, l)) },
	"theta": func(rt *rapid.T, lim gen.Limits, l string) float64 { return float64(lim.DrawTheta(rt, l)) },
	"pos":   func(rt *rapid.T, lim gen.Limits, l string) float64 { return float64(lim.DrawPosition(rt, l)) },
}

// AnyOperation is an Operation seen through arguments of any type (a *A of
// the operation's argument type), for a caller that holds implementations
// without knowing their operation (the mutation analysis).
type AnyOperation interface {
	// Table returns the operation's row of the op table.
	Table() op.Operation
	// Run runs impl, an implementation of the operation's interface, on
	// args.
	Run(impl any, dev cudart.Device, args any) error
	// Fresh returns a copy of args with new zeroed outputs (op.Op.Fresh).
	Fresh(args any) any
	// Outputs returns args' outputs in table order (op.Op.Outputs).
	Outputs(args any) [][]float32
	// Implement returns run as an implementation of the operation's
	// interface, described by describe (see Implement).
	Implement(run func(dev cudart.Device, args any) error, describe any) any
}

// OperationOf returns the operation whose interface impl implements (the
// first in op table order), or false when it implements none.
func OperationOf(impl any) (AnyOperation, bool) {
	for _, o := range operations() {
		if o.implements(impl) {
			return o, true
		}
	}
	return nil, false
}

func (o *Operation[A, I]) Table() op.Operation { return o.Op }

func (o *Operation[A, I]) implements(impl any) bool { _, ok := impl.(I); return ok }

func (o *Operation[A, I]) Run(impl any, dev cudart.Device, args any) error {
	return o.Call(impl.(I), dev, args.(*A))
}

func (o *Operation[A, I]) Fresh(args any) any { return o.Op.Fresh(args.(*A)) }

func (o *Operation[A, I]) Outputs(args any) [][]float32 { return o.Op.Outputs(args.(*A)) }

func (o *Operation[A, I]) Implement(run func(dev cudart.Device, args any) error, describe any) any {
	return o.implement(run, describe)
}
