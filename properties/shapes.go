package properties

import (
	"strings"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

// ReductionDescriber is implemented by implementations that describe the
// float32 sums they compute (package kernels' implementations do). Contracts
// then derive tolerances from the real reduction depth; for an implementation
// that does not describe itself they assume the worst case, the naive serial
// order, which bounds every order (atomics included) but is looser.
type ReductionDescriber interface {
	Reductions(s op.Shape) []op.Reduction
}

// KernelLister is implemented by implementations that can show the kernels
// they launch (package kernels' implementations do); static predictions
// (no float atomics, every .param read) inspect their PTX.
type KernelLister interface {
	Kernels() []*kernels.Kernel
}

// reductions returns the oracle reduction shapes of impl at s: row is the
// deepest per-row sum over n terms, rows the deepest sum over rows (the
// weight gradients). Unknown implementations get the serial worst case.
func reductions(impl any, s op.Shape, n int) (row, rows oracle.Reduction) {
	row, rows = oracle.SerialReduction(), oracle.SerialReduction()
	d, ok := impl.(ReductionDescriber)
	if !ok {
		return
	}
	rowD, rowsD := -1, -1
	for _, r := range d.Reductions(s) {
		switch {
		case strings.HasPrefix(r.Name, "dγ") || strings.HasPrefix(r.Name, "dβ"):
			rowsD = max(rowsD, r.Depth())
		case r.Terms == n:
			rowD = max(rowD, r.Depth())
		}
	}
	// A depth-d order over n terms: n partial sums of one term each, then d
	// additions on the longest path (oracle.Reduction.Depth gives d).
	if rowD >= 0 {
		row = oracle.Reduction{Threads: n, Tree: rowD}
	}
	if rowsD >= 0 {
		rows = oracle.Reduction{Threads: s.Rows, Tree: rowsD}
	}
	return
}
