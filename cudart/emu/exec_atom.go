package emu

import (
	"fmt"
	"math"

	"github.com/ptxprop/ptxprop/cudart"
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
	w.deferPubs()
	defer w.flushPubs()
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
	if t.k == 'x' || t.k == 'X' {
		// A packed pair: the operation applies to each half (PTX ISA, atom:
		// atomicity holds for each scalar element).
		h := dtype{'h', 2}
		if t.k == 'X' {
			h.k = 'H'
		}
		lo, _ := atomicOp(in, h, old&0xffff, b&0xffff, 0, space)
		hi, _ := atomicOp(in, h, old>>16&0xffff, b>>16&0xffff, 0, space)
		return lo | hi<<16, true
	}
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
		if t.k == 'f' || t.k == 'h' || t.k == 'H' {
			return minMaxFloat(t, old, b, false, false), true
		}
		return minInt(t, old, b), true
	case atMax:
		if t.k == 'f' || t.k == 'h' || t.k == 'H' {
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

// execAtomVec runs a vector atom or red (see decodeAtomVec). Each element
// is an independent atomic on its own address, the i-th at a+i·size, with
// the scalar atomic's effects on ordering and race checks; the i-th
// destination receives the i-th old value (PTX ISA, atom: "atomicity is
// guaranteed separately for each of the individual scalar elements").
// The whole vector must be aligned to its size and lie in global memory.
func execAtomVec(w *warp, in *inst, m uint32) {
	n := len(in.vec)
	if in.d >= 0 {
		n /= 2
	}
	dst, src := in.vec[:len(in.vec)-n], in.vec[len(in.vec)-n:]
	t := in.t
	size := int(t.n)
	total := uint64(n * size)
	base := w.r(in.a)
	if w.l.undefOn {
		w.checkDefined(in, in.a, m, "applies an atomic to an address")
		for _, s := range src {
			w.checkDefined(in, s, m, "applies an atomic with an operand")
		}
	}
	var bs [8]uint64
	w.deferPubs()
	defer w.flushPubs()
	for _, l := range w.l.laneOrder(m) {
		// Every operand is read before any destination is written: d and b
		// may name the same registers.
		for i, s := range src {
			bs[i] = t.trunc(w.r(s)[l])
		}
		addr := base[l] + uint64(in.off)
		if addr%total != 0 {
			w.misaligned(in, l, in.space, addr, int(total))
			return
		}
		if sp, _ := resolve(in.space, addr); sp != spGlobal {
			w.memFault(cudart.ErrLaunch, in, l, sp, addr, int(total),
				fmt.Sprintf("%s on %s memory is not allowed: vector atomics address global memory only", in.src.Opcode(), spaceNames[sp]))
			return
		}
		for i := range src {
			b := bs[i]
			old, ok := w.atomicRMW(in, l, in.space, addr+uint64(i*size), size, func(old uint64, space uint8) (uint64, bool) {
				return atomicOp(in, t, old, b, 0, space)
			})
			if !ok {
				return
			}
			if len(dst) > 0 {
				w.regs[dst[i]*32+int32(l)] = t.ext(old)
				if w.l.undefOn {
					w.setUndef(dst[i], l, false)
				}
			}
		}
	}
}
