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
	if t.k == 'x' || t.k == 'X' || pin.HasMod("v2") || pin.HasMod("v4") {
		return in, d.errf("vector atomics are not supported")
	}
	found := false
	for i, m := range []string{"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"} {
		if pin.HasMod(m) {
			in.sub, found = uint8(i), true
		}
	}
	if !found {
		return in, d.errf("unsupported atomic operation %s", pin.Opcode())
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
