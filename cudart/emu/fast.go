package emu

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/ptxprop/ptxprop/ptx"
)

// Warp-wide executors for the instructions that dominate real kernels.
//
// The general executors (exec1, exec2, exec3) call a per-instruction
// closure for every lane. The ones here compute the same bits with the
// operation written out in a loop over the active lanes, so a warp
// instruction costs one indirect call instead of two or three per lane.
// The decoder picks one when the instruction's type and modifiers are
// exactly those it implements; everything else keeps its closure.

// ra returns the 32 lanes of register slot s as an array.
func (w *warp) ra(s int32) *[32]uint64 {
	// One bounds check: the conversion checks the 32 lanes.
	return (*[32]uint64)(w.regs[uint(s)*32:])
}

// Floating-point add, sub, mul and fma (f32, round to nearest even, no
// .sat); the ftz variants flush subnormal inputs and results.

func execAddF32(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		var nan uint32
		for l := range d {
			r := math.Float32bits(f32(a[l]) + f32(b[l]))
			nan |= nanBit32(r)
			d[l] = uint64(r)
		}
		if nan != 0 {
			canonRun32(d)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(canon32(f32(a[l]) + f32(b[l])))
	}
}

func execSubF32(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		var nan uint32
		for l := range d {
			r := math.Float32bits(f32(a[l]) - f32(b[l]))
			nan |= nanBit32(r)
			d[l] = uint64(r)
		}
		if nan != 0 {
			canonRun32(d)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(canon32(f32(a[l]) - f32(b[l])))
	}
}

func execMulF32(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		var nan uint32
		for l := range d {
			r := math.Float32bits(f32(a[l]) * f32(b[l]))
			nan |= nanBit32(r)
			d[l] = uint64(r)
		}
		if nan != 0 {
			canonRun32(d)
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(canon32(f32(a[l]) * f32(b[l])))
	}
}

func execFmaF32(w *warp, in *inst, m uint32) {
	d, a, b, c := w.ra(in.d), w.ra(in.a), w.ra(in.b), w.ra(in.c)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(fma32(f32(a[l]), f32(b[l]), f32(c[l]), rn))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(fma32(f32(a[l]), f32(b[l]), f32(c[l]), rn))
	}
}

func execAddF32Ftz(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) + ftz32(f32(b[l])))))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) + ftz32(f32(b[l])))))
	}
}

func execSubF32Ftz(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) - ftz32(f32(b[l])))))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) - ftz32(f32(b[l])))))
	}
}

func execMulF32Ftz(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) * ftz32(f32(b[l])))))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(ftzBits32(canon32(ftz32(f32(a[l])) * ftz32(f32(b[l])))))
	}
}

func execFmaF32Ftz(w *warp, in *inst, m uint32) {
	d, a, b, c := w.ra(in.d), w.ra(in.a), w.ra(in.b), w.ra(in.c)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(ftzBits32(fma32(ftz32(f32(a[l])), ftz32(f32(b[l])), ftz32(f32(c[l])), rn)))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(ftzBits32(fma32(ftz32(f32(a[l])), ftz32(f32(b[l])), ftz32(f32(c[l])), rn)))
	}
}

// nanBit32 returns 1<<31 when the f32 bits r are a NaN, 0 otherwise,
// without a branch: |r| − (+Inf) is negative exactly for NaNs.
func nanBit32(r uint32) uint32 { return (0x7F800000 - r&0x7FFFFFFF) & 0x80000000 }

// canonRun32 replaces every NaN among the f32 lanes d by the canonical
// NaN, as canon32 does lane by lane.
func canonRun32(d *[32]uint64) {
	for l, r := range d {
		if nanBit32(uint32(r)) != 0 {
			d[l] = uint64(nan32)
		}
	}
}

// fastFloat returns the executor for a f32 add, sub, mul or fma in round
// to nearest even without .sat, or nil.
func fastFloat(op string, t dtype, mode rmode, ftz, sat bool) func(*warp, *inst, uint32) {
	if t.k != 'f' || t.n != 4 || mode != rn || sat {
		return nil
	}
	fs := map[string][2]func(*warp, *inst, uint32){
		"add": {execAddF32, execAddF32Ftz}, "sub": {execSubF32, execSubF32Ftz},
		"mul": {execMulF32, execMulF32Ftz}, "fma": {execFmaF32, execFmaF32Ftz},
	}[op]
	if ftz {
		return fs[1]
	}
	if le := map[string]func(*warp, *inst, uint32){"add": execAddF32LE, "sub": execSubF32LE, "mul": execMulF32LE}[op]; le != nil && littleEndian {
		return le
	}
	return fs[0]
}

// Integer add, sub, mul.lo, mad.lo and the bitwise operations, truncated
// to the type's width.

func execAddInt(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l] + b[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l] + b[l]) & mask
	}
}

func execSubInt(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l] - b[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l] - b[l]) & mask
	}
}

func execMulLo(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l] * b[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l] * b[l]) & mask
	}
}

func execMadLo(w *warp, in *inst, m uint32) {
	d, a, b, c := w.ra(in.d), w.ra(in.a), w.ra(in.b), w.ra(in.c)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l]*b[l] + c[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l]*b[l] + c[l]) & mask
	}
}

// execMulWide and execMadWide: mul.wide and mad.wide of 32-bit operands.
func execMulWideS32(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(int64(int32(a[l])) * int64(int32(b[l])))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(int64(int32(a[l])) * int64(int32(b[l])))
	}
}

func execMulWideU32(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(uint32(a[l])) * uint64(uint32(b[l]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(uint32(a[l])) * uint64(uint32(b[l]))
	}
}

func execMadWideS32(w *warp, in *inst, m uint32) {
	d, a, b, c := w.ra(in.d), w.ra(in.a), w.ra(in.b), w.ra(in.c)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(int64(int32(a[l]))*int64(int32(b[l]))) + c[l]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(int64(int32(a[l]))*int64(int32(b[l]))) + c[l]
	}
}

func execMadWideU32(w *warp, in *inst, m uint32) {
	d, a, b, c := w.ra(in.d), w.ra(in.a), w.ra(in.b), w.ra(in.c)
	if m == fullMask {
		for l := range d {
			d[l] = uint64(uint32(a[l]))*uint64(uint32(b[l])) + c[l]
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = uint64(uint32(a[l]))*uint64(uint32(b[l])) + c[l]
	}
}

func execAndInt(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = a[l] & b[l] & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = a[l] & b[l] & mask
	}
}

func execOrInt(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l] | b[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l] | b[l]) & mask
	}
}

func execXorInt(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask := in.t.mask()
	if m == fullMask {
		for l := range d {
			d[l] = (a[l] ^ b[l]) & mask
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		d[l] = (a[l] ^ b[l]) & mask
	}
}

// execShl: shl; shift counts of the width or more give 0.
func execShl(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask, nb := in.t.mask(), uint32(in.t.bits())
	if m == fullMask {
		for l := range d {
			if s := uint32(b[l]); s < nb {
				d[l] = a[l] << s & mask
			} else {
				d[l] = 0
			}
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		if s := uint32(b[l]); s < nb {
			d[l] = a[l] << s & mask
		} else {
			d[l] = 0
		}
	}
}

// execShrU: unsigned shr; shift counts of the width or more give 0.
func execShrU(w *warp, in *inst, m uint32) {
	d, a, b := w.ra(in.d), w.ra(in.a), w.ra(in.b)
	mask, nb := in.t.mask(), uint32(in.t.bits())
	if m == fullMask {
		for l := range d {
			if s := uint32(b[l]); s < nb {
				d[l] = a[l] & mask >> s
			} else {
				d[l] = 0
			}
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		if s := uint32(b[l]); s < nb {
			d[l] = a[l] & mask >> s
		} else {
			d[l] = 0
		}
	}
}

// fastInt returns the executor for an integer instruction without .cc,
// .sat, .hi or 24-bit forms, or nil. wide says .wide.
func fastInt(op string, t dtype, wide bool) func(*warp, *inst, uint32) {
	if t.n != 2 && t.n != 4 && t.n != 8 {
		return nil
	}
	if wide {
		if t.n != 4 {
			return nil
		}
		s := t.k == 's'
		switch {
		case op == "mul" && s:
			return execMulWideS32
		case op == "mul":
			return execMulWideU32
		case op == "mad" && s:
			return execMadWideS32
		case op == "mad":
			return execMadWideU32
		}
		return nil
	}
	switch op {
	case "add":
		return execAddInt
	case "sub":
		return execSubInt
	case "mul":
		return execMulLo
	case "mad":
		return execMadLo
	case "and":
		return execAndInt
	case "or":
		return execOrInt
	case "xor":
		return execXorInt
	case "shl":
		return execShl
	case "shr":
		if t.k != 's' {
			return execShrU
		}
	}
	return nil
}

// fastLoad reads size bytes at addr in space when fastGlobal takes the
// access and its bytes were written; ok false leaves the access to load,
// which decides every other case (and reports what is wrong).
func (w *warp) fastLoad(space uint8, addr uint64, size int) (v uint64, ok bool) {
	a := w.fastGlobal(space, addr, uint64(size))
	if a == nil {
		return 0, false
	}
	off := addr - a.base
	if a.init != nil {
		want := uint64(1)<<size - 1
		if a.init[off>>6]>>(off&63)&want != want {
			return 0, false
		}
	}
	w.l.gbytes[accRead] += int64(size) // LaunchStats, as globalAt counts
	return getBits(a.data[off:], size), true
}

// execLd1 is execLd for a weak scalar load while no value is undefined
// and the launch does not communicate: lanes whose access fastLoad takes
// are read directly, the others go through load.
func execLd1(w *warp, in *inst, m uint32) {
	l := w.l
	base, d := w.ra(in.a), w.ra(in.vec[0])
	size, t, off := int(in.t.n), in.t, uint64(in.off)
	if a, lo, hi, run := w.warpGlobal(in, m, true); a != nil {
		l.gbytes[accRead] += int64(bits.OnesCount32(m) * size) // LaunchStats, as globalAt counts
		off -= a.base
		if s := l.spec; s != nil {
			if s.load1(w, a, lo, hi, in, m, run) {
				return
			}
			for ; m != 0; m &= m - 1 {
				lane := bits.TrailingZeros32(m)
				v, init := s.load(a, int(base[lane]+off), size)
				if !init {
					// Let load report the undefined bytes.
					execLdRest(w, in, m)
					return
				}
				d[lane] = t.ext(v)
			}
			return
		}
		if run {
			o := lo - a.base
			loadRun(d, a.data[o:o+32*uint64(size)], t)
			return
		}
		if size == 4 && t.k != 's' {
			for ; m != 0; m &= m - 1 {
				lane := bits.TrailingZeros32(m)
				d[lane] = uint64(binary.LittleEndian.Uint32(a.data[base[lane]+off:]))
			}
			return
		}
		for ; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			d[lane] = t.ext(getBits(a.data[base[lane]+off:], size))
		}
		return
	}
	if (in.space == spParam || in.space == spConst) && uniformLanes(base, m) {
		// Every lane reads the same bytes of a read-only bank: read them
		// once, as the lowest lane, which also reports any fault.
		lane := bits.TrailingZeros32(m)
		v, ok, _ := w.load(in, lane, in.space, base[lane]+off, size)
		if ok {
			broadcast(d, m, t.ext(v))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		addr := base[lane] + off
		v, ok := w.fastLoad(in.space, addr, size)
		if !ok {
			var undef bool
			if v, ok, undef = w.load(in, lane, in.space, addr, size); !ok {
				return
			}
			if l.undefOn {
				// This load found the first undefined bytes of the launch:
				// the remaining lanes take the general path.
				d[lane] = t.ext(v)
				w.setUndef(in.vec[0], lane, undef)
				execLdRest(w, in, m&(m-1))
				return
			}
		}
		d[lane] = t.ext(v)
	}
}

// fastGlobal returns the allocation holding a plain global access of n
// bytes at addr in space when it is aligned, inside the buffer of the
// allocation the last global access used and clear of its guards; nil
// leaves the access to the general path.
func (w *warp) fastGlobal(space uint8, addr, n uint64) *allocation {
	if space != spGlobal && (space != spGeneric || addr-sharedWindow < paramWindow+windowSize-sharedWindow) {
		return nil
	}
	a := w.l.lastGlobal
	if a == nil || n > 8 || addr&(n-1) != 0 || addr < a.lo || addr+n > a.hi || w.l.spec != nil || w.l.b.ref {
		return nil
	}
	for _, g := range a.guards {
		if addr < g.hi && addr+n > g.lo {
			return nil
		}
	}
	return a
}

// execSt1 is execSt for a weak scalar store under the canonical schedule
// while no value is undefined and the launch does not communicate.
func execSt1(w *warp, in *inst, m uint32) {
	base, s := w.ra(in.a), w.ra(in.vec[0])
	size, t, off := int(in.t.n), in.t, uint64(in.off)
	if a, lo, hi, run := w.warpGlobal(in, m, false); a != nil {
		w.l.gbytes[accWrite] += int64(bits.OnesCount32(m) * size) // LaunchStats, as globalAt counts
		if sp := w.l.spec; sp != nil {
			if sp.store1(w, a, lo, hi, in, m, run) {
				return
			}
			for ; m != 0; m &= m - 1 {
				lane := bits.TrailingZeros32(m)
				if !sp.store(w, a, int(base[lane]+off-a.base), size, s[lane]) {
					return
				}
			}
			return
		}
		launch := w.l.b.mem.launch
		if w.store1(a, lo, hi, in, m, run, launch) {
			return
		}
		for ; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			o := int(base[lane] + off - a.base)
			if !w.recordWrite1(in, lane, a, o, size, launch) {
				return
			}
			putBits(a.data[o:], size, s[lane])
			if a.init != nil {
				a.init[o>>6] |= (uint64(1)<<size - 1) << (o & 63)
			}
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		addr := base[lane] + off
		v := t.trunc(s[lane])
		if a := w.fastGlobal(in.space, addr, uint64(size)); a != nil {
			o := int(addr - a.base)
			if !w.recordGlobalWrite(in, lane, a, o, size, false) {
				return
			}
			w.l.gbytes[accWrite] += int64(size) // LaunchStats, as globalAt counts
			putBits(a.data[o:], size, v)
			a.markInit(o, size)
			continue
		}
		if !w.store(in, lane, in.space, addr, size, v, false) || w.l.undefOn || w.l.comm {
			// A fault, or the store changed what the fast path assumes.
			if w.l.err == nil {
				execStRest(w, in, m&(m-1))
			}
			return
		}
	}
}

// warpGlobal returns the allocation that holds the accesses of every lane
// of m, and the lowest and highest address, when fastGlobal would take
// each of them and, for a load, their bytes were written; nil leaves the
// lanes to the per-lane path.
func (w *warp) warpGlobal(in *inst, m uint32, load bool) (a *allocation, lo, hi uint64, run bool) {
	n := uint64(in.t.n)
	if in.space != spGlobal || n > 8 || m == 0 || w.l.b.ref {
		return nil, 0, 0, false
	}
	base, off := w.ra(in.a), uint64(in.off)
	lo, hi, or := ^uint64(0), uint64(0), uint64(0)
	if m == fullMask && contigAddrs(base, n) {
		// Lane l at lo + l·n: every lane is aligned when lane 0 is.
		run = true
		lo, or = base[0]+off, base[0]+off
		hi = lo + 31*n
	} else if m == fullMask {
		for _, x := range base {
			addr := x + off
			lo, hi, or = min(lo, addr), max(hi, addr), or|addr
		}
	} else {
		for mm := m; mm != 0; mm &= mm - 1 {
			addr := base[bits.TrailingZeros32(mm)] + off
			lo, hi, or = min(lo, addr), max(hi, addr), or|addr
		}
	}
	l := w.l
	if l.instAlloc == nil {
		l.instAlloc = make([]*allocation, len(l.k.insts))
	}
	a = l.instAlloc[in.pc]
	if a == nil || lo < a.base || lo >= a.end {
		// A new buffer for this instruction: find it, and keep it for
		// the instruction's next access (instructions alternate between
		// buffers, an instruction seldom does).
		if a = l.b.mem.find(lo); a == nil {
			return nil, 0, 0, false
		}
		l.instAlloc[in.pc] = a
	}
	l.lastGlobal = a
	if or&(n-1) != 0 || lo < a.lo || hi+n > a.hi || hi+n < hi {
		return nil, 0, 0, false
	}
	for _, g := range a.guards {
		if lo < g.hi && hi+n > g.lo {
			return nil, 0, 0, false
		}
	}
	if a.init != nil && load {
		if run {
			if !bitsSet(a.init, int(lo-a.base), int(32*n)) {
				return nil, 0, 0, false
			}
			return a, lo, hi, run
		}
		want := uint64(1)<<n - 1
		for mm := m; mm != 0; mm &= mm - 1 {
			o := base[bits.TrailingZeros32(mm)] + off - a.base
			if a.init[o>>6]>>(o&63)&want != want {
				return nil, 0, 0, false
			}
		}
	}
	return a, lo, hi, run
}

// recordWrite1 is recordGlobalWrite for a weak aligned store of at most 8
// bytes (one page of records): while no byte was last written by another
// CTA, it counts the store and stamps the bytes itself.
func (w *warp) recordWrite1(in *inst, lane int, a *allocation, off, size int, launch uint32) bool {
	l := w.l
	po := off & (pageSize - 1)
	recs := a.page(off, launch)[po : po+size]
	base, nw := l.cta.gbase, uint32(l.nwarp)
	for _, rec := range recs {
		if prev := uint32(rec >> wcWarpShft); prev != 0 && prev-1-base >= nw {
			return w.recordGlobalWrite(in, lane, a, off, size, false)
		}
	}
	me := uint64(base+uint32(w.idx)+1)<<wcWarpShft | uint64(w.clock)<<wcClkShft
	for i, rec := range recs {
		cnt := rec & wcMask
		if cnt < wcMask {
			cnt++
		}
		recs[i] = me | cnt
	}
	return true
}

// store1 is execSt1 for the lanes m of a warp whose addresses, [lo, hi]
// in allocation a, lie on one page of write records, none of whose bytes
// another CTA wrote in this launch; false leaves the lanes to the
// per-lane path, having changed nothing.
func (w *warp) store1(a *allocation, lo, hi uint64, in *inst, m uint32, run bool, launch uint32) bool {
	n := uint64(in.t.n)
	lo0 := int(lo - a.base)
	if lo0>>pageBits != int(hi+n-1-a.base)>>pageBits {
		return false
	}
	l := w.l
	if run {
		me := uint64(l.cta.gbase+uint32(w.idx)+1)<<wcWarpShft | uint64(w.clock)<<wcClkShft
		size := int(n)
		if !a.stampRun(lo0, 32*size, launch, me, l.cta.gbase, uint32(l.nwarp)) {
			return false
		}
		storeRun(a.data[lo0:lo0+32*size], w.ra(in.vec[0]), in.t)
		if a.init != nil {
			setBits(a.init, lo0, 32*size)
		}
		return true
	}
	pbase := lo0 &^ (pageSize - 1)
	recs := a.page(lo0, launch)
	span := recs[lo0-pbase : int(hi+n-a.base)-pbase]
	gbase, nw := l.cta.gbase, uint32(l.nwarp)
	for _, rec := range span {
		if prev := uint32(rec >> wcWarpShft); prev != 0 && prev-1-gbase >= nw {
			return false
		}
	}
	base, v := w.ra(in.a), w.ra(in.vec[0])
	off := uint64(in.off) - a.base
	size := int(n)
	me := uint64(gbase+uint32(w.idx)+1)<<wcWarpShft | uint64(w.clock)<<wcClkShft
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		o := int(base[lane] + off)
		r := recs[o-pbase : o-pbase+size]
		for i, rec := range r {
			cnt := rec & wcMask
			if cnt < wcMask {
				cnt++
			}
			r[i] = me | cnt
		}
		putBits(a.data[o:], size, v[lane])
		if a.init != nil {
			a.init[o>>6] |= (uint64(1)<<size - 1) << (o & 63)
		}
	}
	return true
}

// Integer comparisons of execSetpInt (inst.sub): a op b on the operands
// sign- or zero-extended from the type's width; with cmpUnsigned, zero-
// extended whatever the type (lo, ls, hi, hs).
const (
	cmpUnsigned uint8 = 0x80
)

const (
	cmpEq uint8 = 1 + iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// intCmpCode returns the execSetpInt code of an integer setp, or 0.
func intCmpCode(pin *ptx.Instruction, t dtype) uint8 {
	if t.isFloat() || t.n != 2 && t.n != 4 && t.n != 8 {
		return 0
	}
	codes := map[string]uint8{"eq": cmpEq, "ne": cmpNe, "lt": cmpLt, "le": cmpLe, "gt": cmpGt, "ge": cmpGe,
		"lo": cmpLt | cmpUnsigned, "ls": cmpLe | cmpUnsigned, "hi": cmpGt | cmpUnsigned, "hs": cmpGe | cmpUnsigned}
	for _, m := range pin.Mods {
		if c, ok := codes[m]; ok {
			return c
		}
	}
	return 0
}

// execSetpInt is execSetp for an integer comparison (inst.sub). The
// operands are extended to 64 bits and, for signed types, offset by
// 2^63, so that one unsigned comparison orders both.
func execSetpInt(w *warp, in *inst, m uint32) {
	a, b := w.ra(in.a), w.ra(in.b)
	t := in.t
	var x, y [32]uint64
	if t.signed() && in.sub&cmpUnsigned == 0 {
		for l := range x {
			x[l], y[l] = t.ext(a[l])^1<<63, t.ext(b[l])^1<<63
		}
	} else {
		mask := t.mask()
		for l := range x {
			x[l], y[l] = a[l]&mask, b[l]&mask
		}
	}
	var r uint32
	switch in.sub &^ cmpUnsigned {
	case cmpEq:
		for l := range x {
			if x[l] == y[l] {
				r |= 1 << l
			}
		}
	case cmpNe:
		for l := range x {
			if x[l] != y[l] {
				r |= 1 << l
			}
		}
	case cmpLt:
		for l := range x {
			if x[l] < y[l] {
				r |= 1 << l
			}
		}
	case cmpLe:
		for l := range x {
			if x[l] <= y[l] {
				r |= 1 << l
			}
		}
	case cmpGt:
		for l := range x {
			if x[l] > y[l] {
				r |= 1 << l
			}
		}
	case cmpGe:
		for l := range x {
			if x[l] >= y[l] {
				r |= 1 << l
			}
		}
	}
	r &= m
	q := ^r
	if in.bop != 0 {
		c := w.preds[in.c]
		if in.cneg {
			c = ^c
		}
		r, q = combine(in.bop, r, c), combine(in.bop, q, c)
	}
	w.preds[in.d] = w.preds[in.d]&^m | r&m
	if in.d2 >= 0 {
		w.preds[in.d2] = w.preds[in.d2]&^m | q&m
	}
}
