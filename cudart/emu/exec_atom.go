package emu

import (
	"math"
)

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
