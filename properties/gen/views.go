package gen

import (
	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
)

// DrawOffsets draws the element offsets at which one call passes the
// tensors labelled labels to the kernel (op.Offsets), each steered as
// label.off within 0..op.MaxOffset. Half the calls pass every tensor
// aligned, the everyday path (the vectorised one); the other half
// misaligns exactly one tensor, chosen uniformly, by 1..MaxOffset
// elements (every misalignment of a 16-byte access to float32s), so each
// tensor is aligned in at least 3/4 of the calls of an operation of two
// tensors or more. One
// tensor at a time reaches each test of a kernel's chain of alignment
// tests (x, then γ, then y, …) equally often, since the tests before it
// pass; a steered search may misalign any number. rapid shrinks towards
// all aligned.
func (lim Limits) DrawOffsets(t *rapid.T, labels []string) []int {
	n := len(labels)
	out := make([]int, n)
	if n == 0 {
		return out
	}
	pick := rapid.IntRange(0, 2*n-1).Draw(t, "views") - n // ≥ 0: the tensor misaligned
	k := rapid.IntRange(1, op.MaxOffset).Draw(t, "views.off")
	for i, l := range labels {
		v := 0
		if i == pick {
			v = k
		}
		out[i] = int(lim.steerU(t, l+".off", uint64(v), op.MaxOffset+1))
	}
	return out
}

// moveOffset returns an offset other than k in 0..op.MaxOffset, chosen
// by r: the move Mutate makes on a label.off draw.
func moveOffset(k uint64, r func() uint64) uint64 {
	return (k%(op.MaxOffset+1) + 1 + r()%op.MaxOffset) % (op.MaxOffset + 1)
}
