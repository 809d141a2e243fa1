package falsify

import (
	"reflect"
	"slices"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
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

// launching returns the indices of the implementations of s that launch
// kernel.
func (s set) launching(kernel string) []int {
	var out []int
	for i, impl := range s {
		if slices.Contains(properties.KernelNames(impl), kernel) {
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
			for _, k := range properties.KernelNames(s[i]) {
				if !slices.ContainsFunc(table[k], func(q probe) bool { return q.name == p.name }) {
					table[k] = append(table[k], p)
				}
			}
		}
	}
	for i := range s {
		for _, p := range properties.InOrder() {
			if slices.Contains(sameCode, p.ID) {
				continue
			}
			for _, sub := range properties.Subjects(p, s) {
				switch {
				case sub.Impl != i:
				case sub.Forward < 0:
					add(subjectProbe(p, i, -1, s), i)
				default: // the forward's kernels run under it too
					add(subjectProbe(p, i, sub.Forward, s), i, sub.Forward)
				}
			}
		}
	}
	for i, impl := range s {
		for _, p := range properties.InOrder() {
			if p.DesignTakes(impl, properties.KernelNames(impl)) {
				add(probe{p.ID, p.ID + "(" + implName(impl) + ")", func(t properties.TB, e *env) { p.RunDesign(t, e.impl(i)) }}, i)
			}
		}
	}
	return table
}

// subjectProbe is the probe of p on implementation i of s, with forward j
// for a Pair row (-1: none).
func subjectProbe(p *properties.Prediction, i, j int, s set) probe {
	name := implName(s[i])
	if j >= 0 {
		name = implName(s[j]) + "+" + name
	}
	return probe{p.ID, p.ID + "(" + name + ")", func(t properties.TB, e *env) {
		sub := properties.Subject{Impl: e.impl(i), Positions: properties.PositionsOf(s[i])}
		if j >= 0 {
			sub.Forward, sub.Positions = e.impl(j), properties.PositionsOf(s[j])
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
