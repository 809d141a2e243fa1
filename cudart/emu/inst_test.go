package emu

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// instCase runs body for random inputs and compares %rd7 with want.
func instCase(t *testing.T, name, body string, gen func(r *rand.Rand) [3]uint64, want func(a, b, c uint64) uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(len(name)), 99))
	inputs := make([][3]uint64, 256)
	for i := range inputs {
		inputs[i] = gen(r)
	}
	got := runInst(t, body, inputs)
	for i, in := range inputs {
		if w := want(in[0], in[1], in[2]); got[i] != w {
			t.Fatalf("%s(%#x, %#x, %#x) = %#x, want %#x\n%s", name, in[0], in[1], in[2], got[i], w, body)
		}
	}
}

func randU64(r *rand.Rand) [3]uint64 {
	v := func() uint64 {
		switch r.IntN(4) {
		case 0:
			return uint64(r.IntN(70))
		case 1:
			return uint64(int64(r.IntN(70) - 35))
		}
		return r.Uint64() >> r.IntN(64)
	}
	in := [3]uint64{v(), v(), v()}
	if r.IntN(4) == 0 {
		in[1] = in[0] // equal operands, where lo/ls and hi/hs differ
	}
	return in
}

func randF32Bits(r *rand.Rand) [3]uint64 {
	f := func() uint64 {
		if r.IntN(6) == 0 {
			return uint64(math.Float32bits(float32(math.NaN())))
		}
		return uint64(math.Float32bits(randF32(r)))
	}
	in := [3]uint64{f(), f(), uint64(r.IntN(2))}
	if r.IntN(4) == 0 {
		in[1] = in[0] // equal operands, where lt/le and gt/ge differ
	}
	return in
}

func b2u64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func TestSetpComparisons(t *testing.T) {
	cmps := map[string]func(x, y float64) bool{
		"eq": func(x, y float64) bool { return x == y }, "ne": func(x, y float64) bool { return x != y && !math.IsNaN(x) && !math.IsNaN(y) },
		"lt": func(x, y float64) bool { return x < y }, "le": func(x, y float64) bool { return x <= y },
		"gt": func(x, y float64) bool { return x > y }, "ge": func(x, y float64) bool { return x >= y },
		"num": func(x, y float64) bool { return !math.IsNaN(x) && !math.IsNaN(y) },
		"nan": func(x, y float64) bool { return math.IsNaN(x) || math.IsNaN(y) },
	}
	for _, base := range []string{"eq", "ne", "lt", "le", "gt", "ge"} {
		f := cmps[base]
		cmps[base+"u"] = func(x, y float64) bool { return math.IsNaN(x) || math.IsNaN(y) || f(x, y) }
	}
	for name, f := range cmps {
		for _, bop := range []string{"", "and", "or", "xor"} {
			op := "setp." + name
			extra := ""
			if bop != "" {
				op += "." + bop
				extra = ", %p3"
			}
			body := `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	setp.ne.u64 %p3, %rd6, 0;
	` + op + `.f32 %p1|%p2, %f1, %f2` + extra + `;
	selp.u64 %rd8, 1, 0, %p1;
	selp.u64 %rd9, 2, 0, %p2;
	or.b64 %rd7, %rd8, %rd9;`
			instCase(t, op, body, randF32Bits, func(a, b, c uint64) uint64 {
				v := f(float64(f32(a)), float64(f32(b)))
				p, q := v, !v
				cc := c != 0
				switch bop {
				case "and":
					p, q = p && cc, q && cc
				case "or":
					p, q = p || cc, q || cc
				case "xor":
					p, q = p != cc, q != cc
				}
				return b2u64(p) | 2*b2u64(q)
			})
		}
	}
	ints := map[string]func(a, b uint64) bool{
		"lt.s32": func(a, b uint64) bool { return int32(a) < int32(b) }, "ge.s64": func(a, b uint64) bool { return int64(a) >= int64(b) },
		"lo.u32": func(a, b uint64) bool { return uint32(a) < uint32(b) }, "hs.u64": func(a, b uint64) bool { return a >= b },
		"hi.u16": func(a, b uint64) bool { return uint16(a) > uint16(b) }, "le.s16": func(a, b uint64) bool { return int16(a) <= int16(b) },
		"ls.u32": func(a, b uint64) bool { return uint32(a) <= uint32(b) }, "ne.b64": func(a, b uint64) bool { return a != b },
	}
	for name, f := range ints {
		reg := map[string]string{"32": "%r", "64": "%rd", "16": "%h"}[name[len(name)-2:]]
		a, b := reg+"1", reg+"2"
		if reg == "%rd" {
			a, b = "%rd8", "%rd9"
		}
		conv := map[string]string{"%r": "cvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;", "%rd": "mov.b64 %rd8, %rd4;\n\tmov.b64 %rd9, %rd5;", "%h": "cvt.u16.u64 %h1, %rd4;\n\tcvt.u16.u64 %h2, %rd5;"}[reg]
		body := "\t" + conv + "\n\tsetp." + name + " %p1, " + a + ", " + b + ";\n\tselp.u64 %rd7, 1, 0, %p1;"
		instCase(t, "setp."+name, body, randU64, func(a, b, c uint64) uint64 { return b2u64(f(a, b)) })
	}
}

func TestBitFieldOps(t *testing.T) {
	// bfe extracts by shift and mask, where the emulator follows the PTX
	// ISA's bit loop: the bits of a from pos up, len of them but none past
	// bit nb-1, then, for a signed type, copies of the field's last bit
	// (bit nb-1 of a when the field runs past it) above them.
	bfe := func(a uint64, pos, ln uint64, nb uint, signed bool) uint64 {
		pos, ln = pos&0xFF, ln&0xFF
		if ln == 0 {
			return 0
		}
		w := uint64(nb)
		taken := min(ln, w-min(pos, w))    // bits of a in the field
		field := a >> pos & (1<<taken - 1) // a >> 64 and 1<<64 are 0 in Go
		if signed && a>>min(pos+ln-1, w-1)&1 == 1 {
			field |= (1<<w - 1) &^ (1<<taken - 1)
		}
		return field
	}
	small := func(r *rand.Rand) [3]uint64 {
		return [3]uint64{r.Uint64(), uint64(r.IntN(70)), uint64(r.IntN(70))}
	}
	instCase(t, "bfe.u32", "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tbfe.u32 %r4, %r1, %r2, %r3;\n\tcvt.u64.u32 %rd7, %r4;",
		small, func(a, b, c uint64) uint64 { return bfe(uint64(uint32(a)), b, c, 32, false) })
	instCase(t, "bfe.s32", "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tbfe.s32 %r4, %r1, %r2, %r3;\n\tcvt.u64.u32 %rd7, %r4;",
		small, func(a, b, c uint64) uint64 { return bfe(uint64(uint32(a)), b, c, 32, true) })
	instCase(t, "bfe.s64", "\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tbfe.s64 %rd7, %rd4, %r2, %r3;",
		small, func(a, b, c uint64) uint64 { return bfe(a, b, c, 64, true) })
	bfi := func(a, b, pos, ln uint64, nb uint) uint64 {
		pos, ln = pos&0xFF, ln&0xFF
		f := b
		for i := uint64(0); i < ln && pos+i <= uint64(nb-1); i++ {
			f = f&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
		}
		return f
	}
	instCase(t, "bfi.b64", "\tcvt.u32.u64 %r2, %rd6;\n\tshr.u64 %rd8, %rd6, 8;\n\tcvt.u32.u64 %r3, %rd8;\n\tbfi.b64 %rd7, %rd4, %rd5, %r2, %r3;",
		func(r *rand.Rand) [3]uint64 {
			return [3]uint64{r.Uint64(), r.Uint64(), uint64(r.IntN(70)) | uint64(r.IntN(70))<<8}
		}, func(a, b, c uint64) uint64 { return bfi(a, b, c&0xFF, c>>8&0xFF, 64) })
	instCase(t, "popc/clz/brev/bfind.b64", `	popc.b64 %r1, %rd4;
	clz.b64 %r2, %rd4;
	brev.b64 %rd8, %rd4;
	bfind.s64 %r3, %rd4;
	bfind.shiftamt.u64 %r4, %rd4;
	cvt.u64.u32 %rd9, %r1;
	cvt.u64.u32 %rd10, %r2;
	cvt.u64.u32 %rd11, %r3;
	cvt.u64.u32 %rd12, %r4;
	shl.b64 %rd10, %rd10, 8;
	shl.b64 %rd11, %rd11, 16;
	shl.b64 %rd12, %rd12, 32;
	xor.b64 %rd7, %rd8, %rd9;
	xor.b64 %rd7, %rd7, %rd10;
	xor.b64 %rd7, %rd7, %rd11;
	xor.b64 %rd7, %rd7, %rd12;`, randU64, func(a, b, c uint64) uint64 {
		bs := uint64(0xFFFFFFFF)
		v := a
		if int64(a) < 0 {
			v = ^a
		}
		if v != 0 {
			bs = uint64(63 - bits.LeadingZeros64(v))
		}
		bu := uint64(0xFFFFFFFF)
		if a != 0 {
			bu = uint64(bits.LeadingZeros64(a))
		}
		return bits.Reverse64(a) ^ uint64(bits.OnesCount64(a)) ^ uint64(bits.LeadingZeros64(a))<<8 ^ bs<<16 ^ bu<<32
	})
}

func TestPermuteAndLogic(t *testing.T) {
	bytesOf := func(a, b uint64) [8]uint64 {
		v := uint64(uint32(b))<<32 | uint64(uint32(a))
		var out [8]uint64
		for i := range out {
			out[i] = v >> (8 * i) & 0xFF
		}
		return out
	}
	instCase(t, "prmt.b32", "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tprmt.b32 %r4, %r1, %r2, %r3;\n\tcvt.u64.u32 %rd7, %r4;",
		randU64, func(a, b, c uint64) uint64 {
			bs := bytesOf(a, b)
			var d uint64
			for i := 0; i < 4; i++ {
				sel := c >> (4 * i) & 0xF
				v := bs[sel&7]
				if sel&8 != 0 {
					v = 0
					if bs[sel&7]&0x80 != 0 {
						v = 0xFF
					}
				}
				d |= v << (8 * i)
			}
			return d
		})
	modes := map[string][4][4]int{ // selector (c & 3) → result byte sources
		"f4e":  {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
		"b4e":  {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
		"rc8":  {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
		"ecl":  {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
		"ecr":  {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
		"rc16": {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
	}
	for mode, table := range modes {
		instCase(t, "prmt."+mode, "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tprmt.b32."+mode+" %r4, %r1, %r2, %r3;\n\tcvt.u64.u32 %rd7, %r4;",
			randU64, func(a, b, c uint64) uint64 {
				bs := bytesOf(a, b)
				var d uint64
				for i, src := range table[c&3] {
					d |= bs[src] << (8 * i)
				}
				return d
			})
	}
	instCase(t, "lop3.b32 0x96", "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tlop3.b32 %r4, %r1, %r2, %r3, 0x96;\n\tcvt.u64.u32 %rd7, %r4;",
		randU64, func(a, b, c uint64) uint64 { return uint64(uint32(a ^ b ^ c)) })
	instCase(t, "lop3.b32 0xE8", "\tcvt.u32.u64 %r1, %rd4;\n\tcvt.u32.u64 %r2, %rd5;\n\tcvt.u32.u64 %r3, %rd6;\n\tlop3.b32 %r4, %r1, %r2, %r3, 0xE8;\n\tcvt.u64.u32 %rd7, %r4;",
		randU64, func(a, b, c uint64) uint64 { return uint64(uint32(a&b | b&c | a&c)) })
	instCase(t, "shl/shr clamp", `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	shl.b32 %r3, %r1, %r2;
	shr.s32 %r4, %r1, %r2;
	shr.u32 %r5, %r1, %r2;
	mov.b64 %rd8, {%r3, %r4};
	cvt.u64.u32 %rd9, %r5;
	xor.b64 %rd7, %rd8, %rd9;`, randU64, func(a, b, c uint64) uint64 {
		x, s := uint32(a), uint32(b)
		shl, shru, shrs := uint32(0), uint32(0), uint32(int32(x)>>31)
		if s < 32 {
			shl, shru, shrs = x<<s, x>>s, uint32(int32(x)>>s)
		}
		return (uint64(shrs)<<32 | uint64(shl)) ^ uint64(shru)
	})
}

func TestCarryChains(t *testing.T) {
	// 128-bit addition and subtraction from 32-bit pieces.
	body := func(op, first, rest string) string {
		return `	mov.b64 {%r1, %r2}, %rd4;
	mov.b64 {%r3, %r4}, %rd5;
	mov.b64 {%r5, %r6}, %rd6;
	` + first + `.cc.u32 %r7, %r1, %r3;
	` + rest + `.cc.u32 %r8, %r2, %r4;
	` + rest + `.cc.u32 %r9, %r5, 0;
	` + rest + `.u32 %r10, 0, 0;
	mov.b64 %rd7, {%r7, %r8};
	cvt.u64.u32 %rd8, %r9;
	cvt.u64.u32 %rd9, %r10;
	shl.b64 %rd9, %rd9, 1;
	add.s64 %rd7, %rd7, %rd8;
	xor.b64 %rd7, %rd7, %rd9;`
	}
	instCase(t, "add.cc/addc", body("add", "add", "addc"), randU64, func(a, b, c uint64) uint64 {
		s, c1 := bits.Add64(a, b, 0)
		hi, c2 := bits.Add32(uint32(c), 0, uint32(c1))
		top := uint64(c2)
		return (s + uint64(hi)) ^ top<<1
	})
	instCase(t, "sub.cc/subc", body("sub", "sub", "subc"), randU64, func(a, b, c uint64) uint64 {
		s, b1 := bits.Sub64(a, b, 0)
		hi, b2 := bits.Sub32(uint32(c), 0, uint32(b1))
		top := uint64(uint32(0 - b2))
		return (s + uint64(hi)) ^ top<<1
	})
	instCase(t, "mul.wide/mul.hi/mad", `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	mul.wide.s32 %rd8, %r1, %r2;
	mul.hi.u32 %r3, %r1, %r2;
	mad.lo.s32 %r4, %r1, %r2, %r3;
	mad.wide.u32 %rd9, %r1, %r2, %rd6;
	mul.hi.s64 %rd10, %rd4, %rd5;
	cvt.u64.u32 %rd11, %r4;
	xor.b64 %rd7, %rd8, %rd9;
	xor.b64 %rd7, %rd7, %rd10;
	shl.b64 %rd11, %rd11, 17;
	xor.b64 %rd7, %rd7, %rd11;`, randU64, func(a, b, c uint64) uint64 {
		x, y := uint32(a), uint32(b)
		wide := uint64(int64(int32(x)) * int64(int32(y)))
		hi := uint32(uint64(x) * uint64(y) >> 32)
		mad := x*y + hi
		madw := uint64(x)*uint64(y) + c
		h, _ := bits.Mul64(a, b)
		if int64(a) < 0 {
			h -= b
		}
		if int64(b) < 0 {
			h -= a
		}
		return wide ^ madw ^ h ^ uint64(mad)<<17
	})
}

func TestFloatMiscOps(t *testing.T) {
	instCase(t, "min/max/copysign/testp/abs/neg.f32", `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	min.f32 %f3, %f1, %f2;
	max.NaN.f32 %f4, %f1, %f2;
	copysign.f32 %f5, %f1, %f2;
	testp.subnormal.f32 %p1, %f1;
	testp.finite.f32 %p2, %f2;
	abs.ftz.f32 %f6, %f1;
	mov.b32 %r3, %f3;
	mov.b32 %r4, %f4;
	mov.b64 %rd7, {%r3, %r4};
	mov.b32 %r5, %f5;
	mov.b32 %r6, %f6;
	mov.b64 %rd8, {%r5, %r6};
	xor.b64 %rd7, %rd7, %rd8;
	selp.u64 %rd9, 1, 0, %p1;
	selp.u64 %rd10, 2, 0, %p2;
	xor.b64 %rd7, %rd7, %rd9;
	xor.b64 %rd7, %rd7, %rd10;`, randF32Bits, func(a, b, c uint64) uint64 {
		x, y := f32(a), f32(b)
		mn := func(p, q float32) float32 {
			switch {
			case p != p && q != q:
				return math.Float32frombits(nan32)
			case p != p:
				return q
			case q != q:
				return p
			case p < q || p == q && math.Signbit(float64(p)):
				return p
			}
			return q
		}
		mx := func(p, q float32) float32 {
			if p != p || q != q {
				return math.Float32frombits(nan32)
			}
			if p > q || p == q && !math.Signbit(float64(p)) {
				return p
			}
			return q
		}
		cs := math.Float32bits(y)&^0x80000000 | math.Float32bits(x)&0x80000000
		ab := math.Float32bits(ftz32(x)) &^ 0x80000000
		sub := b2u64(x != 0 && !math.IsInf(float64(x), 0) && x == x && math.Abs(float64(x)) < 0x1p-126)
		fin := b2u64(!math.IsInf(float64(y), 0) && y == y)
		lo := uint64(math.Float32bits(mn(x, y))) | uint64(math.Float32bits(mx(x, y)))<<32
		return lo ^ (uint64(cs) | uint64(ab)<<32) ^ sub ^ fin<<1
	})
	instCase(t, "cvt saturating and rounding", `	cvt.u32.u64 %r1, %rd4;
	mov.b32 %f1, %r1;
	cvt.sat.s8.s32 %r2, %r1;
	cvt.sat.u16.s32 %r3, %r1;
	cvt.rni.f32.f32 %f2, %f1;
	cvt.rzi.s32.f32 %r4, %f1;
	cvt.sat.f32.f32 %f3, %f1;
	and.b32 %r2, %r2, 255;
	mov.b32 %r5, %f2;
	mov.b32 %r6, %f3;
	mov.b64 %rd7, {%r5, %r6};
	cvt.u64.u32 %rd8, %r2;
	cvt.u64.u32 %rd9, %r3;
	cvt.u64.u32 %rd10, %r4;
	shl.b64 %rd9, %rd9, 8;
	shl.b64 %rd10, %rd10, 24;
	xor.b64 %rd7, %rd7, %rd8;
	xor.b64 %rd7, %rd7, %rd9;
	xor.b64 %rd7, %rd7, %rd10;`, func(r *rand.Rand) [3]uint64 {
		if r.IntN(2) == 0 {
			return [3]uint64{uint64(uint32(int32(r.IntN(140000) - 70000)))}
		}
		return [3]uint64{uint64(math.Float32bits(float32(r.IntN(2000)-1000) / 4))}
	}, func(a, b, c uint64) uint64 {
		i := int32(a)
		x := f32(a)
		s8 := max(-128, min(127, i))
		u16 := max(0, min(65535, i))
		rni := float32(math.RoundToEven(float64(x)))
		var rzi int32
		switch {
		case x != x:
		case x >= 0x1p31:
			rzi = math.MaxInt32
		case x < -0x1p31:
			rzi = math.MinInt32
		default:
			rzi = int32(x)
		}
		sat := float32(math.Max(0, math.Min(1, float64(x))))
		if x != x {
			sat = 0
		}
		lo := uint64(canon32(rni)) | uint64(math.Float32bits(sat))<<32
		return lo ^ uint64(uint8(s8)) ^ uint64(uint32(u16))<<8 ^ uint64(uint32(rzi))<<24
	})
}

func TestGenericAddressWindows(t *testing.T) {
	body := `	.shared .align 8 .b8 buf[64];
	mov.u64 %rd8, buf;
	cvta.shared.u64 %rd9, %rd8;
	isspacep.shared %p1, %rd9;
	isspacep.global %p2, %rd9;
	st.u64 [%rd9+8], %rd4;
	ld.shared.u64 %rd10, [buf+8];
	cvta.to.shared.u64 %rd11, %rd9;
	selp.u64 %rd12, 1, 0, %p1;
	selp.u64 %rd13, 2, 0, %p2;
	xor.b64 %rd7, %rd10, %rd12;
	xor.b64 %rd7, %rd7, %rd13;
	sub.s64 %rd11, %rd11, %rd8;
	xor.b64 %rd7, %rd7, %rd11;`
	got := runInst(t, body, [][3]uint64{{0x1234, 0, 0}})
	if got[0] != 0x1234^1 {
		t.Fatalf("generic shared round trip = %#x", got[0])
	}
}

// ptxas fuses the final multiply of a div.full.f32 expansion with an add
// of its quotient (cuobjdump -sass on sm_90: FFMA R, MUFU.RCP(y'), x', c):
// 3/3 − 1 is 0 unfused and MUFU.RCP(3)·3 − 1 = 2^−25 fused.
func TestDivFullAddFusesAsPtxas(t *testing.T) {
	three, one := uint64(math.Float32bits(3)), uint64(math.Float32bits(-1))
	body := func(add string) string {
		return `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd5;
	cvt.u32.u64 %r5, %rd6;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	mov.b32 %f5, %r5;
	div.full.f32 %f3, %f1, %f2;
	` + add + ` %f4, %f3, %f5;
	mov.b32 %r3, %f4;
	cvt.u64.u32 %rd7, %r3;`
	}
	in := [][3]uint64{{three, three, one}}
	delta, err := rcpTable()
	if err != nil {
		t.Fatal(err)
	}
	if r := mufuRcp(delta, 0x40400000); r != 0x3EAAAAAB {
		t.Fatalf("MUFU.RCP(3) = %#x, the test assumes 0x3eaaaaab", r)
	}
	if got := runInst(t, body("add.f32"), in)[0]; got != uint64(math.Float32bits(0x1p-25)) {
		t.Fatalf("div.full + add.f32 = %#x, want the fused 2^-25", got)
	}
	if got := runInst(t, body("add.rn.f32"), in)[0]; got != 0 {
		t.Fatalf("div.full + add.rn.f32 = %#x, want 0 (no contraction)", got)
	}
}

func TestContractionUnderAdversarialMode(t *testing.T) {
	// a = b = 1+2^-12: a·b = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11, so
	// a·b − (1 + 2^-11) is 0 unfused and 2^-24 fused.
	a := uint64(math.Float32bits(1 + 0x1p-12))
	c := uint64(math.Float32bits(-(1 + 0x1p-11)))
	body := func(rnd string) string {
		return `	cvt.u32.u64 %r1, %rd4;
	cvt.u32.u64 %r2, %rd6;
	mov.b32 %f1, %r1;
	mov.b32 %f2, %r2;
	mul` + rnd + `.f32 %f3, %f1, %f1;
	add` + rnd + `.f32 %f4, %f3, %f2;
	mov.b32 %r3, %f4;
	cvt.u64.u32 %rd7, %r3;`
	}
	in := [][3]uint64{{a, 0, c}}
	// By default the emulator fuses as ptxas does: a product read once.
	if got := runInst(t, body(""), in)[0]; got != uint64(math.Float32bits(0x1p-24)) {
		t.Fatalf("default mode did not fuse a single-use mul+add as ptxas does: %#x", got)
	}
	twice := strings.Replace(body(""), "mov.b32 %r3, %f4;", "mov.b32 %r3, %f4;\n\tmov.b32 %r4, %f3;", 1)
	if got := runInst(t, twice, in)[0]; got != 0 {
		t.Fatalf("default mode fused a mul whose product is read twice: %#x", got)
	}
	if got := runInst(t, body(".rn"), in)[0]; got != 0 {
		t.Fatalf("default mode fused mul.rn+add.rn: %#x", got)
	}
	seen := map[uint64]bool{}
	for seed := int64(1); seed <= 16; seed++ {
		cfg := Config{Approx: ApproxAdversarial, ApproxSeed: seed}
		got := runInstCfg(t, body(""), in, cfg)[0]
		if again := runInstCfg(t, body(""), in, cfg)[0]; again != got {
			t.Fatalf("seed %d not reproducible", seed)
		}
		seen[got] = true
		if got := runInstCfg(t, body(".rn"), in, cfg)[0]; got != 0 {
			t.Fatalf("seed %d fused mul.rn+add.rn: %#x", seed, got)
		}
	}
	if !seen[0] || !seen[uint64(math.Float32bits(0x1p-24))] || len(seen) != 2 {
		t.Fatalf("adversarial contraction gave %v, want both 0 and 2^-24", seen)
	}
}
