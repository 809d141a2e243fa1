package emu

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/ptxprop/ptxprop/ptx"
)

func minInt(t dtype, a, b uint64) uint64 {
	if t.signed() {
		if int64(t.ext(a)) < int64(t.ext(b)) {
			return t.trunc(a)
		}
		return t.trunc(b)
	}
	if t.trunc(a) < t.trunc(b) {
		return t.trunc(a)
	}
	return t.trunc(b)
}

func maxInt(t dtype, a, b uint64) uint64 {
	if minInt(t, a, b) == t.trunc(a) {
		return t.trunc(b)
	}
	return t.trunc(a)
}

// fval decodes register bits of a float type to float64.
func fval(t dtype, v uint64) float64 {
	switch t.k {
	case 'h':
		return f16ToF64(uint16(v))
	case 'H':
		return bf16ToF64(uint16(v))
	}
	if t.n == 4 {
		return float64(f32(v))
	}
	return math.Float64frombits(v)
}

// fbits encodes an already representable float64 value in type t.
func fbits(t dtype, x float64) uint64 {
	switch t.k {
	case 'h':
		return uint64(f64ToF16(x))
	case 'H':
		return uint64(f64ToBF16(x))
	}
	if t.n == 4 {
		if math.IsNaN(x) {
			return uint64(nan32)
		}
		return uint64(math.Float32bits(float32(x)))
	}
	return canon64(x)
}

// minMaxFloat implements min/max: a NaN operand is ignored unless both are
// NaN (or nanProp, the .NaN modifier); −0 orders below +0.
func minMaxFloat(t dtype, a, b uint64, isMax, nanProp bool) uint64 {
	x, y := fval(t, a), fval(t, b)
	switch {
	case math.IsNaN(x) && math.IsNaN(y), nanProp && (math.IsNaN(x) || math.IsNaN(y)):
		return fbits(t, math.NaN())
	case math.IsNaN(x):
		return b
	case math.IsNaN(y):
		return a
	}
	less := x < y || x == y && math.Signbit(x) && !math.Signbit(y)
	if less != isMax {
		return a
	}
	return b
}

func sat32(b uint32) uint32 {
	x := math.Float32frombits(b)
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 1:
		return math.Float32bits(1)
	}
	return b
}

// f32Unary and friends wrap a float32 operation with .ftz and .sat.
func f32Wrap1(op func(float32) uint32, ftz, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		x := f32(a)
		if ftz {
			x = ftz32(x)
		}
		r := op(x)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func f32Wrap2(op func(x, y float32) uint32, ftz, sat bool) func(uint64, uint64) uint64 {
	if !ftz && !sat {
		return func(a, b uint64) uint64 { return uint64(op(f32(a), f32(b))) }
	}
	return func(a, b uint64) uint64 {
		x, y := f32(a), f32(b)
		if ftz {
			x, y = ftz32(x), ftz32(y)
		}
		r := op(x, y)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func f32Wrap3(op func(x, y, z float32) uint32, ftz, sat bool) func(uint64, uint64, uint64) uint64 {
	return func(a, b, c uint64) uint64 {
		x, y, z := f32(a), f32(b), f32(c)
		if ftz {
			x, y, z = ftz32(x), ftz32(y), ftz32(z)
		}
		r := op(x, y, z)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func canon32(x float32) uint32 {
	if x != x {
		return nan32
	}
	return math.Float32bits(x)
}

// halfWrap applies a float64 operation producing (s, e) to each 16-bit half
// of f16/bf16/f16x2/bf16x2 operands and rounds once.
func halfWrap(t dtype, mode rmode, ftz, sat bool, op func(x []float64) (float64, float64)) func(a, b, c uint64) uint64 {
	halves := 1
	if t.k == 'x' || t.k == 'X' {
		halves = 2
	}
	bf := t.k == 'H' || t.k == 'X'
	dec := f16ToF64
	enc := func(s, e float64) uint16 { return roundF16(s, e, mode) }
	minNormal := 0x1p-14
	if bf {
		dec, minNormal = bf16ToF64, 0x1p-126
		enc = func(s, e float64) uint16 { return roundBF16(s, e, mode) }
	}
	flush := func(x float64) float64 {
		if ftz && math.Abs(x) < minNormal {
			return math.Copysign(0, x)
		}
		return x
	}
	return func(a, b, c uint64) uint64 {
		var out uint64
		var xs [3]float64
		for h := 0; h < halves; h++ {
			sh := uint(16 * h)
			xs[0], xs[1], xs[2] = flush(dec(uint16(a>>sh))), flush(dec(uint16(b>>sh))), flush(dec(uint16(c>>sh)))
			s, e := op(xs[:])
			r := flush(dec(enc(s, e)))
			if math.IsNaN(s) {
				r = math.NaN()
			}
			if sat {
				r = math.Max(0, math.Min(1, r))
				if math.IsNaN(s) {
					r = 0
				}
			}
			var bitsOut uint16
			if bf {
				bitsOut = f64ToBF16(r)
			} else {
				bitsOut = f64ToF16(r)
			}
			out |= uint64(bitsOut) << sh
		}
		return out
	}
}

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
	return in, nil
}

// ext24 sign- or zero-extends the low 24 bits.
func (t dtype) ext24(v uint64) uint64 {
	if t.k == 's' {
		return uint64(int64(v<<40) >> 40)
	}
	return v & 0xFFFFFF
}

func mulHi(t dtype, a, b uint64) uint64 {
	nb := t.bits()
	if nb == 64 {
		if t.signed() {
			hi, _ := bits.Mul64(a, b)
			if int64(a) < 0 {
				hi -= b
			}
			if int64(b) < 0 {
				hi -= a
			}
			return hi
		}
		hi, _ := bits.Mul64(a, b)
		return hi
	}
	return t.trunc((t.ext(a) * t.ext(b)) >> nb)
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

func prmt(a, b, c uint32, mode string) uint64 {
	x := uint64(b)<<32 | uint64(a)
	byteAt := func(i uint32) uint32 { return uint32(x>>(8*(i&7))) & 0xFF }
	var sel [4]uint32
	switch mode {
	case "":
		var r uint32
		for i := 0; i < 4; i++ {
			s := c >> (4 * i) & 0xF
			v := byteAt(s & 7)
			if s&8 != 0 {
				v = 0
				if v2 := byteAt(s & 7); v2&0x80 != 0 {
					v = 0xFF
				}
			}
			r |= v << (8 * i)
		}
		return uint64(r)
	case "f4e":
		n := c & 3
		sel = [4]uint32{n, n + 1, n + 2, n + 3}
	case "b4e":
		n := c & 3
		sel = [4]uint32{n, (n - 1) & 7, (n - 2) & 7, (n - 3) & 7}
	case "rc8":
		n := c & 3
		sel = [4]uint32{n, n, n, n}
	case "ecl":
		n := c & 3
		sel = [4]uint32{n, max(n, 1), max(n, 2), 3}
	case "ecr":
		n := c & 3
		sel = [4]uint32{0, min(n, 1), min(n, 2), n}
	case "rc16":
		n := c & 1
		sel = [4]uint32{2 * n, 2*n + 1, 2 * n, 2*n + 1}
	}
	var r uint32
	for i, s := range sel {
		r |= byteAt(s) << (8 * i)
	}
	return uint64(r)
}

// decodeFloat handles floating-point arithmetic.
func (d *decoder) decodeFloat(in inst, sc *scope, pin *ptx.Instruction, t dtype) (inst, error) {
	ops, mods, op := pin.Operands, pin.Mods, pin.Op
	mode, _, hasRnd := roundingOf(mods)
	ftz, sat := pin.HasMod("ftz"), pin.HasMod("sat")
	approx, full := pin.HasMod("approx"), pin.HasMod("full")
	in.mode, in.ftz, in.sat = mode, ftz, sat
	var err error
	if op == "testp" {
		if len(ops) != 2 {
			return in, d.errf("testp takes 2 operands")
		}
		if in.d, err = d.predDst(sc, ops[0]); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], t); err != nil {
			return in, err
		}
		var test func(float64) bool
		switch {
		case pin.HasMod("finite"):
			test = func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
		case pin.HasMod("infinite"):
			test = func(x float64) bool { return math.IsInf(x, 0) }
		case pin.HasMod("number"):
			test = func(x float64) bool { return !math.IsNaN(x) }
		case pin.HasMod("notanumber"):
			test = math.IsNaN
		case pin.HasMod("normal"):
			test = func(x float64) bool { return isNormal(t, x) }
		case pin.HasMod("subnormal"):
			test = func(x float64) bool { return x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) && !isNormal(t, x) }
		default:
			return in, d.errf("unsupported testp")
		}
		in.cmp = func(a, _ uint64) bool { return test(fval(t, a)) }
		in.fn, in.sh = execPredTest, shPredDst
		return in, nil
	}
	if len(ops) < 2 {
		return in, d.errf("%s needs operands", op)
	}
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	slots := []*int32{&in.a, &in.b, &in.c}
	if len(ops)-1 > len(slots) {
		return in, d.errf("too many operands")
	}
	for i, o := range ops[1:] {
		if *slots[i], err = d.src(sc, o, t); err != nil {
			return in, err
		}
	}
	nsrc := len(ops) - 1
	want := map[string]int{"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "min": 2, "max": 2, "copysign": 2,
		"abs": 1, "neg": 1, "rcp": 1, "sqrt": 1, "rsqrt": 1, "ex2": 1, "lg2": 1, "sin": 1, "cos": 1, "tanh": 1}[op]
	if nsrc != want {
		return in, d.errf("%s takes %d source operands, has %d", op, want, nsrc)
	}
	half := t.k == 'h' || t.k == 'H' || t.k == 'x' || t.k == 'X'
	f64 := t.k == 'f' && t.n == 8
	switch op {
	case "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh":
		if approx || op == "rsqrt" || op == "ex2" || op == "lg2" || op == "sin" || op == "cos" || op == "tanh" {
			if half && op != "ex2" && op != "tanh" || f64 && op != "rcp" && op != "rsqrt" {
				return in, d.errf("unsupported instruction %s", pin.Opcode())
			}
			in.sub = map[string]uint8{"rcp": apRcp, "sqrt": apSqrt, "rsqrt": apRsqrt, "ex2": apEx2, "lg2": apLg2, "sin": apSin, "cos": apCos, "tanh": apTanh}[op]
			in.fn = execApprox
			return in, nil
		}
		if !hasRnd {
			return in, d.errf("%s needs .approx or a rounding modifier", pin.Opcode())
		}
		if half {
			return in, d.errf("unsupported instruction %s", pin.Opcode())
		}
		in.fn = exec1
		switch {
		case op == "rcp" && f64:
			in.f1 = func(a uint64) uint64 { return canon64(div64(1, math.Float64frombits(a), mode)) }
		case op == "sqrt" && f64:
			in.f1 = func(a uint64) uint64 { return canon64(sqrt64(math.Float64frombits(a), mode)) }
		case op == "rcp":
			in.f1 = f32Wrap1(func(x float32) uint32 { return div32(1, x, mode) }, ftz, false)
		default:
			in.f1 = f32Wrap1(func(x float32) uint32 { return sqrt32(x, mode) }, ftz, false)
		}
		return in, nil
	case "div":
		if approx || full {
			if f64 || half {
				return in, d.errf("unsupported instruction %s", pin.Opcode())
			}
			in.sub = apDiv
			if full {
				in.sub = apDivFull
			}
			in.fn = execApprox
			return in, nil
		}
		if half {
			return in, d.errf("unsupported instruction %s", pin.Opcode())
		}
		in.fn = exec2
		switch {
		case f64:
			in.f2 = func(a, b uint64) uint64 {
				return canon64(div64(math.Float64frombits(a), math.Float64frombits(b), mode))
			}
		case mode == rn && !ftz:
			in.f2 = func(a, b uint64) uint64 { return uint64(canon32(f32(a) / f32(b))) }
		default:
			in.f2 = f32Wrap2(func(x, y float32) uint32 { return div32(x, y, mode) }, ftz, false)
		}
		return in, nil
	}
	if half {
		return d.decodeHalf(in, pin, t, mode, ftz, sat)
	}
	nanProp := pin.HasMod("NaN")
	switch op {
	case "add", "sub", "mul":
		in.fn = exec2
		if f64 {
			var f func(x, y float64) float64
			switch op {
			case "add":
				f = func(x, y float64) float64 { return add64(x, y, mode) }
			case "sub":
				f = func(x, y float64) float64 { return add64(x, -y, mode) }
			default:
				f = func(x, y float64) float64 { return mul64(x, y, mode) }
			}
			in.f2 = func(a, b uint64) uint64 { return canon64(f(math.Float64frombits(a), math.Float64frombits(b))) }
			return in, nil
		}
		var f func(x, y float32) uint32
		switch {
		case op == "add" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x + y) }
		case op == "sub" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x - y) }
		case op == "mul" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x * y) }
		case op == "add":
			f = func(x, y float32) uint32 { return add32(x, y, mode) }
		case op == "sub":
			f = func(x, y float32) uint32 { return add32(x, -y, mode) }
		default:
			f = func(x, y float32) uint32 { return mul32(x, y, mode) }
		}
		in.f2 = f32Wrap2(f, ftz, sat)
	case "fma", "mad":
		in.fn = exec3
		if f64 {
			in.f3 = func(a, b, c uint64) uint64 {
				return canon64(fma64(math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c), mode))
			}
			return in, nil
		}
		in.f3 = f32Wrap3(func(x, y, z float32) uint32 { return fma32(x, y, z, mode) }, ftz, sat)
	case "min", "max":
		in.fn = exec2
		isMax := op == "max"
		if f64 {
			in.f2 = func(a, b uint64) uint64 { return minMaxFloat(t, a, b, isMax, nanProp) }
			return in, nil
		}
		in.f2 = func(a, b uint64) uint64 {
			if ftz {
				a, b = uint64(math.Float32bits(ftz32(f32(a)))), uint64(math.Float32bits(ftz32(f32(b))))
			}
			return minMaxFloat(t, a, b, isMax, nanProp)
		}
	case "abs", "neg":
		in.fn = exec1
		sign := uint64(1) << (t.bits() - 1)
		isAbs := op == "abs"
		in.f1 = func(a uint64) uint64 {
			if ftz && t.n == 4 {
				a = uint64(math.Float32bits(ftz32(f32(a))))
			}
			if isAbs {
				return a &^ sign
			}
			return a ^ sign
		}
	case "copysign":
		in.fn = exec2
		sign := uint64(1) << (t.bits() - 1)
		in.f2 = func(a, b uint64) uint64 { return b&^sign | a&sign }
	default:
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	return in, nil
}

func isNormal(t dtype, x float64) bool {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return false
	}
	minN := math.SmallestNonzeroFloat64
	switch {
	case t.k == 'f' && t.n == 4:
		minN = 0x1p-126
	case t.k == 'f':
		minN = 0x1p-1022
	case t.k == 'h':
		minN = 0x1p-14
	case t.k == 'H':
		minN = 0x1p-126
	}
	return math.Abs(x) >= minN
}

func (d *decoder) decodeHalf(in inst, pin *ptx.Instruction, t dtype, mode rmode, ftz, sat bool) (inst, error) {
	var op func(x []float64) (float64, float64)
	nanProp := pin.HasMod("NaN")
	switch pin.Op {
	case "add":
		op = func(x []float64) (float64, float64) { return twoSum(x[0], x[1]) }
	case "sub":
		op = func(x []float64) (float64, float64) { return twoSum(x[0], -x[1]) }
	case "mul":
		op = func(x []float64) (float64, float64) { return x[0] * x[1], 0 }
	case "fma", "mad":
		op = func(x []float64) (float64, float64) { return twoSum(x[0]*x[1], x[2]) }
	case "neg":
		op = func(x []float64) (float64, float64) { return -x[0], 0 }
	case "abs":
		op = func(x []float64) (float64, float64) { return math.Abs(x[0]), 0 }
	case "min", "max":
		isMax := pin.Op == "max"
		op = func(x []float64) (float64, float64) {
			a, b := math.Float64bits(x[0]), math.Float64bits(x[1])
			return math.Float64frombits(minMaxFloat(dtype{'f', 8}, a, b, isMax, nanProp)), 0
		}
	default:
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	f := halfWrap(t, mode, ftz, sat, op)
	switch pin.Op {
	case "neg", "abs":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return f(a, 0, 0) }
	case "fma", "mad":
		in.fn, in.f3 = exec3, f
	default:
		in.fn, in.f2 = exec2, func(a, b uint64) uint64 { return f(a, b, 0) }
	}
	return in, nil
}

// Comparisons.

func intCmp(op string, t dtype) func(a, b uint64) bool {
	s := t.signed()
	lt := func(a, b uint64) bool {
		if s {
			return int64(t.ext(a)) < int64(t.ext(b))
		}
		return t.trunc(a) < t.trunc(b)
	}
	eq := func(a, b uint64) bool { return t.trunc(a) == t.trunc(b) }
	ult := func(a, b uint64) bool { return t.trunc(a) < t.trunc(b) }
	switch op {
	case "eq":
		return eq
	case "ne":
		return func(a, b uint64) bool { return !eq(a, b) }
	case "lt":
		return lt
	case "le":
		return func(a, b uint64) bool { return !lt(b, a) }
	case "gt":
		return func(a, b uint64) bool { return lt(b, a) }
	case "ge":
		return func(a, b uint64) bool { return !lt(a, b) }
	case "lo":
		return ult
	case "ls":
		return func(a, b uint64) bool { return !ult(b, a) }
	case "hi":
		return func(a, b uint64) bool { return ult(b, a) }
	case "hs":
		return func(a, b uint64) bool { return !ult(a, b) }
	}
	return nil
}

func floatCmp(op string, t dtype, ftz bool) func(a, b uint64) bool {
	var c func(x, y float64) bool
	unordered := false
	base := op
	if len(op) == 3 && op[2] == 'u' {
		unordered, base = true, op[:2]
	}
	switch base {
	case "eq":
		c = func(x, y float64) bool { return x == y }
	case "ne":
		c = func(x, y float64) bool { return x != y }
	case "lt":
		c = func(x, y float64) bool { return x < y }
	case "le":
		c = func(x, y float64) bool { return x <= y }
	case "gt":
		c = func(x, y float64) bool { return x > y }
	case "ge":
		c = func(x, y float64) bool { return x >= y }
	case "num":
		return func(a, b uint64) bool { return !math.IsNaN(fval(t, a)) && !math.IsNaN(fval(t, b)) }
	case "nan":
		return func(a, b uint64) bool { return math.IsNaN(fval(t, a)) || math.IsNaN(fval(t, b)) }
	default:
		return nil
	}
	flush := ftz && t.k == 'f' && t.n == 4
	return func(a, b uint64) bool {
		x, y := fval(t, a), fval(t, b)
		if flush {
			x, y = float64(ftz32(float32(x))), float64(ftz32(float32(y)))
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return unordered
		}
		return c(x, y)
	}
}

var cmpOps = []string{"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}

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
	var cmpName string
	for _, m := range mods {
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
		return in, d.errf("unsupported comparison in %s", pin.Opcode())
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
	if in.a, err = d.src(sc, ops[1], t); err != nil {
		return in, err
	}
	if in.b, err = d.src(sc, ops[2], t); err != nil {
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
	var cmpName string
	for _, m := range mods {
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
	if st.isFloat() {
		in.cmp = floatCmp(cmpName, st, pin.HasMod("ftz"))
	} else {
		in.cmp = intCmp(cmpName, st)
	}
	if in.cmp == nil {
		return in, d.errf("unsupported comparison in %s", pin.Opcode())
	}
	var err error
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	if in.a, err = d.src(sc, ops[1], st); err != nil {
		return in, err
	}
	if in.b, err = d.src(sc, ops[2], st); err != nil {
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

// Conversions.

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
	if pin.HasMod("satfinite") || pin.HasMod("rna") || dt.k == 'p' || st.k == 'p' {
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
		one := cvtFloatFloat(dtype{'h', 2}, st, mode, false, ftz, sat, relu)
		if dt.k == 'X' {
			one = cvtFloatFloat(dtype{'H', 2}, st, mode, false, ftz, sat, relu)
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

func roundInt(x float64, mode rmode) float64 {
	switch mode {
	case rz:
		return math.Trunc(x)
	case rm:
		return math.Floor(x)
	case rp:
		return math.Ceil(x)
	}
	return math.RoundToEven(x)
}

func cvtFloatFloat(dt, st dtype, mode rmode, intRnd, ftz, sat, relu bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		x := fval(st, a)
		if ftz && st.k == 'f' && st.n == 4 {
			x = float64(ftz32(float32(x)))
		}
		if math.IsNaN(x) {
			if sat {
				return 0 // .sat flushes NaN to +0
			}
			return fbits(dt, math.NaN())
		}
		if intRnd {
			x = roundInt(x, mode)
		}
		var r float64
		switch {
		case dt.k == 'h':
			r = f16ToF64(roundF16(x, 0, mode))
		case dt.k == 'H':
			r = bf16ToF64(roundBF16(x, 0, mode))
		case dt.n == 4:
			r = float64(math.Float32frombits(round32(x, 0, mode)))
			if ftz {
				r = float64(ftz32(float32(r)))
			}
		default:
			r = x
		}
		if sat {
			r = math.Max(0, math.Min(1, r))
		}
		if relu && r < 0 {
			r = 0
		}
		return fbits(dt, r)
	}
}

func cvtFloatInt(dt, st dtype, mode rmode, ftz bool) func(uint64) uint64 {
	lo, hi := intRange(dt)
	return func(a uint64) uint64 {
		x := fval(st, a)
		if ftz && st.k == 'f' && st.n == 4 {
			x = float64(ftz32(float32(x)))
		}
		if math.IsNaN(x) {
			return 0
		}
		x = roundInt(x, mode)
		switch {
		case x <= lo:
			x = lo
		case x >= hi:
			if dt.signed() {
				return dt.mask() >> 1
			}
			return dt.mask()
		}
		if dt.signed() {
			return dt.trunc(uint64(int64(x)))
		}
		if x >= 0x1p63 {
			return uint64(x-0x1p63) + 1<<63
		}
		return dt.trunc(uint64(int64(x)))
	}
}

// intRange returns the range of an integer type as float64 bounds
// (hi is exclusive of values that round to it for 64-bit types).
func intRange(t dtype) (float64, float64) {
	nb := t.bits()
	if t.signed() {
		return -math.Ldexp(1, int(nb-1)), math.Ldexp(1, int(nb-1)) - 1
	}
	return 0, math.Ldexp(1, int(nb)) - 1
}

func cvtIntFloat(dt, st dtype, mode rmode, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		v := st.ext(a)
		var exact *big.Float
		var s, e float64
		if st.signed() {
			s = float64(int64(v))
			if int64(s) != int64(v) || s == 0x1p63 {
				exact = new(big.Float).SetInt64(int64(v))
			}
		} else {
			s = float64(v)
			if s >= 0x1p64 || uint64(s) != v {
				exact = new(big.Float).SetUint64(v)
			}
		}
		if exact != nil {
			s, e = exactPair(exact)
		}
		var r float64
		switch {
		case dt.k == 'h':
			r = f16ToF64(roundF16(s, e, mode))
		case dt.k == 'H':
			r = bf16ToF64(roundBF16(s, e, mode))
		case dt.n == 4:
			r = float64(math.Float32frombits(round32(s, e, mode)))
		default:
			r = adjust64(s, sign(e), mode)
		}
		if sat {
			r = math.Max(0, math.Min(1, r))
		}
		return fbits(dt, r)
	}
}

func cvtIntInt(dt, st dtype, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		v := st.ext(a)
		if sat {
			if st.signed() {
				x := int64(v)
				lo, hi := intRange(dt)
				switch {
				case float64(x) < lo:
					return dt.trunc(uint64(int64(lo)))
				case float64(x) > hi:
					if dt.signed() {
						return dt.mask() >> 1
					}
					return dt.mask()
				}
			} else if v > dt.mask()>>b2u(dt.signed()) {
				return dt.mask() >> b2u(dt.signed())
			}
		}
		return dt.ext(v)
	}
}

func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}
