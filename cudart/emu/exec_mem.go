package emu

import (
	"fmt"
	"math/bits"

	"github.com/ptxprop/ptxprop/cudart"
)

// laneOrder returns the lanes of m in the order their memory operations
// apply: ascending, or a seed-determined permutation.
func (l *launch) laneOrder(m uint32) []int {
	p := l.perm[:0]
	for ; m != 0; m &= m - 1 {
		p = append(p, bits.TrailingZeros32(m))
	}
	if l.rng != nil {
		l.rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	return p
}

// execLd loads each lane's element or vector. A strong load, or any load
// once the launch communicates across CTAs, also hands each value to
// loaded.
func execLd(w *warp, in *inst, m uint32) {
	if w.l.undefOn {
		w.checkDefined(in, in.a, m, "loads from an address")
	}
	if len(in.vec) == 1 && in.mo == 0 && !w.l.comm && !w.l.undefOn {
		execLd1(w, in, m)
		return
	}
	execLdRest(w, in, m)
}

// execLdRest loads lanes m of execLd, one lane after another.
func execLdRest(w *warp, in *inst, m uint32) {
	base := w.r(in.a)
	size := int(in.t.n)
	n := len(in.vec)
	t := in.t
	ordered := in.mo != 0 || w.l.comm
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		addr := base[l] + uint64(in.off)
		if n > 1 && addr%uint64(size*n) != 0 {
			w.misaligned(in, l, in.space, addr, size*n)
			return
		}
		for i, s := range in.vec {
			a := addr + uint64(i*size)
			v, ok := w.fastLoad(in.space, a, size)
			undef := false
			if !ok {
				if v, ok, undef = w.load(in, l, in.space, a, size); !ok {
					return
				}
			}
			if ordered {
				w.loaded(in, in.space, a, v)
			}
			w.regs[s*32+int32(l)] = t.ext(v)
			if w.l.undefOn {
				w.setUndef(s, l, undef)
			}
		}
	}
}

func execSt(w *warp, in *inst, m uint32) {
	if w.l.undefOn {
		w.checkDefined(in, in.a, m, "stores to an address")
	}
	if len(in.vec) == 1 && in.mo == 0 && !w.l.comm && !w.l.undefOn && w.l.rng == nil {
		execSt1(w, in, m)
		return
	}
	execStRest(w, in, m)
}

// execStRest stores lanes m of execSt in the schedule's lane order.
func execStRest(w *warp, in *inst, m uint32) {
	base := w.r(in.a)
	size := int(in.t.n)
	n := len(in.vec)
	undefOn := w.l.undefOn
	for _, l := range w.l.laneOrder(m) {
		addr := base[l] + uint64(in.off)
		if n > 1 && addr%uint64(size*n) != 0 {
			w.misaligned(in, l, in.space, addr, size*n)
			return
		}
		for i, s := range in.vec {
			undef := undefOn && w.undef[s]>>l&1 != 0
			if !w.store(in, l, in.space, addr+uint64(i*size), size, in.t.trunc(w.regs[s*32+int32(l)]), undef) {
				return
			}
		}
	}
}

// execCpAsync copies global to shared at once (the emulator completes
// asynchronous copies immediately; cp.async.wait_* are no-ops).
func execCpAsync(w *warp, in *inst, m uint32) {
	dst, src := w.r(in.a), w.r(in.b)
	n := int(in.t.n)
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		srcN := n
		if in.c >= 0 {
			srcN = int(uint32(w.regs[in.c*32+int32(l)]))
		}
		da, sa := dst[l]+uint64(in.off), src[l]+uint64(in.target)
		for i := 0; i < n; i += 4 {
			var v uint64
			var undef bool
			if i < srcN {
				var ok bool
				if v, ok, undef = w.load(in, l, spGlobal, sa+uint64(i), min(4, n-i)); !ok {
					return
				}
			}
			if !w.store(in, l, spShared, da+uint64(i), min(4, n-i), v, undef) {
				return
			}
		}
	}
}

// matrixWarp checks that the whole warp executes an ldmatrix or stmatrix
// (.aligned), faulting otherwise, and under the undefined-value checks
// that the row addresses are defined; false: the launch faulted.
func (w *warp) matrixWarp(in *inst, m uint32, what string) bool {
	if m != w.valid {
		w.l.fault(cudart.ErrLaunch, w, in, bits.TrailingZeros32(m), fmt.Sprintf(
			"%s executed by lanes %s of the warp's %s: every lane must execute it together", in.src.Opcode(), laneRanges(m), laneRanges(w.valid)))
		return false
	}
	if w.l.undefOn {
		w.checkDefined(in, in.a, m&uint32(uint64(1)<<(8*len(in.vec))-1), what)
	}
	return true
}

// matrixRows calls row for row r of each matrix i of an ldmatrix or
// stmatrix, with the lane that gives the row's address (8i+r) and the
// address, after checking its 16-byte alignment; a fault, or row
// returning false, ends the walk with false.
func (w *warp) matrixRows(in *inst, row func(i, r, lane int, addr uint64) bool) bool {
	base := w.r(in.a)
	for i := range in.vec {
		for r := 0; r < 8; r++ {
			lane := 8*i + r
			addr := base[lane] + uint64(in.off)
			if addr%16 != 0 {
				w.misaligned(in, lane, in.space, addr, 16)
				return false
			}
			if !row(i, r, lane, addr) {
				return false
			}
		}
	}
	return true
}

// execLdmatrix loads len(in.vec) 8×8 matrices of 16-bit elements. Lane
// 8i+r gives the address of row r of matrix i (16 contiguous bytes, 16-byte
// aligned); register i of lane t receives row t/4, elements 2(t%4) and
// 2(t%4)+1 (the lower in the low half), or with .trans column t/4, rows
// 2(t%4) and 2(t%4)+1. The whole warp executes it together (.aligned).
func execLdmatrix(w *warp, in *inst, m uint32) {
	if !w.matrixWarp(in, m, "loads from an address") {
		return
	}
	var el [4][8][8]uint16 // matrix, row, column
	var un [4][8][8]bool
	ok := w.matrixRows(in, func(i, r, lane int, addr uint64) bool {
		for c := 0; c < 8; c++ {
			v, ok, undef := w.load(in, lane, in.space, addr+uint64(2*c), 2)
			if !ok {
				return false
			}
			el[i][r][c], un[i][r][c] = uint16(v), undef
		}
		return true
	})
	if !ok {
		return
	}
	trans := in.sub == 1
	for t := 0; t < 32; t++ {
		r, c := t/4, 2*(t%4)
		for i, s := range in.vec {
			lo, hi := el[i][r][c], el[i][r][c+1]
			ulo, uhi := un[i][r][c], un[i][r][c+1]
			if trans {
				lo, hi = el[i][c][r], el[i][c+1][r]
				ulo, uhi = un[i][c][r], un[i][c+1][r]
			}
			w.regs[s*32+int32(t)] = uint64(lo) | uint64(hi)<<16
			if w.l.undefOn {
				w.setUndef(s, t, ulo || uhi)
			}
		}
	}
}
