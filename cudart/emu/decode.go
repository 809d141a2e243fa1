package emu

import (
	"github.com/ptxprop/ptxprop/ptx"
)

// A decodeFn turns one parsed instruction into its executable form. in
// arrives with the guard resolved and every slot unset (-1).
type decodeFn func(d *decoder, in inst, sc *scope, pin *ptx.Instruction) (inst, error)

// decoders maps each supported opcode to its decoder. An opcode the PTX ISA
// defines but this table lacks is rejected at load time, naming the line.
var decoders = map[string]decodeFn{}

func init() {
	add := func(f decodeFn, ops ...string) {
		for _, op := range ops {
			decoders[op] = f
		}
	}
	// Data movement and conversion.
	add((*decoder).decodeMov, "mov")
	add((*decoder).decodeCvta, "cvta")
	add((*decoder).decodeIsspacep, "isspacep")
	add((*decoder).decodeCvt, "cvt")
	// Memory.
	add((*decoder).decodeLdSt, "ld", "ldu", "st")
	add((*decoder).decodeCpAsync, "cp")
	add((*decoder).decodeLdmatrix, "ldmatrix")
	add((*decoder).decodeAtom, "atom", "red")
	// Comparison and selection.
	add((*decoder).decodeSetp, "setp")
	add((*decoder).decodeSet, "set")
	add((*decoder).decodeSelp, "selp")
	add((*decoder).decodeSlct, "slct")
	// Logic (predicate or integer), integer and floating-point arithmetic.
	add((*decoder).decodeLogic, "and", "or", "xor", "not", "cnot")
	add((*decoder).decodeArith, "add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max",
		"popc", "clz", "brev", "bfind", "shl", "shr", "bfe", "bfi", "prmt", "lop3", "shf",
		"sad", "mul24", "mad24", "addc", "subc", "madc", "copysign", "dp4a", "dp2a",
		"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "testp")
	// Control flow.
	add((*decoder).decodeBra, "bra")
	add((*decoder).decodeBrx, "brx")
	add((*decoder).decodeExit, "exit")
	add((*decoder).decodeRet, "ret")
	add((*decoder).decodeCall, "call")
	add((*decoder).decodeTrap, "trap", "brkpt")
	// Barriers and warp-synchronous operations.
	add((*decoder).decodeBarrier, "bar", "barrier")
	add((*decoder).decodeShfl, "shfl")
	add((*decoder).decodeVote, "vote")
	add((*decoder).decodeMatch, "match")
	add((*decoder).decodeRedux, "redux")
	add((*decoder).decodeElect, "elect")
	add((*decoder).decodeActivemask, "activemask")
	// Hints and operations without an effect the emulator can observe.
	add((*decoder).decodeFence, "membar", "fence")
	add((*decoder).decodeNop, "prefetch", "prefetchu", "nanosleep", "pmevent", "griddepcontrol",
		"discard", "applypriority", "setmaxnreg")
	add((*decoder).decodeCreatepolicy, "createpolicy")
}

func (d *decoder) decode(pin *ptx.Instruction, sc *scope) (in inst, err error) {
	d.curLine, d.curText = pin.Line, pin.String()
	in = inst{kind: kOp, guard: -1, d: -1, a: -1, b: -1, c: -1, e: -1, d2: -1, line: int32(pin.Line), src: pin}
	if pin.Guard != nil {
		in.guard, _, err = d.predSrc(sc, ptx.Operand{Kind: ptx.Name, Name: pin.Guard.Pred})
		if err != nil {
			return in, err
		}
		in.gneg = pin.Guard.Neg
	}
	if f, ok := decoders[pin.Op]; ok {
		for _, m := range pin.Mods {
			if _, ok := parseType(m); !ok && ptx.IsType(m) {
				return in, d.errf("%s: type .%s is not supported", pin.Opcode(), m)
			}
		}
		return f(d, in, sc, pin)
	}
	if ptx.IsOpcode(pin.Op) {
		return in, d.unsupported(pin)
	}
	return in, d.errf("unknown instruction %s", pin.Op)
}

// Helpers shared by the decoders.

// nops checks that pin has one of the operand counts n.
func (d *decoder) nops(pin *ptx.Instruction, n ...int) error {
	for _, k := range n {
		if len(pin.Operands) == k {
			return nil
		}
	}
	return d.errf("%s takes %v operands, has %d", pin.Op, n, len(pin.Operands))
}

// lastType returns the last type modifier of pin (the operand type).
func (d *decoder) lastType(pin *ptx.Instruction) (dtype, error) {
	ts := typesOf(pin.Mods)
	if len(ts) == 0 {
		return dtype{}, d.errf("missing type")
	}
	return ts[len(ts)-1], nil
}

// sources resolves value operands ops[from:] of type t into in.a, in.b,
// in.c, in.e (as many as given).
func (d *decoder) sources(in *inst, sc *scope, ops []ptx.Operand, t dtype, from int) error {
	slots := []*int32{&in.a, &in.b, &in.c, &in.e}
	for i, o := range ops[from:] {
		if i >= len(slots) {
			return d.errf("too many operands")
		}
		s, err := d.src(sc, o, t)
		if err != nil {
			return err
		}
		*slots[i] = s
	}
	return nil
}

// dest resolves the destination register operand o into in.d.
func (d *decoder) dest(in *inst, sc *scope, o ptx.Operand) error {
	s, err := d.dst(sc, o)
	in.d = s
	return err
}

func (d *decoder) unsupported(pin *ptx.Instruction) error {
	return d.errf("unsupported instruction %s", pin.Opcode())
}

func (d *decoder) decodeNop(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	in.fn, in.sh = execNop, shNone
	return in, nil
}
