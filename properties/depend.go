package properties

import (
	"errors"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// Dependence limits: the sets of sources grow with the row and the column
// count, so DEPEND-001 draws small problems (every path that depends on the
// shape alone is the value predictions' to reach).
const (
	dependMaxRows     = 8
	dependMaxHidden   = 96
	dependMaxElements = 768
)

// errUnattributed: the trace cannot tell which input an output came from.
var errUnattributed = errors.New("dependence not attributable")

// DependenceContract checks DEPEND-001 on the implementations im: on a
// backend that tracks dependence (the emulator), every output element is
// computed from exactly the input elements its operation declares
// (op.DependencesOf): none outside them (a neighbour row, another head's
// γ, stale scratch), every one it must read (no cached or constant
// result). Values are not compared: a kernel gamed to pass the value
// predictions fails here.
func DependenceContract(t TB, im Impls) {
	t.Helper()
	shared := deviceFor(t, Dependence)
	if shared == nil {
		return
	}
	if !shared.Capabilities().Has(cudart.CapDependence) {
		// Named by the device: the emulator checked as a GPU is (emu-checked)
		// is the emulator too, and tracks nothing.
		skip(t, Dependence, fmt.Sprintf("this run's device (%s) does not track which inputs a value came from; the plain emulator (-ptxprop.backend=emu) does", shared.Info().Name))
		return
	}
	// A private device per rapid loop: tracking is the device's state.
	backend := shared.Info().Backend
	first := openPrivate(t, Dependence, backend)
	if first == nil {
		return
	}
	defer first.Close()
	devs := &perLoop[cudart.Device]{first: first, make: func() (cudart.Device, error) { return t.Config().open(backend) },
		close: func(d cudart.Device) { d.Close() }}
	defer devs.closeMade()
	lim := t.Config().LimitsFor(Dependence)
	// Small, but never below the smallest shape the implementation takes
	// (a kernel specialised to 8 heads of 64 has hidden 512).
	rows, hidden := dependMaxRows, dependMaxHidden
	if d := t.Config().Domain; d != nil && len(d.Feasible) > 0 {
		rows, hidden = max(rows, d.Feasible[0].Rows), max(hidden, d.Feasible[0].Hidden)
	}
	lim.MaxRows, lim.RegimeMaxRows = min(lim.MaxRows, rows), min(max(lim.RegimeMaxRows, 1), rows)
	lim.MaxHidden, lim.MaxElements = min(lim.MaxHidden, hidden), min(max(lim.MaxElements, 1), max(dependMaxElements, rows*hidden))
	lim.MinRows, lim.RandomRows = 0, 0
	CheckImpls(t, Dependence, im, func(rt *rapid.T, o *Obs) {
		p := drawProblem(rt, im, lim)
		o.Context(p.outCols, "%v", p)
		dev := devs.of(o, "this rapid loop's device")
		bad, err := p.depend(dev)
		if errors.Is(err, errUnattributed) {
			// The trace cannot tell: a harness limit, never a finding.
			o.Check("tracing the dependence", fmt.Errorf("%w: %w", ErrSetup, err))
		}
		o.Check("launch", err)
		if len(bad) > 0 {
			more := ""
			if len(bad) > 8 {
				more = fmt.Sprintf(" (and %d more)", len(bad)-8)
				bad = bad[:8]
			}
			// The first on the first line: reports keep that line alone.
			o.Fatalf("outputs computed from other inputs than declared: %s%s", strings.Join(bad, "\n  "), more)
		}
	})
}

// traceDependence runs impl on a fresh copy of a on dev under a trace and
// returns, per output element that breaks its declared dependence, a line
// saying how. An error wrapping errUnattributed: the trace could not tell
// (an instruction the backend does not follow, an input uploaded only
// converted or padded, an output read back only converted).
func traceDependence[A, I any](o *Operation[A, I], impl I, a *A, dev cudart.Device) ([]string, error) {
	b := o.Op.Fresh(a)
	tensors := o.Op.Tensors()
	tr := cudart.NewTrace()
	inputOf := map[int32]int{} // trace input → tensor
	traced := map[int]int32{}  // tensor → trace input
	outputs := map[int]int{}   // tensor → trace output
	for i, t := range tensors {
		if o.Op.IsNil(b, i) {
			continue
		}
		var s any
		if t.Kind == "u32" {
			s = *o.Op.U32(b, i)
		} else {
			s = *o.Op.F32(b, i)
		}
		if t.Role == op.In {
			id, err := tr.Input(s)
			if err != nil {
				return nil, err
			}
			inputOf[id], traced[i] = i, id
			continue
		}
		k, err := tr.Output(s)
		if err != nil {
			return nil, err
		}
		outputs[i] = k
	}
	if err := dev.Trace(tr); err != nil {
		return nil, err
	}
	err := o.Call(impl, dev, b)
	if terr := dev.Trace(nil); err == nil {
		err = terr
	}
	if err != nil {
		return nil, err
	}
	if err := tr.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", errUnattributed, err)
	}
	for id, i := range inputOf {
		if !tr.Uploaded(id) && o.Op.Len(b, i) > 0 {
			return nil, fmt.Errorf("%w: input %s never reached the device from the caller's slice (converted or padded on the way)", errUnattributed, tensors[i].Name)
		}
	}
	s := o.Op.Shape(b)
	deps := op.DependencesOf(o.Op)
	index := map[string]int{}
	for i, t := range tensors {
		index[t.Name] = i
	}
	var bad []string
	for i, t := range tensors {
		k, ok := outputs[i]
		if !ok {
			continue
		}
		got, ok := tr.Sources(k)
		if !ok {
			return nil, fmt.Errorf("%w: output %s was never read back from the device as itself", errUnattributed, t.Name)
		}
		width := t.Cols.Of(s)
		for e, srcs := range got {
			r, c := e/width, e%width
			if t.Layout != op.Row {
				r, c = 0, e
			}
			bad = append(bad, checkElement(o.Op, s, b, tensors, index, traced, deps, t, r, c, srcs)...)
		}
	}
	return bad, nil
}

// checkElement compares the sources of output element (r, c) of out with
// its declared dependences.
func checkElement[A any](o *op.Op[A], s op.Shape, b *A, tensors []op.Tensor, index map[string]int, traced map[int]int32,
	deps []op.Dependence, out op.Tensor, r, c int, srcs []cudart.Source) []string {
	name := func(t op.Tensor, flat int) string {
		if t.Layout == op.Row {
			w := t.Cols.Of(s)
			return fmt.Sprintf("%s[%d][%d]", t.Name, flat/w, flat%w)
		}
		return fmt.Sprintf("%s[%d]", t.Name, flat)
	}
	here := name(out, r*out.Cols.Of(s)+c)
	if out.Layout != op.Row {
		here = name(out, c)
	}
	got := map[cudart.Source]bool{}
	for _, x := range srcs {
		got[x] = true
	}
	allowed := map[cudart.Source]bool{}
	var bad, declared []string
	for _, d := range deps {
		if d.Out != out.Name {
			continue
		}
		i, ok := index[d.In]
		id, on := traced[i]
		if !ok || !on {
			continue // an optional input left nil
		}
		declared = append(declared, d.String())
		for _, flat := range d.Elements(s, tensors[i], r, c) {
			src := cudart.Source{Tensor: id, Index: int32(flat)}
			allowed[src] = true
			if d.Must && !got[src] {
				bad = append(bad, fmt.Sprintf("%s does not depend on %s (declared: %s)", here, name(tensors[i], flat), d))
			}
		}
	}
	for _, x := range srcs {
		if allowed[x] {
			continue
		}
		what := "memory no input holds (stale scratch or a launch's leftovers)"
		if x.Tensor != cudart.StaleSource {
			for i, id := range traced {
				if id == x.Tensor {
					what = name(tensors[i], int(x.Index))
				}
			}
		}
		bad = append(bad, fmt.Sprintf("%s depends on %s, outside its declared dependence (%s)", here, what, strings.Join(declared, "; ")))
	}
	return bad
}
