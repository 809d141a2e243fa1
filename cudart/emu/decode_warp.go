package emu

import (
	"strings"

	"github.com/ptxprop/ptxprop/ptx"
)

func (d *decoder) decodeBarrier(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	var err error
	if pin.HasMod("warp") {
		if len(ops) != 1 {
			return in, d.errf("bar.warp.sync takes 1 operand")
		}
		in.kind, in.sub = kWarpSync, wsBarWarp
		if in.e, err = d.src(sc, ops[0], dtype{'b', 4}); err != nil {
			return in, err
		}
		in.sig = d.sig("bar.warp.sync")
		return in, nil
	}
	in.kind = kBar
	u32 := dtype{'u', 4}
	switch {
	case pin.HasMod("red"):
		// bar.red.popc.u32 d, a{, b}, {!}c  /  bar.red.and.pred p, a{, b}, {!}c
		if len(ops) != 3 && len(ops) != 4 {
			return in, d.errf("bar.red takes 3 or 4 operands")
		}
		switch {
		case pin.HasMod("popc"):
			in.sub = 1
			in.d, err = d.dst(sc, ops[0])
		case pin.HasMod("and"):
			in.sub = 2
			in.d, err = d.predDst(sc, ops[0])
		case pin.HasMod("or"):
			in.sub = 3
			in.d, err = d.predDst(sc, ops[0])
		default:
			return in, d.errf("unsupported bar.red operation")
		}
		if err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], u32); err != nil {
			return in, err
		}
		if len(ops) == 4 {
			if in.b, err = d.src(sc, ops[2], u32); err != nil {
				return in, err
			}
		}
		if in.c, in.cneg, err = d.predSrc(sc, ops[len(ops)-1]); err != nil {
			return in, err
		}
	case pin.HasMod("sync") || pin.HasMod("arrive") || len(mods) == 0 || pin.HasMod("cta") && !pin.HasMod("red"):
		if len(ops) != 1 && len(ops) != 2 {
			return in, d.errf("%s takes 1 or 2 operands", pin.Opcode())
		}
		if in.a, err = d.src(sc, ops[0], u32); err != nil {
			return in, err
		}
		if len(ops) == 2 {
			if in.b, err = d.src(sc, ops[1], u32); err != nil {
				return in, err
			}
		}
		if pin.HasMod("arrive") {
			if in.b < 0 {
				return in, d.errf("bar.arrive needs a thread count")
			}
			in.aneg = true // arrive without waiting
		}
	default:
		return in, d.errf("unsupported barrier %s", pin.Opcode())
	}
	return in, nil
}

func (d *decoder) decodeShfl(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if !pin.HasMod("sync") {
		return in, d.errf("shfl without .sync (pre-Volta shuffle) is not supported")
	}
	if err := d.nops(pin, 5); err != nil {
		return in, err
	}
	in.kind = kWarpSync
	for i, m := range []string{"up", "down", "bfly", "idx"} {
		if pin.HasMod(m) {
			in.sub = wsShflUp + uint8(i)
		}
	}
	if err := d.destOrPair(&in, sc, ops[0]); err != nil {
		return in, err
	}
	if err := d.sources(&in, sc, ops, dtype{'b', 4}, 1); err != nil {
		return in, err
	}
	in.sig = d.sig("shfl." + strings.Join(pin.Mods, "."))
	return in, nil
}

func (d *decoder) decodeVote(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if err := d.nops(pin, 2, 3); err != nil {
		return in, err
	}
	in.kind = kWarpSync
	for i, m := range []string{"all", "any", "uni", "ballot"} {
		if pin.HasMod(m) {
			in.sub = wsVoteAll + uint8(i)
		}
	}
	var err error
	if in.sub == wsVoteBallot {
		err = d.dest(&in, sc, ops[0])
	} else {
		in.d, err = d.predDst(sc, ops[0])
	}
	if err != nil {
		return in, err
	}
	if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
		return in, err
	}
	if err := d.memberMask(&in, sc, ops, 2); err != nil {
		return in, err
	}
	in.sig = d.sig("vote." + strings.Join(pin.Mods, "."))
	return in, nil
}

// pairDest decodes a d|p destination pair into in.d and in.d2.
func (d *decoder) pairDest(in *inst, sc *scope, op ptx.Operand) (err error) {
	if in.d, err = d.dst(sc, op.Elems[0]); err != nil {
		return err
	}
	in.d2, err = d.predDst(sc, op.Elems[1])
	return err
}

// destOrPair decodes the destination operand op, a register or a d|p pair,
// into in.d (and in.d2).
func (d *decoder) destOrPair(in *inst, sc *scope, op ptx.Operand) error {
	if op.Kind == ptx.Pair {
		return d.pairDest(in, sc, op)
	}
	return d.dest(in, sc, op)
}

// valueAndMask decodes the value operand 1 of type t and the member mask
// of a warp-wide op, and signs in as op with pin's modifiers.
func (d *decoder) valueAndMask(in *inst, sc *scope, pin *ptx.Instruction, t dtype, op string) (err error) {
	if in.a, err = d.src(sc, pin.Operands[1], t); err != nil {
		return err
	}
	if err := d.memberMask(in, sc, pin.Operands, 2); err != nil {
		return err
	}
	in.sig = d.sig(op + "." + strings.Join(pin.Mods, "."))
	return nil
}

func (d *decoder) decodeMatch(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	t, err := d.typedOps(pin, 3)
	if err != nil {
		return in, err
	}
	in.kind, in.t, in.sub = kWarpSync, t, wsMatchAny
	if pin.HasMod("all") {
		in.sub = wsMatchAll
	}
	if err := d.destOrPair(&in, sc, ops[0]); err != nil {
		return in, err
	}
	return in, d.valueAndMask(&in, sc, pin, t, "match")
}

func (d *decoder) decodeRedux(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	t, err := d.typedOps(pin, 3)
	if err != nil {
		return in, err
	}
	if t.k == 'f' {
		return in, d.errf("redux.sync on floats is not supported")
	}
	in.kind, in.t, in.sub = kWarpSync, t, wsRedux
	switch {
	case pin.HasMod("add"):
		in.f2 = func(a, b uint64) uint64 { return a + b }
	case pin.HasMod("min"):
		in.f2 = func(a, b uint64) uint64 { return minInt(t, a, b) }
	case pin.HasMod("max"):
		in.f2 = func(a, b uint64) uint64 { return maxInt(t, a, b) }
	case pin.HasMod("and"):
		in.f2 = func(a, b uint64) uint64 { return a & b }
	case pin.HasMod("or"):
		in.f2 = func(a, b uint64) uint64 { return a | b }
	case pin.HasMod("xor"):
		in.f2 = func(a, b uint64) uint64 { return a ^ b }
	default:
		return in, d.unsupported(pin)
	}
	if err := d.dest(&in, sc, ops[0]); err != nil {
		return in, err
	}
	return in, d.valueAndMask(&in, sc, pin, t, "redux")
}

func (d *decoder) decodeElect(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if err := d.nops(pin, 2); err != nil {
		return in, err
	}
	in.kind, in.sub = kWarpSync, wsElect
	var err error
	if ops[0].Kind == ptx.Pair {
		err = d.pairDest(&in, sc, ops[0])
	} else {
		in.d2, err = d.predDst(sc, ops[0])
	}
	if err != nil {
		return in, err
	}
	if err := d.memberMask(&in, sc, ops, 1); err != nil {
		return in, err
	}
	in.sig = d.sig("elect")
	return in, nil
}

func (d *decoder) decodeActivemask(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	if err := d.nops(pin, 1); err != nil {
		return in, err
	}
	if err := d.dest(&in, sc, pin.Operands[0]); err != nil {
		return in, err
	}
	in.fn, in.sh = execActivemask, shNone
	return in, nil
}

// memberMask resolves the membermask operand at ops[i] into in.e.
func (d *decoder) memberMask(in *inst, sc *scope, ops []ptx.Operand, i int) error {
	if len(ops) <= i {
		return d.errf("missing membermask (pre-Volta warp vote is not supported)")
	}
	s, err := d.src(sc, ops[i], dtype{'b', 4})
	in.e = s
	return err
}
