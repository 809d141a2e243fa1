package falsify

import (
	"reflect"
	"slices"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// set is our implementations, kernels.Implementations in its order: one
// or more of every operation.
type set []any

// defaults returns package kernels' implementations.
func defaults() set { return setWith() }

// setWith returns package kernels' implementations with every use of a
// kernel named like one of ks replaced by it: a mutant kernel is swapped
// into each implementation that launches the original.
func setWith(ks ...*kernels.Kernel) set {
	s := set(kernels.Implementations())
	for i := range s {
		s[i] = swap(s[i], ks)
	}
	return s
}

// swap returns impl, a struct of *kernels.Kernel fields, with each kernel
// named like one of ks replaced by it.
func swap(impl any, ks []*kernels.Kernel) any {
	v := reflect.New(reflect.TypeOf(impl)).Elem()
	v.Set(reflect.ValueOf(impl))
	if v.Kind() != reflect.Struct {
		return impl
	}
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanInterface() {
			continue
		}
		k, ok := f.Interface().(*kernels.Kernel)
		if !ok {
			continue
		}
		for _, m := range ks {
			if k.Name == m.Name {
				f.Set(reflect.ValueOf(m))
			}
		}
	}
	return v.Interface()
}

// kernelNames returns the names of the kernels impl launches (none when
// it does not list them).
func kernelNames(impl any) []string {
	var out []string
	if l, ok := impl.(properties.KernelLister); ok {
		for _, k := range l.Kernels() {
			if k != nil && !slices.Contains(out, k.Name) {
				out = append(out, k.Name)
			}
		}
	}
	return out
}

// launching returns the indices of the implementations of s that launch
// kernel.
func (s set) launching(kernel string) []int {
	var out []int
	for i, impl := range s {
		if slices.Contains(kernelNames(impl), kernel) {
			out = append(out, i)
		}
	}
	return out
}

// with returns a copy of s with every implementation that launches kernel
// replaced by impl.
func (s set) with(kernel string, impl any) set {
	out := slices.Clone(s)
	for _, i := range s.launching(kernel) {
		out[i] = impl
	}
	return out
}

// implName names our implementation impl in a probe: its Go type.
func implName(impl any) string { return reflect.TypeOf(impl).Name() }

// positionMode says how our RoPE forward impl takes its positions: one per
// row when a kernel it launches has the op table's positions tensor (as a
// binding that binds it), else one for every row. Other operations ignore it.
func positionMode(impl any) properties.Positions {
	if l, ok := impl.(properties.KernelLister); ok {
		for _, k := range l.Kernels() {
			for _, p := range k.Params {
				if p.IsPointer() && p.Name == "positions" {
					return properties.PerRowPositions
				}
			}
		}
	}
	return properties.SharedPosition
}

// target is a built mutant: its implementations beside the originals, the
// probes that run contracts on them, and what identifies its launches.
type target struct {
	probes    []probe
	orig, mut *set
	// mutated matches launches of the mutated code (nil: every launch of
	// an implementation that differs from the original).
	mutated func(m cudart.Module, entry string) bool
	// check, when set, loads the mutant before any probe runs: a mutant
	// that does not load is an error of the analysis, not a kill.
	check func(dev cudart.Device) error
	// close releases what the mutant holds (e.g. goroutines blocked on its
	// lock); nil when nothing.
	close func()
	// setup, when set, changes the contracts' configuration before the
	// probes and returns the function that undoes it (e.g. a lower watchdog
	// limit).
	setup func(c *properties.Config) func()
}

// probe is one contract run: prediction id checked by contract name on
// the implementations env gives it.
type probe struct {
	id   string
	name string
	run  func(t properties.TB, e *env)
}

// env hands a probe the mutant's implementations, wrapped for tracing
// (and for comparison with the originals in differential mode).
type env struct {
	orig, mut *set
	tr        *tracer
}

// impl returns implementation i of the set a probe runs: the mutant's own
// when it is the original, else the mutant's traced (and compared with the
// original).
func (e *env) impl(i int) any {
	mut, orig := (*e.mut)[i], (*e.orig)[i]
	if same(mut, orig) {
		return mut
	}
	o, ok := properties.OperationOf(orig)
	if !ok {
		return mut
	}
	return traced(e.tr, o, mut, orig)
}

// sameCode are the predictions that compare two backends running the same
// implementation: a mutant passes them by construction, so they probe only
// the named mutants written for them (implProbe).
var sameCode = []string{properties.Parity}

// probeTable lists, for every kernel, the contract runs that launch it,
// derived from our implementations (the kernels each launches), the
// operation each implements and the registry rows: every row whose
// contract covers the operation and takes the implementation (a Pair row
// with each forward of ours it takes), then the design rows that take it.
// An implementation a design row holds exclusively gets that row alone.
// Within a kernel, the operation's own predictions come first (registry
// order), the sharpest and cheapest: a mutant stops at its first kill.
var probeTable = sync.OnceValue(func() map[string][]probe { return deriveProbes(defaults()) })

func deriveProbes(s set) map[string][]probe {
	table := map[string][]probe{}
	add := func(p probe, impls ...int) {
		for _, i := range impls {
			for _, k := range kernelNames(s[i]) {
				if !slices.ContainsFunc(table[k], func(q probe) bool { return q.name == p.name }) {
					table[k] = append(table[k], p)
				}
			}
		}
	}
	exclusive := make([]bool, len(s))
	for i, impl := range s {
		for _, p := range properties.InOrder() {
			exclusive[i] = exclusive[i] || (p.Exclusive && p.DesignTakes(impl, kernelNames(impl)))
		}
	}
	for i, impl := range s {
		o, ok := properties.OperationOf(impl)
		if !ok || exclusive[i] {
			continue
		}
		for _, p := range properties.InOrder() {
			if slices.Contains(sameCode, p.ID) || !p.Covers(o.Table().Name()) {
				continue
			}
			if p.Pair == nil {
				if len(p.Ops) > 1 && sharedPosition(o.Table(), impl) {
					continue // the predictions over every operation draw a position per row
				}
				if p.Takes(properties.Subject{Impl: impl, Positions: positionMode(impl)}) {
					add(subjectProbe(p, i, -1, s), i)
				}
				continue
			}
			for j, fwd := range s {
				if j != i && !exclusive[j] && p.Takes(properties.Subject{Impl: impl, Forward: fwd, Positions: positionMode(fwd)}) {
					add(subjectProbe(p, i, j, s), i, j)
				}
			}
		}
	}
	for i, impl := range s {
		for _, p := range properties.InOrder() {
			if p.DesignTakes(impl, kernelNames(impl)) {
				add(probe{p.ID, p.ID + "(" + implName(impl) + ")", func(t properties.TB, e *env) { p.RunDesign(t, e.impl(i)) }}, i)
			}
		}
	}
	return table
}

// sharedPosition reports whether impl, an implementation of o, takes one
// position for every row where o's optional uint32 input gives one per row
// (the single-position RoPE forward).
func sharedPosition(o op.Operation, impl any) bool {
	for _, t := range o.Tensors() {
		if t.Role == op.In && t.Kind == "u32" && t.Optional {
			return positionMode(impl) == properties.SharedPosition
		}
	}
	return false
}

// subjectProbe is the probe of p on implementation i of s, with forward j
// for a Pair row (-1: none).
func subjectProbe(p *properties.Prediction, i, j int, s set) probe {
	name := implName(s[i])
	if j >= 0 {
		name = implName(s[j]) + "+" + name
	}
	return probe{p.ID, p.ID + "(" + name + ")", func(t properties.TB, e *env) {
		sub := properties.Subject{Impl: e.impl(i), Positions: positionMode(s[i])}
		if j >= 0 {
			sub.Forward, sub.Positions = e.impl(j), positionMode(s[j])
		}
		p.Run(t, sub)
	}}
}

// implProbe is the probe of prediction id by contract f on our first
// implementation that launches kernel: a prediction sameCode leaves out,
// for the named mutant written for it.
func implProbe(id, kernel string, f func(t properties.TB, im properties.Impls)) probe {
	s := defaults()
	i := s.launching(kernel)[0]
	return probe{id, id + "(" + implName(s[i]) + ")", func(t properties.TB, e *env) { f(t, properties.Impls{e.impl(i)}) }}
}

// kernelProbes returns the probes of kernel name.
func kernelProbes(name string) []probe { return probeTable()[name] }

// ordered returns ps with the probes of the predictions in first moved to
// the front (in first's order), the rest after them in their order.
func ordered(ps []probe, first []string) []probe {
	var out, rest []probe
	for _, id := range first {
		for _, p := range ps {
			if p.id == id {
				out = append(out, p)
			}
		}
	}
	for _, p := range ps {
		if !contains(first, p.id) {
			rest = append(rest, p)
		}
	}
	return append(out, rest...)
}
