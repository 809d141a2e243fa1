package emu

import (
	"math"
	"math/bits"

	"github.com/ptxprop/ptxprop/ptx"
)

func (d *decoder) decodeArith(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods, op := pin.Operands, pin.Mods, pin.Op
	ts := typesOf(mods)
	if len(ts) == 0 {
		return in, d.errf("missing type")
	}
	t := ts[len(ts)-1]
	in.t = t
	switch op {
	case "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "testp", "copysign":
		return d.decodeFloat(in, sc, pin, t)
	}
	if t.isFloat() {
		return d.decodeFloat(in, sc, pin, t)
	}
	if len(ops) < 2 {
		return in, d.errf("%s needs operands", op)
	}
	var err error
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	srcs := ops[1:]
	slots := []*int32{&in.a, &in.b, &in.c, &in.e}
	if len(srcs) > len(slots) {
		return in, d.errf("too many operands")
	}
	u32 := dtype{'u', 4}
	srcType := func(i int) dtype {
		switch op {
		case "shl", "shr":
			if i == 1 {
				return u32
			}
		case "bfe":
			if i > 0 {
				return u32
			}
		case "bfi":
			if i > 1 {
				return u32
			}
		case "mad", "madc":
			if i == 2 && pin.HasMod("wide") {
				return dtype{t.k, t.n * 2}
			}
		case "dp4a", "dp2a":
			return dtype{ts[min(i, len(ts)-1)].k, 4}
		case "sad":
			if i == 2 {
				return dtype{t.k, t.n}
			}
		}
		return t
	}
	for i, o := range srcs {
		if op == "lop3" && i == 3 {
			continue
		}
		if *slots[i], err = d.src(sc, o, srcType(i)); err != nil {
			return in, err
		}
	}
	want := map[string]int{"abs": 1, "neg": 1, "popc": 1, "clz": 1, "brev": 1, "bfind": 1, "not": 1, "cnot": 1,
		"add": 2, "sub": 2, "mul": 2, "div": 2, "rem": 2, "min": 2, "max": 2, "shl": 2, "shr": 2, "and": 2, "or": 2, "xor": 2,
		"mul24": 2, "addc": 2, "subc": 2, "mad": 3, "madc": 3, "bfe": 3, "prmt": 3, "shf": 3, "sad": 3, "mad24": 3,
		"dp4a": 3, "dp2a": 3, "bfi": 4, "lop3": 4}[op]
	if len(srcs) != want {
		return in, d.errf("%s takes %d source operands, has %d", op, want, len(srcs))
	}
	nb := t.bits()
	wide := dtype{t.k, t.n * 2}
	hi, isWide := pin.HasMod("hi"), pin.HasMod("wide")
	cc := pin.HasMod("cc")
	in.fn = exec2
	switch op {
	case "add", "sub", "addc", "subc":
		if cc || op == "addc" || op == "subc" {
			in.sub, in.sat, in.fn = ccAdd, cc, execCarry
			if op == "sub" || op == "subc" {
				in.sub = ccSub
			}
			if op == "addc" || op == "subc" {
				in.mode = 1
			}
			return in, nil
		}
		neg := op == "sub"
		if pin.HasMod("sat") {
			in.f2 = func(a, b uint64) uint64 {
				x, y := int64(int32(a)), int64(int32(b))
				if neg {
					y = -y
				}
				return uint64(uint32(int32(max(math.MinInt32, min(math.MaxInt32, x+y)))))
			}
			return in, nil
		}
		if neg {
			in.f2 = func(a, b uint64) uint64 { return t.trunc(a - b) }
		} else {
			in.f2 = func(a, b uint64) uint64 { return t.trunc(a + b) }
		}
	case "mul", "mul24":
		if op == "mul24" {
			in.f2 = func(a, b uint64) uint64 {
				x, y := dtype{t.k, 3}.ext24(a), dtype{t.k, 3}.ext24(b)
				p := x * y
				if hi {
					return uint64(uint32(p >> 16))
				}
				return uint64(uint32(p))
			}
			return in, nil
		}
		switch {
		case isWide:
			in.f2 = func(a, b uint64) uint64 { return wide.trunc(t.ext(a) * t.ext(b)) }
		case hi:
			in.f2 = func(a, b uint64) uint64 { return mulHi(t, a, b) }
		default:
			in.f2 = func(a, b uint64) uint64 { return t.trunc(a * b) }
		}
	case "mad", "mad24", "madc":
		if cc || op == "madc" {
			in.sub, in.sat, in.fn = ccMadLo, cc, execCarry
			if hi {
				in.sub = ccMadHi
			}
			if op == "madc" {
				in.mode = 1
			}
			return in, nil
		}
		in.fn = exec3
		switch {
		case op == "mad24":
			in.f3 = func(a, b, c uint64) uint64 {
				p := dtype{t.k, 3}.ext24(a) * dtype{t.k, 3}.ext24(b)
				if hi {
					p >>= 16
				}
				return uint64(uint32(p + c))
			}
		case isWide:
			in.f3 = func(a, b, c uint64) uint64 { return wide.trunc(t.ext(a)*t.ext(b) + c) }
		case hi:
			if pin.HasMod("sat") {
				in.f3 = func(a, b, c uint64) uint64 {
					s := int64(int32(mulHi(t, a, b))) + int64(int32(c))
					return uint64(uint32(int32(max(math.MinInt32, min(math.MaxInt32, s)))))
				}
			} else {
				in.f3 = func(a, b, c uint64) uint64 { return t.trunc(mulHi(t, a, b) + c) }
			}
		default:
			in.f3 = func(a, b, c uint64) uint64 { return t.trunc(a*b + c) }
		}
	case "div":
		in.f2 = func(a, b uint64) uint64 {
			if t.trunc(b) == 0 {
				return t.mask() // unspecified by the PTX ISA; all ones, as NVIDIA GPUs return
			}
			if t.signed() {
				return t.trunc(uint64(int64(t.ext(a)) / int64(t.ext(b))))
			}
			return t.trunc(a) / t.trunc(b)
		}
	case "rem":
		in.f2 = func(a, b uint64) uint64 {
			if t.trunc(b) == 0 {
				return t.trunc(a) // unspecified by the PTX ISA
			}
			if t.signed() {
				return t.trunc(uint64(int64(t.ext(a)) % int64(t.ext(b))))
			}
			return t.trunc(a) % t.trunc(b)
		}
	case "min", "max":
		relu := pin.HasMod("relu")
		isMax := op == "max"
		in.f2 = func(a, b uint64) uint64 {
			r := minInt(t, a, b)
			if isMax {
				r = maxInt(t, a, b)
			}
			if relu && int64(t.ext(r)) < 0 {
				return 0
			}
			return r
		}
	case "shl":
		in.f2 = func(a, b uint64) uint64 {
			if uint32(b) >= uint32(nb) {
				return 0
			}
			return t.trunc(a << uint32(b))
		}
	case "shr":
		in.f2 = func(a, b uint64) uint64 {
			s := uint(min(uint32(b), uint32(nb)))
			if t.signed() {
				if s >= nb {
					s = nb - 1
				}
				return t.trunc(uint64(int64(t.ext(a)) >> s))
			}
			if s >= nb {
				return 0
			}
			return t.trunc(a) >> s
		}
	case "and":
		in.f2 = func(a, b uint64) uint64 { return t.trunc(a & b) }
	case "or":
		in.f2 = func(a, b uint64) uint64 { return t.trunc(a | b) }
	case "xor":
		in.f2 = func(a, b uint64) uint64 { return t.trunc(a ^ b) }
	default:
		return d.decodeBitOps(in, sc, pin, t)
	}
	if fn := fastInt(op, t, isWide); fn != nil && !hi && !pin.HasMod("sat") {
		in.fn = fn
	}
	return in, nil
}

// ext24 sign- or zero-extends the low 24 bits.
func (t dtype) ext24(v uint64) uint64 {
	if t.k == 's' {
		return uint64(int64(v<<40) >> 40)
	}
	return v & 0xFFFFFF
}

func (d *decoder) decodeBitOps(in inst, sc *scope, pin *ptx.Instruction, t dtype) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	nb := t.bits()
	switch pin.Op {
	case "abs":
		in.fn, in.f1 = exec1, func(a uint64) uint64 {
			if int64(t.ext(a)) < 0 {
				return t.trunc(-t.ext(a))
			}
			return t.trunc(a)
		}
	case "neg":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return t.trunc(-a) }
	case "not":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return t.trunc(^a) }
	case "cnot":
		in.fn, in.f1 = exec1, func(a uint64) uint64 {
			if t.trunc(a) == 0 {
				return 1
			}
			return 0
		}
	case "popc":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return uint64(bits.OnesCount64(t.trunc(a))) }
	case "clz":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return uint64(bits.LeadingZeros64(t.trunc(a)) - int(64-nb)) }
	case "brev":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return bits.Reverse64(a) >> (64 - nb) }
	case "bfind":
		shift := pin.HasMod("shiftamt")
		in.fn, in.f1 = exec1, func(a uint64) uint64 {
			v := t.trunc(a)
			if t.signed() && int64(t.ext(a)) < 0 {
				v = t.trunc(^a)
			}
			if v == 0 {
				return 0xFFFFFFFF
			}
			pos := uint64(63 - bits.LeadingZeros64(v))
			if shift {
				return uint64(nb-1) - pos
			}
			return pos
		}
	case "bfe":
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 {
			msb := uint64(nb - 1)
			pos, ln := b&0xFF, c&0xFF
			var sbit uint64
			if t.signed() && ln != 0 {
				sbit = a >> min(pos+ln-1, msb) & 1
			}
			var r uint64
			for i := uint64(0); i <= msb; i++ {
				bit := sbit
				if i < ln && pos+i <= msb {
					bit = a >> (pos + i) & 1
				}
				r |= bit << i
			}
			return r
		}
	case "bfi":
		in.fn = execBfi
	case "prmt":
		mode := ""
		for _, m := range []string{"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"} {
			if pin.HasMod(m) {
				mode = m
			}
		}
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 { return prmt(uint32(a), uint32(b), uint32(c), mode) }
	case "lop3":
		if len(ops) != 5 || ops[4].Kind != ptx.Int {
			return in, d.errf("lop3 needs an immediate truth table")
		}
		lut := uint64(ops[4].Int & 0xFF)
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 {
			var r uint64
			for i := 0; i < 8; i++ {
				if lut>>i&1 == 0 {
					continue
				}
				x, y, z := a, b, c
				if i&4 == 0 {
					x = ^a
				}
				if i&2 == 0 {
					y = ^b
				}
				if i&1 == 0 {
					z = ^c
				}
				r |= x & y & z
			}
			return uint64(uint32(r))
		}
	case "shf":
		left, clamp := pin.HasMod("l"), pin.HasMod("clamp")
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 {
			n := uint32(c)
			if clamp {
				n = min(n, 32)
			} else {
				n &= 31
			}
			v := uint64(uint32(b))<<32 | uint64(uint32(a))
			if left {
				return uint64(uint32((v << n) >> 32))
			}
			return uint64(uint32(v >> n))
		}
	case "sad":
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 {
			x, y := t.ext(a), t.ext(b)
			var diff uint64
			if t.signed() && int64(x) < int64(y) || !t.signed() && x < y {
				diff = y - x
			} else {
				diff = x - y
			}
			return t.trunc(c + diff)
		}
	case "dp4a", "dp2a":
		ts := typesOf(mods)
		if len(ts) != 2 {
			return in, d.errf("%s needs two types", pin.Op)
		}
		as, bs := ts[0].signed(), ts[1].signed()
		hi := pin.HasMod("hi")
		four := pin.Op == "dp4a"
		in.fn, in.f3 = exec3, func(a, b, c uint64) uint64 {
			sum := int64(int32(c))
			if !as && !bs {
				sum = int64(uint32(c))
			}
			byteOf := func(v uint64, i int, s bool) int64 {
				x := v >> (8 * i) & 0xFF
				if s {
					return int64(int8(x))
				}
				return int64(x)
			}
			halfOf := func(v uint64, i int, s bool) int64 {
				x := v >> (16 * i) & 0xFFFF
				if s {
					return int64(int16(x))
				}
				return int64(x)
			}
			if four {
				for i := 0; i < 4; i++ {
					sum += byteOf(a, i, as) * byteOf(b, i, bs)
				}
			} else {
				off := 0
				if hi {
					off = 2
				}
				for i := 0; i < 2; i++ {
					sum += halfOf(a, i, as) * byteOf(b, off+i, bs)
				}
			}
			return uint64(uint32(sum))
		}
	default:
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	return in, nil
}
