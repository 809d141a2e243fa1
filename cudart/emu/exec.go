package emu

import (
	"math/bits"
)

// forLanes calls f for every lane in m, in ascending order.
func forLanes(m uint32, f func(int)) {
	if m == fullMask {
		for l := 0; l < 32; l++ {
			f(l)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		f(bits.TrailingZeros32(m))
	}
}

// r returns the 32 lanes of register slot s.
func (w *warp) r(s int32) []uint64 { return w.regs[s*32 : s*32+32 : s*32+32] }

func execNop(*warp, *inst, uint32) {}

func execMov(w *warp, in *inst, m uint32) {
	d, a := w.r(in.d), w.r(in.a)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = a[l] & mask
		}
		return
	}
	forLanes(m, func(l int) { d[l] = a[l] & mask })
}

func exec1(w *warp, in *inst, m uint32) {
	d, a := w.r(in.d), w.r(in.a)
	f := in.f1
	forLanes(m, func(l int) { d[l] = f(a[l]) })
}

func exec2(w *warp, in *inst, m uint32) {
	d, a, b := w.r(in.d), w.r(in.a), w.r(in.b)
	f := in.f2
	forLanes(m, func(l int) { d[l] = f(a[l], b[l]) })
}

func exec3(w *warp, in *inst, m uint32) {
	d, a, b, c := w.r(in.d), w.r(in.a), w.r(in.b), w.r(in.c)
	f := in.f3
	forLanes(m, func(l int) { d[l] = f(a[l], b[l], c[l]) })
}
