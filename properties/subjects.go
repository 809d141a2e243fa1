package properties

import (
	"slices"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
)

// OwnSubject is one subject a registry row's contract runs on among a list
// of implementations: Impl (and Forward, for a Pair row; -1 otherwise)
// index that list.
type OwnSubject struct {
	Impl, Forward int
	Subject       Subject
}

// Subjects returns the subjects p's contract runs on among impls, our
// implementations (kernels.Implementations): each implementation of an
// operation p covers that p's contract takes, a Pair row's with each
// forward among impls it takes. Left out: an implementation a design row
// holds exclusively (Exclusive), and, for the predictions over several
// operations, whose problems draw one position per row, a forward that
// takes one position for every row (PositionsOf). Nil for a row without a
// contract.
func Subjects(p *Prediction, impls []any) []OwnSubject {
	if p.Contract == nil {
		return nil
	}
	exclusive := make([]bool, len(impls))
	for i, impl := range impls {
		for _, q := range InOrder() {
			exclusive[i] = exclusive[i] || (q.Exclusive && q.DesignTakes(impl, KernelNames(impl)))
		}
	}
	var out []OwnSubject
	for i, impl := range impls {
		o, ok := OperationOf(impl)
		if !ok || exclusive[i] || !p.Covers(o.Table().Name()) {
			continue
		}
		if p.Pair == nil {
			s := Subject{Impl: impl, Positions: PositionsOf(impl)}
			if (len(p.Ops) == 1 || !sharedPosition(o.Table(), impl)) && p.Takes(s) {
				out = append(out, OwnSubject{Impl: i, Forward: -1, Subject: s})
			}
			continue
		}
		for j, fwd := range impls {
			s := Subject{Impl: impl, Forward: fwd, Positions: PositionsOf(fwd)}
			if j != i && !exclusive[j] && p.Takes(s) {
				out = append(out, OwnSubject{Impl: i, Forward: j, Subject: s})
			}
		}
	}
	return out
}

// KernelNames returns the names of the kernels impl launches (none when it
// does not list them), each once.
func KernelNames(impl any) []string {
	var out []string
	if l, ok := impl.(KernelLister); ok {
		for _, k := range l.Kernels() {
			if k != nil && !slices.Contains(out, k.Name) {
				out = append(out, k.Name)
			}
		}
	}
	return out
}

// PositionsOf says how impl, an implementation of ours, takes RoPE
// positions: one per row when a kernel it launches has a pointer
// parameter named like the op table's per-row uint32 input (as a binding
// that binds positions), else one for every row. Other operations ignore
// it.
func PositionsOf(impl any) Positions {
	l, ok := impl.(KernelLister)
	if !ok {
		return SharedPosition
	}
	for _, k := range l.Kernels() {
		if k != nil && slices.ContainsFunc(k.Params, func(p kernels.ParamSpec) bool { return p.IsPointer() && isPositions(p.Name) }) {
			return PerRowPositions
		}
	}
	return SharedPosition
}

// isPositions reports whether name is a uint32 per-row input of the op table.
func isPositions(name string) bool {
	for _, o := range op.All() {
		for _, t := range o.Tensors() {
			if t.Role == op.In && t.Kind == "u32" && t.Layout == op.Row && t.Name == name {
				return true
			}
		}
	}
	return false
}

// sharedPosition reports whether impl, an implementation of o, takes one
// position for every row where o's optional uint32 input gives one per row
// (the single-position RoPE forward).
func sharedPosition(o op.Operation, impl any) bool {
	for _, t := range o.Tensors() {
		if t.Role == op.In && t.Kind == "u32" && t.Optional {
			return PositionsOf(impl) == SharedPosition
		}
	}
	return false
}

// ownKernels returns the kernels of our implementations p's contract runs
// on (Subjects), for a row that does not list them: what the report names
// when the prediction did not run.
func ownKernels(p *Prediction) []string {
	impls := kernels.Implementations()
	var out []string
	for _, s := range Subjects(p, impls) {
		for _, i := range []int{s.Impl, s.Forward} {
			if i < 0 {
				continue
			}
			for _, k := range KernelNames(impls[i]) {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}
