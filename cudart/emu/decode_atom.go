package emu

import (
	"github.com/ptxprop/ptxprop/ptx"
)

// Atomic operations (inst.sub).
const (
	atAdd uint8 = iota
	atMin
	atMax
	atInc
	atDec
	atAnd
	atOr
	atXor
	atExch
	atCas
)

func (d *decoder) decodeAtom(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	if len(ts) == 0 {
		return in, d.errf("missing type")
	}
	t := ts[len(ts)-1]
	in.t = t
	found := false
	for i, m := range []string{"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"} {
		if pin.HasMod(m) {
			in.sub, found = uint8(i), true
		}
	}
	if !found {
		return in, d.errf("unsupported atomic operation %s", pin.Opcode())
	}
	if n := vecCount(pin); n > 1 {
		return d.decodeAtomVec(in, sc, pin, n)
	}
	first := 0
	var err error
	if pin.Op == "atom" {
		if len(ops) < 3 {
			return in, d.errf("atom takes at least 3 operands")
		}
		if in.d, err = d.dst(sc, ops[0]); err != nil {
			return in, err
		}
		first = 1
	} else {
		in.d = -1
	}
	want := 2
	if in.sub == atCas {
		want = 3
	}
	if pin.HasMod("async") {
		return in, d.errf("%s (asynchronous, completing an mbarrier) is not supported", pin.Opcode())
	}
	if len(ops)-first == want+1 && pin.HasMod("L2::cache_hint") {
		// The cache policy operand only steers the L2 cache.
		if _, err := d.src(sc, ops[len(ops)-1], dtype{'b', 8}); err != nil {
			return in, err
		}
		ops = ops[:len(ops)-1]
	}
	if len(ops)-first != want {
		return in, d.errf("%s takes %d operands", pin.Opcode(), first+want)
	}
	if in.a, in.off, in.space, err = d.address(sc, ops[first], spaceOf(mods)); err != nil {
		return in, err
	}
	if in.b, err = d.src(sc, ops[first+1], t); err != nil {
		return in, err
	}
	if in.sub == atCas {
		if in.c, err = d.src(sc, ops[first+2], t); err != nil {
			return in, err
		}
	}
	in.fn, in.sh = execAtom, shNone
	in.mo = memOrder(pin, true)
	return in, nil
}

// vecCount returns the element count of a .v2, .v4 or .v8 instruction, 1
// for a scalar one.
func vecCount(pin *ptx.Instruction) int {
	for _, m := range pin.Mods {
		switch m {
		case "v2":
			return 2
		case "v4":
			return 4
		case "v8":
			return 8
		}
	}
	return 1
}

// decodeAtomVec decodes the vector atomics of PTX ISA 8.1 (sm_90):
//
//	atom{.sem}{.scope}{.global}.add{.L2::cache_hint}.{v2,v4}.f32 d, [a], b
//	atom{.sem}{.scope}{.global}.op.noftz{.L2::cache_hint}.{v2,v4,v8}.{f16,bf16} d, [a], b
//	atom{.sem}{.scope}{.global}.op.noftz{.L2::cache_hint}.{v2,v4}.{f16x2,bf16x2} d, [a], b
//
// with op add, min or max, and red with the same forms less d. d and b are
// brace-enclosed vectors of n registers. in.vec holds d's slots (atom only)
// then b's; in.d is d's first slot, or -1 for red.
func (d *decoder) decodeAtomVec(in inst, sc *scope, pin *ptx.Instruction, n int) (inst, error) {
	t := in.t
	switch {
	case in.sub != atAdd && in.sub != atMin && in.sub != atMax:
		return in, d.errf("%s: a vector atomic is add, min or max", pin.Opcode())
	case t.k == 'f' && t.n == 4:
		if in.sub != atAdd || n > 4 {
			return in, d.errf("%s: a .f32 vector atomic is add on .v2 or .v4", pin.Opcode())
		}
	case t.k == 'h' || t.k == 'H':
	case t.k == 'x' || t.k == 'X':
		if n > 4 {
			return in, d.errf("%s: a packed vector atomic is .v2 or .v4", pin.Opcode())
		}
	default:
		return in, d.errf("%s: vector atomics take .f32, .f16, .bf16, .f16x2 or .bf16x2, not .%v", pin.Opcode(), t)
	}
	if pin.HasMod("async") {
		return in, d.errf("%s (asynchronous, completing an mbarrier) is not supported", pin.Opcode())
	}
	sp := spaceOf(pin.Mods)
	if sp != spGlobal && sp != spGeneric {
		return in, d.errf("%s: vector atomics address global memory only", pin.Opcode())
	}
	ops := pin.Operands
	first := 0
	if pin.Op == "atom" {
		first = 1
	}
	if len(ops)-first == 3 && pin.HasMod("L2::cache_hint") {
		// The cache policy operand only steers the L2 cache.
		if _, err := d.src(sc, ops[len(ops)-1], dtype{'b', 8}); err != nil {
			return in, err
		}
		ops = ops[:len(ops)-1]
	}
	if len(ops)-first != 2 {
		return in, d.errf("%s takes %d operands", pin.Opcode(), first+2)
	}
	vector := func(o ptx.Operand, what string) ([]ptx.Operand, error) {
		if o.Kind != ptx.Vector || len(o.Elems) != n {
			return nil, d.errf("%s: %s must be a vector of %d registers", pin.Opcode(), what, n)
		}
		return o.Elems, nil
	}
	var err error
	if first == 1 {
		ds, err := vector(ops[0], "the destination")
		if err != nil {
			return in, err
		}
		for _, o := range ds {
			s, err := d.dst(sc, o)
			if err != nil {
				return in, err
			}
			in.vec = append(in.vec, s)
		}
		in.d = in.vec[0]
	}
	if in.a, in.off, in.space, err = d.address(sc, ops[first], sp); err != nil {
		return in, err
	}
	bs, err := vector(ops[first+1], "the operand")
	if err != nil {
		return in, err
	}
	for _, o := range bs {
		s, err := d.src(sc, o, t)
		if err != nil {
			return in, err
		}
		in.vec = append(in.vec, s)
	}
	in.fn, in.sh = execAtomVec, shNone
	in.mo = memOrder(pin, true)
	return in, nil
}
