package emu

import (
	"math"
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

// execBfi: bfi.b32 d, a, b, c, e inserts a's low e bits into b at bit c.
func execBfi(w *warp, in *inst, m uint32) {
	d, a, b, c, e := w.r(in.d), w.r(in.a), w.r(in.b), w.r(in.c), w.r(in.e)
	n := uint(in.t.bits())
	forLanes(m, func(l int) {
		pos, ln := uint(c[l]&0xFF), uint(e[l]&0xFF)
		f := b[l]
		for i := uint(0); i < ln && pos+i < n; i++ {
			bit := (a[l] >> i) & 1
			f = f&^(1<<(pos+i)) | bit<<(pos+i)
		}
		d[l] = in.t.trunc(f)
	})
}

func execSelp(w *warp, in *inst, m uint32) {
	d, a, b := w.r(in.d), w.r(in.a), w.r(in.b)
	p := w.preds[in.c]
	if in.cneg {
		p = ^p
	}
	forLanes(m, func(l int) {
		if p>>l&1 != 0 {
			d[l] = a[l]
		} else {
			d[l] = b[l]
		}
	})
}

func execPredMov(w *warp, in *inst, m uint32) {
	p := w.preds[in.a]
	if in.aneg {
		p = ^p
	}
	w.preds[in.d] = w.preds[in.d]&^m | p&m
}

func execPredLogic(w *warp, in *inst, m uint32) {
	a, b := w.preds[in.a], w.preds[in.b]
	if in.aneg {
		a = ^a
	}
	if in.cneg {
		b = ^b
	}
	var r uint32
	switch in.bop {
	case 1:
		r = a & b
	case 2:
		r = a | b
	default:
		r = a ^ b
	}
	w.preds[in.d] = w.preds[in.d]&^m | r&m
}

// execPredTest sets predicate d to cmp(a) (testp, isspacep).
func execPredTest(w *warp, in *inst, m uint32) {
	a := w.r(in.a)
	var r uint32
	forLanes(m, func(l int) {
		if in.cmp(a[l], 0) {
			r |= 1 << l
		}
	})
	w.preds[in.d] = w.preds[in.d]&^m | r
}

// execSetp: p = cmp(a, b) BOP c; the optional second destination gets
// !cmp(a, b) BOP c.
func execSetp(w *warp, in *inst, m uint32) {
	a, b := w.r(in.a), w.r(in.b)
	var r uint32
	cmp := in.cmp
	forLanes(m, func(l int) {
		if cmp(a[l], b[l]) {
			r |= 1 << l
		}
	})
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

func combine(op uint8, a, b uint32) uint32 {
	switch op {
	case 1:
		return a & b
	case 2:
		return a | b
	}
	return a ^ b
}

// execSet: d = cmp(a, b) BOP c ? (f32: 1.0, int: all ones) : 0.
func execSet(w *warp, in *inst, m uint32) {
	a, b, d := w.r(in.a), w.r(in.b), w.r(in.d)
	c := uint32(fullMask)
	if in.bop != 0 {
		c = w.preds[in.c]
		if in.cneg {
			c = ^c
		}
	}
	one := uint64(0xFFFFFFFF)
	if in.t.k == 'f' {
		one = uint64(math.Float32bits(1))
	}
	forLanes(m, func(l int) {
		v := in.cmp(a[l], b[l])
		cb := c>>l&1 != 0
		switch in.bop {
		case 1:
			v = v && cb
		case 2:
			v = v || cb
		case 3:
			v = v != cb
		}
		if v {
			d[l] = one
		} else {
			d[l] = 0
		}
	})
}

// execPack: mov.b64 d, {a, b} (element 0 in the low bits).
func execPack(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	eb := in.t2.bits()
	forLanes(m, func(l int) {
		var v uint64
		for i, s := range in.vec {
			v |= in.t2.trunc(w.regs[s*32+int32(l)]) << (uint(i) * eb)
		}
		d[l] = v
	})
}

func execUnpack(w *warp, in *inst, m uint32) {
	a := w.r(in.a)
	eb := in.t2.bits()
	forLanes(m, func(l int) {
		v := a[l]
		for i, s := range in.vec {
			w.regs[s*32+int32(l)] = in.t2.trunc(v >> (uint(i) * eb))
		}
	})
}

func execActivemask(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	forLanes(m, func(l int) { d[l] = uint64(w.active) })
}

// execClock reads %clock/%clock64/%globaltimer: the launch's warp
// instruction count, deterministic and increasing.
func execClock(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	v := uint64(w.l.warpInsts)
	if in.sub == 1 {
		v >>= 32
	}
	forLanes(m, func(l int) { d[l] = v })
}

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

func execLd(w *warp, in *inst, m uint32) {
	base := w.r(in.a)
	size := int(in.t.n)
	n := len(in.vec)
	t := in.t
	if w.l.undefOn {
		w.checkDefined(in, in.a, m, "loads from an address")
	}
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		addr := base[l] + uint64(in.off)
		if n > 1 && addr%uint64(size*n) != 0 {
			w.misaligned(in, l, in.space, addr, size*n)
			return
		}
		for i, s := range in.vec {
			v, ok, undef := w.load(in, l, in.space, addr+uint64(i*size), size)
			if !ok {
				return
			}
			w.regs[s*32+int32(l)] = t.ext(v)
			if w.l.undefOn {
				w.setUndef(s, l, undef)
			}
		}
	}
}

func execSt(w *warp, in *inst, m uint32) {
	base := w.r(in.a)
	size := int(in.t.n)
	n := len(in.vec)
	undefOn := w.l.undefOn
	if undefOn {
		w.checkDefined(in, in.a, m, "stores to an address")
	}
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

func execAtom(w *warp, in *inst, m uint32) {
	base, bv := w.r(in.a), w.r(in.b)
	var cv []uint64
	if in.c >= 0 {
		cv = w.r(in.c)
	}
	t := in.t
	size := int(t.n)
	if w.l.undefOn {
		w.checkDefined(in, in.a, m, "applies an atomic to an address")
		w.checkDefined(in, in.b, m, "applies an atomic with an operand")
		w.checkDefined(in, in.c, m, "applies an atomic with an operand")
	}
	for _, l := range w.l.laneOrder(m) {
		b := t.trunc(bv[l])
		var c uint64
		if cv != nil {
			c = t.trunc(cv[l])
		}
		old, ok := w.atomicRMW(in, l, in.space, base[l]+uint64(in.off), size, func(old uint64, space uint8) (uint64, bool) {
			return atomicOp(in, t, old, b, c, space)
		})
		if !ok {
			return
		}
		if in.d >= 0 {
			w.regs[in.d*32+int32(l)] = t.ext(old)
			if w.l.undefOn {
				w.setUndef(in.d, l, false)
			}
		}
	}
}

// atomicOp computes an atomic's new value. atom.add.f32 on global memory
// flushes subnormal inputs and results to zero; on shared memory it keeps
// them (PTX ISA, atom).
func atomicOp(in *inst, t dtype, old, b, c uint64, space uint8) (uint64, bool) {
	switch in.sub {
	case atAdd:
		switch {
		case t.k == 'f' && t.n == 4 && space == spGlobal:
			return uint64(ftzBits32(add32(ftz32(f32(old)), ftz32(f32(b)), rn))), true
		case t.k == 'f' && t.n == 4:
			return uint64(add32(f32(old), f32(b), rn)), true
		case t.k == 'f':
			return canon64(math.Float64frombits(old) + math.Float64frombits(b)), true
		case t.k == 'h':
			return uint64(roundF16(f16ToF64(uint16(old))+f16ToF64(uint16(b)), 0, rn)), true
		case t.k == 'H':
			x, y := bf16ToF64(uint16(old)), bf16ToF64(uint16(b))
			s, e := twoSum(x, y)
			return uint64(roundBF16(s, e, rn)), true
		}
		return t.trunc(old + b), true
	case atMin:
		if t.k == 'f' {
			return minMaxFloat(t, old, b, false, false), true
		}
		return minInt(t, old, b), true
	case atMax:
		if t.k == 'f' {
			return minMaxFloat(t, old, b, true, false), true
		}
		return maxInt(t, old, b), true
	case atInc:
		if old >= b {
			return 0, true
		}
		return t.trunc(old + 1), true
	case atDec:
		if old == 0 || old > b {
			return b, true
		}
		return t.trunc(old - 1), true
	case atAnd:
		return old & b, true
	case atOr:
		return old | b, true
	case atXor:
		return old ^ b, true
	case atExch:
		return b, true
	case atCas:
		if old == b {
			return c, true
		}
		return old, false
	}
	return old, false
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

// Carry-chain arithmetic (add.cc, addc, sub.cc, subc, mad.cc, madc).
const (
	ccAdd uint8 = iota
	ccSub
	ccMadLo
	ccMadHi
)

func execCarry(w *warp, in *inst, m uint32) {
	d, a, b := w.r(in.d), w.r(in.a), w.r(in.b)
	var c []uint64
	if in.c >= 0 {
		c = w.r(in.c)
	}
	t := in.t
	useCarry := in.mode == 1 // addc/subc/madc read CC.CF
	var cout uint32
	nb := t.bits()
	forLanes(m, func(l int) {
		x, y := t.trunc(a[l]), t.trunc(b[l])
		var cin uint64
		if useCarry {
			cin = uint64(w.carry >> l & 1)
		}
		var res, co uint64
		switch in.sub {
		case ccAdd:
			res, co = addCarry(x, y, cin, nb)
		case ccSub:
			res, co = subBorrow(x, y, cin, nb)
		case ccMadLo, ccMadHi:
			var p uint64
			if nb == 64 {
				hi, lo := bits.Mul64(x, y)
				p = lo
				if in.sub == ccMadHi {
					p = hi
				}
			} else {
				full := x * y
				p = full & t.mask()
				if in.sub == ccMadHi {
					p = full >> nb
				}
			}
			res, co = addCarry(p, t.trunc(c[l]), cin, nb)
		}
		d[l] = res
		if co != 0 {
			cout |= 1 << l
		}
	})
	if in.sat { // .cc: write CC.CF
		w.carry = w.carry&^m | cout
	}
}

func addCarry(x, y, cin uint64, nb uint) (uint64, uint64) {
	if nb == 64 {
		s, c := bits.Add64(x, y, cin)
		return s, c
	}
	s := x + y + cin
	return s & (1<<nb - 1), s >> nb & 1
}

func subBorrow(x, y, bin uint64, nb uint) (uint64, uint64) {
	if nb == 64 {
		s, b := bits.Sub64(x, y, bin)
		return s, b
	}
	s := x - y - bin
	return s & (1<<nb - 1), s >> 63 & 1
}
