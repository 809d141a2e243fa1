package emu

import (
	"github.com/ptxprop/ptxprop/ptx"
)

func (d *decoder) decodeCvt(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	if len(ts) != 2 {
		return in, d.errf("cvt needs two types")
	}
	dt, st := ts[0], ts[1]
	in.t, in.t2 = dt, st
	mode, rname, hasRnd := roundingOf(mods)
	intRnd := len(rname) == 3
	ftz, sat, relu := pin.HasMod("ftz"), pin.HasMod("sat"), pin.HasMod("relu")
	satfinite := pin.HasMod("satfinite")
	if satfinite && !satfiniteSupported(dt, st) || pin.HasMod("rna") || dt.k == 'p' || st.k == 'p' {
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	var err error
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	if dt.k == 'x' || dt.k == 'X' { // cvt.rn.f16x2.f32 d, a, b: a in the upper half
		if len(ops) != 3 || st.k != 'f' || st.n != 4 {
			return in, d.errf("unsupported instruction %s", pin.Opcode())
		}
		if in.a, err = d.src(sc, ops[1], st); err != nil {
			return in, err
		}
		if in.b, err = d.src(sc, ops[2], st); err != nil {
			return in, err
		}
		half := dtype{'h', 2}
		if dt.k == 'X' {
			half.k = 'H'
		}
		one := cvtFloatFloat(half, st, mode, false, ftz, sat, relu)
		if satfinite {
			one = satfiniteWrap(half, st, one)
		}
		in.fn, in.f2 = exec2, func(a, b uint64) uint64 { return one(a)<<16 | one(b) }
		return in, nil
	}
	if len(ops) != 2 {
		return in, d.errf("cvt takes 2 operands")
	}
	if in.a, err = d.src(sc, ops[1], st); err != nil {
		return in, err
	}
	in.fn = exec1
	switch {
	case dt.isFloat() && st.isFloat():
		if intRnd && dt != st {
			return in, d.errf("integer rounding between different float types")
		}
		in.f1 = cvtFloatFloat(dt, st, mode, intRnd, ftz, sat, relu)
		if satfinite {
			in.f1 = satfiniteWrap(dt, st, in.f1)
		}
	case st.isFloat():
		if !hasRnd {
			mode = rz
		}
		in.f1 = cvtFloatInt(dt, st, mode, ftz)
	case dt.isFloat():
		in.f1 = cvtIntFloat(dt, st, mode, sat)
	default:
		in.f1 = cvtIntInt(dt, st, sat)
	}
	return in, nil
}
