package emu

import (
	"github.com/ptxprop/ptxprop/ptx"
)

var cmpOps = []string{"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}

// comparison sets in.cmp from pin's comparison modifier on operands of type
// t, and in.bop from its .and, .or or .xor combining modifier.
func (d *decoder) comparison(in *inst, pin *ptx.Instruction, t dtype) error {
	var cmpName string
	for _, m := range pin.Mods {
		for _, c := range cmpOps {
			if m == c {
				cmpName = m
			}
		}
		switch m {
		case "and":
			in.bop = 1
		case "or":
			in.bop = 2
		case "xor":
			in.bop = 3
		}
	}
	if t.isFloat() {
		in.cmp = floatCmp(cmpName, t, pin.HasMod("ftz"))
	} else {
		in.cmp = intCmp(cmpName, t)
	}
	if in.cmp == nil {
		return d.errf("unsupported comparison in %s", pin.Opcode())
	}
	return nil
}

func (d *decoder) decodeSetp(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	if len(ts) == 0 || len(ops) < 3 || len(ops) > 4 {
		return in, d.errf("setp needs a type and 3 or 4 operands")
	}
	t := ts[len(ts)-1]
	in.t = t
	if t.k == 'x' || t.k == 'X' {
		return in, d.errf("setp on packed halves is not supported")
	}
	if err := d.comparison(&in, pin, t); err != nil {
		return in, err
	}
	var err error
	if ops[0].Kind == ptx.Pair {
		if in.d, err = d.predDst(sc, ops[0].Elems[0]); err != nil {
			return in, err
		}
		if in.d2, err = d.predDst(sc, ops[0].Elems[1]); err != nil {
			return in, err
		}
	} else if in.d, err = d.predDst(sc, ops[0]); err != nil {
		return in, err
	}
	if err = d.sources(&in, sc, ops[:3], t, 1); err != nil {
		return in, err
	}
	if len(ops) == 4 {
		if in.bop == 0 {
			return in, d.errf("setp with a fourth operand needs .and, .or or .xor")
		}
		if in.c, in.cneg, err = d.predSrc(sc, ops[3]); err != nil {
			return in, err
		}
	} else if in.bop != 0 {
		return in, d.errf("setp .%s without a predicate operand", []string{"", "and", "or", "xor"}[in.bop])
	}
	in.fn, in.sh = execSetp, shPredDst
	if c := intCmpCode(pin, t); c != 0 {
		in.fn, in.sub = execSetpInt, c
	}
	return in, nil
}

func (d *decoder) decodeSet(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	if len(ts) != 2 || len(ops) < 3 || len(ops) > 4 {
		return in, d.errf("set needs two types and 3 or 4 operands")
	}
	in.t = ts[0]
	st := ts[1]
	if err := d.comparison(&in, pin, st); err != nil {
		return in, err
	}
	var err error
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	if err = d.sources(&in, sc, ops[:3], st, 1); err != nil {
		return in, err
	}
	if len(ops) == 4 {
		if in.c, in.cneg, err = d.predSrc(sc, ops[3]); err != nil {
			return in, err
		}
	}
	in.fn, in.sh = execSet, shSet
	return in, nil
}

func (d *decoder) decodeSelp(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	t, err := d.typedOps(pin, 4)
	if err != nil {
		return in, err
	}
	in.t = t
	if err := d.dest(&in, sc, ops[0]); err != nil {
		return in, err
	}
	if err = d.sources(&in, sc, ops[:3], t, 1); err != nil {
		return in, err
	}
	if in.c, in.cneg, err = d.predSrc(sc, ops[3]); err != nil {
		return in, err
	}
	in.fn, in.sh = execSelp, shSelp
	return in, nil
}

func (d *decoder) decodeSlct(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	ts := typesOf(pin.Mods)
	if err := d.nops(pin, 4); err != nil || len(ts) != 2 {
		return in, d.errf("slct needs two types and four operands")
	}
	in.t, in.t2 = ts[0], ts[1]
	if err := d.dest(&in, sc, ops[0]); err != nil {
		return in, err
	}
	if err := d.sources(&in, sc, ops, ts[0], 1); err != nil {
		return in, err
	}
	var err error
	if in.c, err = d.src(sc, ops[3], ts[1]); err != nil {
		return in, err
	}
	ftz, ct := pin.HasMod("ftz"), ts[1]
	in.f3 = func(a, b, c uint64) uint64 {
		if ct.k == 'f' {
			x := f32(c)
			if ftz {
				x = ftz32(x)
			}
			if x >= 0 {
				return a
			}
			return b
		}
		if int32(c) >= 0 {
			return a
		}
		return b
	}
	in.fn = exec3
	return in, nil
}

// decodeLogic decodes and/or/xor/not/cnot: on predicates, or as integer
// arithmetic.
func (d *decoder) decodeLogic(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	t, err := d.lastType(pin)
	if err != nil {
		return in, err
	}
	in.t = t
	if t.k == 'p' {
		return d.decodePredLogic(in, sc, pin)
	}
	return d.decodeArith(in, sc, pin)
}

func (d *decoder) decodePredLogic(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	var err error
	if in.d, err = d.predDst(sc, ops[0]); err != nil {
		return in, err
	}
	switch pin.Op {
	case "not", "cnot":
		if len(ops) != 2 {
			return in, d.errf("%s takes 2 operands", pin.Op)
		}
		if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
			return in, err
		}
		in.aneg = !in.aneg
		in.fn, in.sh = execPredMov, shPredOnly
		return in, nil
	}
	if len(ops) != 3 {
		return in, d.errf("%s takes 3 operands", pin.Op)
	}
	if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
		return in, err
	}
	if in.b, in.cneg, err = d.predSrc(sc, ops[2]); err != nil {
		return in, err
	}
	in.bop = map[string]uint8{"and": 1, "or": 2, "xor": 3}[pin.Op]
	in.fn, in.sh = execPredLogic, shPredOnly
	return in, nil
}
