package gen

import (
	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
)

// DrawOffset draws the element offset at which the tensor labelled label
// is passed to the kernel (op.Offsets), steered as label.off within
// 0..op.MaxOffset: 0, the aligned start, three times in four, so that the
// everyday path stays the aligned one; otherwise 1..op.MaxOffset, which
// misaligns a float32 row start for every 16-byte vector access. rapid
// shrinks it towards 0.
func (lim Limits) DrawOffset(t *rapid.T, label string) int {
	const n = op.MaxOffset + 1
	v := rapid.IntRange(0, 4*n-1).Draw(t, label+".off")
	k := 0
	if v >= 3*n {
		k = 1 + (v-3*n)%op.MaxOffset
	}
	return int(lim.steerU(t, label+".off", uint64(k), n))
}

// moveOffset returns an offset other than k in 0..op.MaxOffset, chosen
// by r: the move Mutate makes on a label.off draw.
func moveOffset(k uint64, r func() uint64) uint64 {
	return (k%(op.MaxOffset+1) + 1 + r()%op.MaxOffset) % (op.MaxOffset + 1)
}
