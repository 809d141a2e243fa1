package emu

import (
	"strings"

	"github.com/ptxprop/ptxprop/ptx"
)

func (d *decoder) decodeMov(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	t, err := d.typedOps(pin, 2)
	if err != nil {
		return in, err
	}
	in.t = t
	if t.k == 'p' {
		if in.d, err = d.predDst(sc, ops[0]); err != nil {
			return in, err
		}
		if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
			return in, err
		}
		in.fn, in.sh = execPredMov, shPredOnly
		return in, nil
	}
	if ops[0].Kind == ptx.Vector || ops[1].Kind == ptx.Vector {
		return d.decodePack(in, sc, ops)
	}
	if ops[1].Kind == ptx.Name && isClock(ops[1].Name) {
		if err := d.dest(&in, sc, ops[0]); err != nil {
			return in, err
		}
		in.sub = clockKind(ops[1].Name)
		in.fn, in.sh = execClock, shNone
		return in, nil
	}
	if err := d.dest(&in, sc, ops[0]); err != nil {
		return in, err
	}
	if err := d.sources(&in, sc, ops, t, 1); err != nil {
		return in, err
	}
	in.fn = execMov
	return in, nil
}

// decodePack handles mov with a vector operand: pack or unpack.
func (d *decoder) decodePack(in inst, sc *scope, ops []ptx.Operand) (inst, error) {
	var err error
	t := in.t
	if ops[1].Kind == ptx.Vector { // pack: mov.b64 d, {a, b}
		n := len(ops[1].Elems)
		if int(t.n)%n != 0 {
			return in, d.errf("cannot pack %d values into .%v", n, t)
		}
		et := dtype{'b', t.n / uint8(n)}
		for _, o := range ops[1].Elems {
			s, err := d.src(sc, o, et)
			if err != nil {
				return in, err
			}
			in.vec = append(in.vec, s)
		}
		if in.d, err = d.dst(sc, ops[0]); err != nil {
			return in, err
		}
		in.t2 = et
		in.fn, in.sh = execPack, shPack
		return in, nil
	}
	n := len(ops[0].Elems)
	if int(t.n)%n != 0 {
		return in, d.errf("cannot unpack .%v into %d values", t, n)
	}
	for _, o := range ops[0].Elems {
		s, err := d.dst(sc, o)
		if err != nil {
			return in, err
		}
		in.vec = append(in.vec, s)
	}
	if in.a, err = d.src(sc, ops[1], t); err != nil {
		return in, err
	}
	in.t2 = dtype{'b', t.n / uint8(n)}
	in.fn, in.sh = execUnpack, shUnpack
	return in, nil
}

func isClock(name string) bool {
	return strings.HasPrefix(name, "%clock") || strings.HasPrefix(name, "%globaltimer")
}

func clockKind(name string) uint8 {
	switch name {
	case "%clock_hi":
		return 1
	case "%globaltimer_hi":
		return 1
	}
	return 0
}

func (d *decoder) decodeCvta(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	t, err := d.typedOps(pin, 2)
	if err != nil {
		return in, err
	}
	in.t = t
	sp := spaceOf(pin.Mods)
	if sp == spGeneric {
		return in, d.errf("cvta without a state space")
	}
	if err := d.dest(&in, sc, ops[0]); err != nil {
		return in, err
	}
	// A variable operand is taken at its address in its own space.
	if err := d.sources(&in, sc, ops, t, 1); err != nil {
		return in, err
	}
	window := symbol{space: sp}.generic()
	if pin.HasMod("to") {
		in.f1 = func(a uint64) uint64 { return t.trunc(a - window) }
	} else {
		in.f1 = func(a uint64) uint64 { return t.trunc(a + window) }
	}
	in.fn = exec1
	return in, nil
}

func (d *decoder) decodeIsspacep(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if err := d.nops(pin, 2); err != nil {
		return in, err
	}
	sp := spaceOf(pin.Mods)
	var err error
	if in.d, err = d.predDst(sc, ops[0]); err != nil {
		return in, err
	}
	if in.a, err = d.src(sc, ops[1], dtype{'u', 8}); err != nil {
		return in, err
	}
	in.cmp = func(a, _ uint64) bool { s, _ := resolve(spGeneric, a); return s == sp }
	in.fn, in.sh = execPredTest, shPredDst
	return in, nil
}

// decodeCreatepolicy gives the cache policy a constant: the emulator has
// no cache.
func (d *decoder) decodeCreatepolicy(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	if len(pin.Operands) == 0 {
		return in, d.unsupported(pin)
	}
	if err := d.dest(&in, sc, pin.Operands[0]); err != nil {
		return in, err
	}
	in.a = d.constSlot(0)
	in.fn = execMov
	in.t = dtype{'b', 8}
	return in, nil
}
