// Package op declares the operations ptxprop checks: their names, the
// problem Shape, the host-level argument type of each operation and the
// Reduction a kernel reports for tolerance derivation. It holds no PTX, no
// device code and no test code, so an implementation of a contract can be
// written against it without importing ptxprop's own kernels.
//
// Tensors are row-major float32 slices: [Rows][Hidden] for the row-wise
// normalisations, [Rows][Heads·HeadDim] for per-head RMSNorm and RoPE.
package op

import "fmt"

// Shape is the problem size a kernel is launched for. Rows and Hidden give
// the [rows][hidden] tensor; per-head kernels and RoPE also set Heads and
// HeadDim (Hidden = Heads·HeadDim). For a column sum, Rows is the number of
// partial rows summed and Hidden the number of columns.
type Shape struct {
	Rows    int
	Hidden  int
	Heads   int // per-head kernels and RoPE only
	HeadDim int // per-head kernels and RoPE only
}

func (s Shape) String() string {
	if s.Heads != 0 || s.HeadDim != 0 {
		return fmt.Sprintf("rows=%d heads=%d head_dim=%d", s.Rows, s.Heads, s.HeadDim)
	}
	return fmt.Sprintf("rows=%d hidden=%d", s.Rows, s.Hidden)
}

// Reduction describes one float32 sum a kernel (or a chain of kernels)
// computes, for a tolerance derivation. Terms is the number of terms. Each
// term passes through at most Serial + Tree rounded additions on its way to
// the result: Serial for the longest chain of serial accumulations a thread
// performs (an fmaf accumulation rounds once per term and counts once), Tree
// for the levels of pairwise combination after them (warp butterfly, tree
// over warps, tree over row groups). A forward error bound is then
// |ŝ − s| ≤ γ(Depth())·Σ|term| with γ(n) = n·u/(1 − n·u), u = 2⁻²⁴.
// Serial is an upper bound over both the vector and the scalar path.
type Reduction struct {
	Name   string // what is summed, e.g. "Σx² per row"
	Terms  int
	Serial int
	Tree   int
}

// Depth returns Serial + Tree.
func (r Reduction) Depth() int { return r.Serial + r.Tree }
