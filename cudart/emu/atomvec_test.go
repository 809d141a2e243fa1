package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// The vector atomics of PTX ISA 8.1 (sm_90): atom and red on .v2/.v4 .f32
// (add), .v2/.v4/.v8 .f16/.bf16 and .v2/.v4 .f16x2/.bf16x2 (add, min, max).
// Each element is an independent atomic on its own address; atom's
// destination vector receives the old values.

// vecForm is one vector atomic: its opcode text, element count and element
// type (16- or 32-bit).
type vecForm struct {
	op    string // "atom" or "red"
	mods  string // between the opcode and the vector qualifier, e.g. ".global.gpu.acq_rel.add"
	n     int
	typ   string // f32, f16, bf16, f16x2, bf16x2
	bits  int    // element bits: 16 or 32
	arith string // add, min, max
}

func (f vecForm) text() string {
	noftz := ""
	if f.typ != "f32" {
		noftz = ".noftz"
	}
	return fmt.Sprintf("%s%s%s.v%d.%s", f.op, f.mods, noftz, f.n, f.typ)
}

// vecAtomKernel returns a kernel k(old, acc, b) in which thread g (global
// index) applies the form to acc with operand vector b[g] and, for atom,
// stores the old values to old[g].
func vecAtomKernel(f vecForm) string {
	reg, ldt := "%r", "b32"
	if f.bits == 16 {
		reg, ldt = "%h", "b16"
	}
	regs := func(from int) string {
		var s []string
		for i := range f.n {
			s = append(s, fmt.Sprintf("%s%d", reg, from+i))
		}
		return "{" + strings.Join(s, ", ") + "}"
	}
	bs, ds := regs(0), regs(8)
	inst := fmt.Sprintf("%s [%%rd2], %s;", f.text(), bs)
	store := ""
	if f.op == "atom" {
		inst = fmt.Sprintf("%s %s, [%%rd2], %s;", f.text(), ds, bs)
		store = fmt.Sprintf("st.global.v%d.%s [%%rd6], %s;", f.n, ldt, ds)
	}
	return fmt.Sprintf(`.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pold, .param .u64 pacc, .param .u64 pb)
{
	.reg .b16 %%h<16>;
	.reg .b32 %%r<24>;
	.reg .b64 %%rd<8>;
	ld.param.u64 %%rd1, [pold];
	ld.param.u64 %%rd2, [pacc];
	ld.param.u64 %%rd3, [pb];
	mov.u32 %%r20, %%ctaid.x;
	mov.u32 %%r21, %%ntid.x;
	mov.u32 %%r22, %%tid.x;
	mad.lo.u32 %%r23, %%r20, %%r21, %%r22;
	mul.wide.u32 %%rd4, %%r23, %d;
	add.s64 %%rd5, %%rd3, %%rd4;
	add.s64 %%rd6, %%rd1, %%rd4;
	ld.global.v%d.%s %s, [%%rd5];
	%s
	%s
	ret;
}
`, f.n*f.bits/8, f.n, ldt, bs, inst, store)
}

// packWords packs elements of the given bit width into 32-bit words.
func packWords(elems []uint32, bits int) []uint32 {
	if bits == 32 {
		return slices.Clone(elems)
	}
	w := make([]uint32, (len(elems)+1)/2)
	for i, e := range elems {
		w[i/2] |= e & 0xffff << (16 * (i % 2))
	}
	return w
}

func unpackWords(w []uint32, bits, n int) []uint32 {
	if bits == 32 {
		return w[:n]
	}
	e := make([]uint32, n)
	for i := range e {
		e[i] = w[i/2] >> (16 * (i % 2)) & 0xffff
	}
	return e
}

// runVecAtom launches f's kernel over grid×block threads with acc starting
// at init (elements) and thread g's operand b[g]; it returns the old values
// each thread received (atom) and acc's final elements.
func runVecAtom(t *testing.T, f vecForm, init []uint32, b [][]uint32, grid, block int, cfg Config) (old [][]uint32, final []uint32) {
	t.Helper()
	e := newEnvSrc(t, f.text(), []byte(vecAtomKernel(f)), cfg)
	var flat []uint32
	for _, v := range b {
		flat = append(flat, v...)
	}
	acc := e.in(packWords(init, f.bits))
	bb := e.in(packWords(flat, f.bits))
	ob := e.buf(cudart.U32, len(packWords(flat, f.bits)))
	e.mustLaunch("k", grid, block, cudart.Out(ob), cudart.InOut(acc), cudart.In(bb))
	final = unpackWords(e.u32s(acc), f.bits, len(init))
	if f.op == "atom" {
		all := unpackWords(e.u32s(ob), f.bits, len(flat))
		for g := range b {
			old = append(old, all[g*len(init):(g+1)*len(init)])
		}
	}
	return old, final
}

// Exact encodings of test values, independent of the emulator's converters.

func f32b(x float64) uint32 { return math.Float32bits(float32(x)) }

func bf16b(t *testing.T, x float64) uint32 {
	b := math.Float32bits(float32(x))
	if b&0xffff != 0 || float64(float32(x)) != x {
		t.Fatalf("%g is not a bfloat16", x)
	}
	return b >> 16
}

func f16b(t *testing.T, x float64) uint32 {
	s := uint32(0)
	if math.Signbit(x) {
		s, x = 0x8000, -x
	}
	if x == 0 {
		return s
	}
	fr, e := math.Frexp(x) // x = fr·2^e, fr in [0.5, 1)
	exp := e - 1 + 15
	m := (2*fr - 1) * 1024
	if exp <= 0 { // subnormal: x = m·2^-24
		exp, m = 0, x*(1<<24)
	}
	if m != math.Trunc(m) || exp >= 31 {
		t.Fatalf("%g is not a float16", x)
	}
	return s | uint32(exp)<<10 | uint32(m)
}

// decode turns an element's bits into its value.
func decodeElem(typ string, b uint32) float64 {
	switch typ {
	case "f32":
		return float64(math.Float32frombits(b))
	case "bf16", "bf16x2":
		return float64(math.Float32frombits(b << 16))
	}
	e, m := int(b>>10&31), float64(b&1023)
	v := math.Ldexp(m, -24)
	if e > 0 {
		v = math.Ldexp(1024+m, e-25)
	}
	if e == 31 {
		v = math.Inf(1)
		if m != 0 {
			v = math.NaN()
		}
	}
	if b&0x8000 != 0 {
		v = -v
	}
	return v
}

// TestVectorAtomicExact checks one thread's vector atomic against
// hand-computed bits: rounding, overflow, subnormals, signed zeros and NaN.
func TestVectorAtomicExact(t *testing.T) {
	const sub32 = 0x000116c2 // 1e-40, a float32 subnormal
	for _, c := range []struct {
		f          vecForm
		init, b    []uint32
		want       []uint32 // acc afterwards
		typ, label string
	}{
		{f: vecForm{"atom", ".global.gpu.acq_rel.add", 4, "f32", 32, "add"},
			init: []uint32{f32b(1.5), f32b(-2), sub32, f32b(3)},
			b:    []uint32{f32b(0.25), f32b(0.5), 0, 1},
			// On global memory atom.add.f32 flushes subnormal inputs and
			// results to zero (PTX ISA, atom).
			want: []uint32{f32b(1.75), f32b(-1.5), 0, f32b(3)}},
		{f: vecForm{"atom", ".add", 2, "f32", 32, "add"}, // generic address
			init: []uint32{f32b(1), f32b(math.MaxFloat32)},
			b:    []uint32{f32b(0x1p-24), f32b(math.MaxFloat32)},
			// 1+2^-24 ties to even 1; MaxFloat32·2 overflows to +Inf.
			want: []uint32{f32b(1), 0x7f800000}},
		{f: vecForm{"red", ".global.add", 4, "f32", 32, "add"},
			init: []uint32{f32b(1), f32b(2), f32b(3), f32b(4)},
			b:    []uint32{f32b(10), f32b(20), f32b(30), f32b(-4)},
			want: []uint32{f32b(11), f32b(22), f32b(33), 0}},
		{f: vecForm{"red", ".global.release.gpu.add", 2, "f32", 32, "add"},
			init: []uint32{f32b(1), f32b(-1)},
			b:    []uint32{f32b(0.5), f32b(-0.5)},
			want: []uint32{f32b(1.5), f32b(-1.5)}},
		{f: vecForm{"atom", ".global.add", 8, "f16", 16, "add"},
			// 1+2^-11 ties to even 1; 1+2^-11+2^-21 rounds up to 1+2^-10;
			// -0 + +0 = +0; 65504+32 overflows to +Inf; subnormals are kept
			// (.noftz); 2 + -2 = +0; -1 + 2^-24 rounds to -1.
			init: []uint32{0x3c00, 0x3c00, 0x8000, 0x7bff, 0x0001, 0x4000, 0xbc00, 0x3555},
			b:    []uint32{0x1000, 0x1001, 0x0000, 0x5000, 0x0001, 0xc000, 0x0001, 0x0000},
			want: []uint32{0x3c00, 0x3c01, 0x0000, 0x7c00, 0x0002, 0x0000, 0xbc00, 0x3555}},
		{f: vecForm{"atom", ".global.min", 4, "f16", 16, "min"},
			// min(NaN, 2) = 2; min(-0, +0) = -0; min(-Inf, 1) = -Inf.
			init: []uint32{0x7e00, 0x0000, 0xfc00, 0x4200},
			b:    []uint32{0x4000, 0x8000, 0x3c00, 0x4100},
			want: []uint32{0x4000, 0x8000, 0xfc00, 0x4100}},
		{f: vecForm{"red", ".global.max", 2, "f16", 16, "max"},
			init: []uint32{0x8000, 0x3c00},
			b:    []uint32{0x0000, 0x7e00},
			// max(-0, +0) = +0; max(1, NaN) = 1.
			want: []uint32{0x0000, 0x3c00}},
		{f: vecForm{"atom", ".global.add", 4, "bf16", 16, "add"},
			// 1+2^-8 ties to even 1; 1+1.5·2^-8 rounds up to 1+2^-7;
			// subnormals are kept; max·2 overflows to +Inf.
			init: []uint32{0x3f80, 0x3f80, 0x0001, 0x7f7f},
			b:    []uint32{0x3b80, 0x3bc0, 0x0001, 0x7f7f},
			want: []uint32{0x3f80, 0x3f81, 0x0002, 0x7f80}},
		{f: vecForm{"atom", ".global.max", 8, "bf16", 16, "max"},
			init: []uint32{0x3f80, 0xbf80, 0x7fc0, 0x8000, 0x0001, 0xff80, 0x4000, 0x4000},
			b:    []uint32{0x4000, 0xc000, 0x3f80, 0x0000, 0x0000, 0x0080, 0x3f80, 0x7f80},
			want: []uint32{0x4000, 0xbf80, 0x3f80, 0x0000, 0x0001, 0x0080, 0x4000, 0x7f80}},
		{f: vecForm{"atom", ".global.sys.add", 2, "f16x2", 32, "add"},
			// Each half adds on its own: (1+2^-11+2^-21, 2+1) and (65504+32, 0.5+0.25).
			init: []uint32{0x4000<<16 | 0x3c00, 0x3800<<16 | 0x7bff},
			b:    []uint32{0x3c00<<16 | 0x1001, 0x3400<<16 | 0x5000},
			want: []uint32{0x4200<<16 | 0x3c01, 0x3a00<<16 | 0x7c00}},
		{f: vecForm{"red", ".global.min", 4, "f16x2", 32, "min"},
			init: []uint32{0x3c00<<16 | 0xbc00, 0, 0x7e00<<16 | 0x7e00, 0x4000<<16 | 0x4000},
			b:    []uint32{0xbc00<<16 | 0x3c00, 0x8000<<16 | 0x8000, 0x3c00<<16 | 0x7e00, 0x4000<<16 | 0x3c00},
			want: []uint32{0xbc00<<16 | 0xbc00, 0x8000<<16 | 0x8000, 0x3c00<<16 | 0x7fff, 0x4000<<16 | 0x3c00}},
		{f: vecForm{"atom", ".global.max", 2, "bf16x2", 32, "max"},
			init: []uint32{0x3f80<<16 | 0xbf80, 0x4000<<16 | 0x0001},
			b:    []uint32{0x4000<<16 | 0xc000, 0x3f80<<16 | 0x8000},
			want: []uint32{0x4000<<16 | 0xbf80, 0x4000<<16 | 0x0001}},
		{f: vecForm{"red", ".global.add", 2, "bf16x2", 32, "add"},
			init: []uint32{0x3f80<<16 | 0x3f80, 0x4000<<16 | 0x0001},
			b:    []uint32{0x3bc0<<16 | 0x3b80, 0xc000<<16 | 0x0001},
			want: []uint32{0x3f81<<16 | 0x3f80, 0x0000<<16 | 0x0002}},
	} {
		t.Run(c.f.text(), func(t *testing.T) {
			old, final := runVecAtom(t, c.f, c.init, [][]uint32{c.b}, 1, 1, Config{})
			if !slices.Equal(final, c.want) {
				t.Errorf("memory after %s = %#x, want %#x", c.f.text(), final, c.want)
			}
			if c.f.op == "atom" && !slices.Equal(old[0], c.init) {
				t.Errorf("%s returned %#x, want the old values %#x", c.f.text(), old[0], c.init)
			}
		})
	}
}

// TestVectorAtomicContended has 256 threads in 4 CTAs apply each form to
// one vector. The final vector is the hand-computed sum, minimum or
// maximum, and the old values each thread received form one chain per
// element: every element's updates happened one at a time, each seeing the
// previous one's result.
func TestVectorAtomicContended(t *testing.T) {
	const grid, block = 4, 64
	r := rand.New(rand.NewPCG(24, 5))
	var forms []vecForm
	for _, op := range []string{"atom", "red"} {
		sem := ".global.gpu.acq_rel.add"
		if op == "red" {
			sem = ".global.gpu.release.add" // red has no acquire
		}
		forms = append(forms, vecForm{op, sem, 2, "f32", 32, "add"}, vecForm{op, sem, 4, "f32", 32, "add"})
		for _, ar := range []string{"add", "min", "max"} {
			for _, n := range []int{2, 4, 8} {
				forms = append(forms, vecForm{op, ".global." + ar, n, "f16", 16, ar}, vecForm{op, "." + ar, n, "bf16", 16, ar})
			}
			for _, n := range []int{2, 4} {
				forms = append(forms, vecForm{op, ".global." + ar, n, "f16x2", 32, ar}, vecForm{op, ".global.cta." + ar, n, "bf16x2", 32, ar})
			}
		}
	}
	for _, f := range forms {
		t.Run(f.text(), func(t *testing.T) {
			lanes := f.n // scalar elements in the vector
			if f.typ == "f16x2" || f.typ == "bf16x2" {
				lanes *= 2
			}
			enc := func(x float64) uint32 {
				switch f.typ {
				case "f32":
					return f32b(x)
				case "bf16", "bf16x2":
					return bf16b(t, x)
				}
				return f16b(t, x)
			}
			// Values whose every partial sum is exact in the type: integers
			// of at most 8 bits (bfloat16 has 8 significant bits).
			draw := func() float64 { return float64(r.IntN(3) - 1) }
			if f.arith != "add" {
				draw = func() float64 { return float64(r.IntN(200)-100) / 4 }
			}
			init := make([]float64, lanes)
			for i := range init {
				init[i] = draw()
				if init[i] == 0 {
					init[i] = 0.25 // no signed zeros: the chain compares values
				}
			}
			b := make([][]float64, grid*block)
			for g := range b {
				b[g] = make([]float64, lanes)
				for i := range b[g] {
					if b[g][i] = draw(); b[g][i] == 0 && f.arith != "add" {
						b[g][i] = 0.5
					}
				}
			}
			apply := func(x, y float64) float64 {
				switch f.arith {
				case "min":
					return math.Min(x, y)
				case "max":
					return math.Max(x, y)
				}
				return x + y
			}
			want := slices.Clone(init)
			for g := range b {
				for i := range want {
					want[i] = apply(want[i], b[g][i])
				}
			}
			// Elements in memory order: a packed pair is (lo, hi).
			encAll := func(xs []float64) []uint32 {
				var out []uint32
				for i := 0; i < len(xs); i++ {
					if f.typ == "f16x2" || f.typ == "bf16x2" {
						out = append(out, enc(xs[i])|enc(xs[i+1])<<16)
						i++
					} else {
						out = append(out, enc(xs[i]))
					}
				}
				return out
			}
			decAll := func(ws []uint32) []float64 {
				var out []float64
				for _, w := range ws {
					if f.typ == "f16x2" || f.typ == "bf16x2" {
						out = append(out, decodeElem(f.typ, w&0xffff), decodeElem(f.typ, w>>16))
					} else {
						out = append(out, decodeElem(f.typ, w))
					}
				}
				return out
			}
			bw := make([][]uint32, len(b))
			for g := range b {
				bw[g] = encAll(b[g])
			}
			old, final := runVecAtom(t, f, encAll(init), bw, grid, block, Config{Seed: 7})
			if got := decAll(final); !slices.Equal(got, want) {
				t.Fatalf("memory after %d threads = %v, want %v", grid*block, got, want)
			}
			if f.op == "red" {
				return
			}
			for i := range lanes {
				// The multiset {init} ∪ {op(old_g, b_g)} equals {old_g} ∪ {final}.
				var before, after []float64
				before, after = append(before, init[i]), append(after, want[i])
				for g := range b {
					o := decAll(old[g])[i]
					before = append(before, apply(o, b[g][i]))
					after = append(after, o)
				}
				slices.Sort(before)
				slices.Sort(after)
				if !slices.Equal(before, after) {
					t.Fatalf("element %d: the old values returned are not one chain of updates from %v to %v", i, init[i], want[i])
				}
			}
		})
	}
}

// TestVectorAtomicFaults checks misuse: a vector not aligned to its size,
// a generic address in shared memory, and forms the PTX ISA does not define.
func TestVectorAtomicFaults(t *testing.T) {
	const misaligned = `.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .f32 %f<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	mov.f32 %f1, 0f3F800000;
	atom.global.add.v4.f32 {%f2, %f3, %f4, %f5}, [%rd1+4], {%f1, %f1, %f1, %f1};
	ret;
}
`
	e := newEnvSrc(t, "misaligned", []byte(misaligned), Config{})
	wantErr(t, e.launch("k", 1, 1, cudart.InOut(e.in(make([]float32, 8)))), cudart.ErrLaunch,
		"misaligned address", "of 16 bytes", "not 16-byte aligned")

	const shared = `.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .f32 %f<8>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 s[16];
	mov.u64 %rd1, s;
	cvta.shared.u64 %rd2, %rd1;
	mov.f32 %f1, 0f3F800000;
	atom.add.v2.f32 {%f2, %f3}, [%rd2], {%f1, %f1};
	ret;
}
`
	e = newEnvSrc(t, "shared", []byte(shared), Config{})
	wantErr(t, e.launch("k", 1, 1, cudart.Out(e.buf(cudart.F32, 1))), cudart.ErrLaunch,
		"atom.add.v2.f32 on shared memory is not allowed", "global memory only")

	for _, c := range []struct{ inst, want string }{
		{"atom.global.add.v8.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "add on .v2 or .v4"},
		{"atom.global.min.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1], {%f0, %f1, %f2, %f3};", "add on .v2 or .v4"},
		{"atom.global.exch.v2.b32 {%r0, %r1}, [%rd1], {%r0, %r1};", "add, min or max"},
		{"atom.global.add.v2.u32 {%r0, %r1}, [%rd1], {%r0, %r1};", "not .u32"},
		{"atom.shared.add.v2.f32 {%f0, %f1}, [%rd1], {%f0, %f1};", "global memory only"},
		{"atom.global.add.v4.f32 {%f0, %f1}, [%rd1], {%f0, %f1, %f2, %f3};", "the destination must be a vector of 4"},
		{"red.global.add.v2.f32 [%rd1], %f0;", "the operand must be a vector of 2"},
		{"atom.global.add.noftz.v8.f16x2 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1], {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};", "packed vector atomic is .v2 or .v4"},
	} {
		src := fmt.Sprintf(`.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .f32 %%f<8>;
	.reg .b32 %%r<8>;
	.reg .b64 %%rd<4>;
	ld.param.u64 %%rd1, [p];
	%s
	ret;
}
`, c.inst)
		_, err := New(Config{}).LoadModule("bad", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "PTX line 10") {
			t.Errorf("%s: error %v, want one naming PTX line 10 and %q", c.inst, err, c.want)
		}
	}
}

// TestVectorAtomicOrdering checks that the race checker treats a vector
// atomic as it treats a scalar one: atomics of different CTAs on the same
// addresses do not race, a plain store against them does, and a release
// vector atomic orders earlier stores before an acquiring reader's.
func TestVectorAtomicOrdering(t *testing.T) {
	const src = `.version 8.1
.target sm_90
.address_size 64
// Block 0 stores data, then publishes with a vector atomic on flag (release
// when rel != 0, relaxed otherwise); block 1 waits for the flag with an
// acquire load and then stores data.
.visible .entry publish(.param .u64 data, .param .u64 flag, .param .u32 rel)
{
	.reg .pred %p<4>;
	.reg .f32 %f<8>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [data];
	ld.param.u64 %rd2, [flag];
	ld.param.u32 %r1, [rel];
	mov.u32 %r2, %ctaid.x;
	mov.f32 %f1, 0f3F800000;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra WAIT;
	st.global.u32 [%rd1], 1;
	setp.eq.u32 %p2, %r1, 0;
	@%p2 bra RELAXED;
	atom.global.release.gpu.add.v2.f32 {%f2, %f3}, [%rd2], {%f1, %f1};
	ret;
RELAXED:
	atom.global.relaxed.gpu.add.v2.f32 {%f2, %f3}, [%rd2], {%f1, %f1};
	ret;
WAIT:
	ld.global.acquire.gpu.f32 %f4, [%rd2+4];
	setp.eq.f32 %p3, %f4, 0f00000000;
	@%p3 bra WAIT;
	st.global.u32 [%rd1], 2;
	ret;
}

// Block 0 stores to acc; the other blocks add to it with red.v4.
.visible .entry store_vs_red(.param .u64 acc)
{
	.reg .pred %p<2>;
	.reg .f32 %f<4>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [acc];
	mov.u32 %r1, %ctaid.x;
	mov.f32 %f1, 0f3F800000;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra ADD;
	st.global.f32 [%rd1+8], %f1;
	ret;
ADD:
	red.global.add.v4.f32 [%rd1], {%f1, %f1, %f1, %f1};
	ret;
}
`
	for seed := int64(0); seed < 4; seed++ {
		e := newEnvSrc(t, "order", []byte(src), Config{Seed: seed})
		data := e.in([]int32{0})
		e.mustLaunch("publish", 2, 1, cudart.InOut(data), cudart.InOut(e.in([]float32{0, 0})), cudart.ScalarI32(1))
		if got := e.i32s(data)[0]; got != 2 {
			t.Fatalf("seed %d: data = %d after the acquiring store, want 2", seed, got)
		}
		err := e.launch("publish", 2, 1, cudart.InOut(data), cudart.InOut(e.in([]float32{0, 0})), cudart.ScalarI32(0))
		wantErr(t, err, cudart.ErrRace, "block (1,0,0)", "block (0,0,0) already wrote")

		acc := e.in(make([]float32, 4))
		err = e.launch("store_vs_red", 3, 1, cudart.InOut(acc))
		wantErr(t, err, cudart.ErrRace, "store_vs_red", "with nothing ordering the two", "byte 8")
	}
}

// tritonColsum is PTX in the form Triton 3.6 gives tl.atomic_add of a
// float32 block on sm_90 (written by hand from that form: .b32 registers,
// a guard predicate, [reg + 0] addresses): each of 128 threads adds four
// contiguous columns of its row to out with one
// atom.global.gpu.acq_rel.add.v4.f32.
const tritonColsum = `.version 8.7
.target sm_90a
.address_size 64
.visible .entry colsum_atomic_kernel(
	.param .u64 .ptr .global .align 1 colsum_atomic_kernel_param_0,
	.param .u64 .ptr .global .align 1 colsum_atomic_kernel_param_1,
	.param .u32 colsum_atomic_kernel_param_2
)
.reqntid 128, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<20>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd3, [colsum_atomic_kernel_param_0];
	ld.param.u64 	%rd4, [colsum_atomic_kernel_param_1];
	ld.param.u32 	%r9, [colsum_atomic_kernel_param_2];
	mov.u32 	%r10, %ctaid.x;
	mul.lo.s32 	%r11, %r10, %r9;
	mov.u32 	%r12, %tid.x;
	shl.b32 	%r13, %r12, 2;
	and.b32 	%r14, %r13, 508;
	setp.lt.s32 	%p1, %r14, %r9;
	add.s32 	%r15, %r11, %r14;
	mul.wide.s32 	%rd5, %r15, 4;
	add.s64 	%rd1, %rd3, %rd5;
	mov.u32 %r1, 0x0;
	mov.u32 %r2, 0x0;
	mov.u32 %r3, 0x0;
	mov.u32 %r4, 0x0;
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	mul.wide.s32 	%rd6, %r14, 4;
	add.s64 	%rd2, %rd4, %rd6;
	@%p1 atom.global.gpu.acq_rel.add.v4.f32 { %r5, %r6, %r7, %r8 }, [ %rd2 + 0 ], { %r1, %r2, %r3, %r4 };
	ret;
}
`

// TestTritonStyleAtomicAddBlock runs tritonColsum over 16 rows of 300
// columns (the last block partly masked): out is each column's sum, exact
// because the data are small integers, whatever order the atomics take.
func TestTritonStyleAtomicAddBlock(t *testing.T) {
	const rows, cols = 16, 300
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, rows*cols)
	want := make([]float32, cols)
	for i := range x {
		x[i] = float32(r.IntN(201) - 100)
		want[i%cols] += x[i]
	}
	for _, seed := range []int64{0, 1, 2} {
		e := newEnvSrc(t, "colsum", []byte(tritonColsum), Config{Seed: seed})
		out := e.in(make([]float32, cols))
		e.mustLaunch("colsum_atomic_kernel", rows, 128, cudart.In(e.in(x)), cudart.InOut(out), cudart.ScalarU32(cols))
		if got := e.f32s(out); !slices.Equal(got, want) {
			t.Fatalf("seed %d: column sums %v, want %v", seed, got[:8], want[:8])
		}
	}
}

// TestPackedScalarAtomic checks the scalar packed forms, each half an
// independent atomic: atom.add.noftz.f16x2 returns the old pair, and
// red.add.noftz.bf16x2 adds per half (hand-computed bits as in
// TestVectorAtomicExact).
func TestPackedScalarAtomic(t *testing.T) {
	const src = `.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 a, .param .u32 b)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [a];
	ld.param.u32 %r2, [b];
	atom.global.add.noftz.f16x2 %r3, [%rd1], %r1;
	st.global.u32 [%rd1+8], %r3;
	red.global.add.noftz.bf16x2 [%rd1+4], %r2;
	ret;
}
`
	e := newEnvSrc(t, "packed", []byte(src), Config{})
	buf := e.in([]uint32{0x4000<<16 | 0x3c00, 0x3f80<<16 | 0x3f80, 0})
	e.mustLaunch("k", 1, 1, cudart.InOut(buf), cudart.ScalarU32(0x3c00<<16|0x1001), cudart.ScalarU32(0x3bc0<<16|0x3b80))
	want := []uint32{0x4200<<16 | 0x3c01, 0x3f81<<16 | 0x3f80, 0x4000<<16 | 0x3c00}
	if got := e.u32s(buf); !slices.Equal(got, want) {
		t.Fatalf("memory %#x, want %#x", got, want)
	}
}

// TestCvtSatfinite checks cvt.rn.satfinite to bf16x2, f16x2, bf16 and f16
// against hand-computed bits: finite values round as without it, values
// beyond MAX_NORM and infinities give ±MAX_NORM, NaN stays NaN.
func TestCvtSatfinite(t *testing.T) {
	const src = `.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .f32 a, .param .f32 b)
{
	.reg .b16 %h<4>;
	.reg .b32 %r<8>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	ld.param.f32 %f1, [a];
	ld.param.f32 %f2, [b];
	cvt.rn.satfinite.bf16x2.f32 %r1, %f1, %f2;
	cvt.rn.satfinite.f16x2.f32 %r2, %f1, %f2;
	cvt.rn.satfinite.bf16.f32 %h1, %f1;
	cvt.rz.relu.satfinite.f16.f32 %h2, %f2;
	cvt.u32.u16 %r3, %h1;
	cvt.u32.u16 %r4, %h2;
	st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
	ret;
}
`
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		a, b float32
		want [4]uint32
	}{
		// 1.5 and −2 are exact in both formats.
		{1.5, -2, [4]uint32{0x3fc0<<16 | 0xc000, 0x3e00<<16 | 0xc000, 0x3fc0, 0}},
		// 1e5 overflows f16 (65504 = 0x7bff) but not bf16 (1e5 rounds to
		// 0x47c3); −Inf gives −MAX_NORM in both; relu makes −MAX_NORM +0.
		{1e5, -inf, [4]uint32{0x47c3<<16 | 0xff7f, 0x7bff<<16 | 0xfbff, 0x47c3, 0}},
		// +Inf gives MAX_NORM; NaN stays a NaN (canonical).
		{inf, nan, [4]uint32{0x7f7f<<16 | 0x7fff, 0x7bff<<16 | 0x7fff, 0x7f7f, 0x7fff}},
		// 3.4e38 rounds past bf16's MAX_NORM 3.39e38 to 2^128: MAX_NORM;
		// 65519 rounds to f16's 65504 (no saturation needed) and to bf16's
		// 65536; rz keeps 65504.
		{3.4e38, 65519, [4]uint32{0x7f7f<<16 | 0x4780, 0x7bff<<16 | 0x7bff, 0x7f7f, 0x7bff}},
	} {
		e := newEnvSrc(t, "satfinite", []byte(src), Config{})
		out := e.buf(cudart.U32, 4)
		e.mustLaunch("k", 1, 1, cudart.Out(out), cudart.ScalarF32(c.a), cudart.ScalarF32(c.b))
		if got := e.u32s(out); !slices.Equal(got, c.want[:]) {
			t.Errorf("a=%g b=%g: got %#x, want %#x", c.a, c.b, got, c.want)
		}
	}
}

// TestStmatrixInvertsLdmatrix stores four 8×8 matrices with stmatrix (plain
// and .trans) and loads them back with ldmatrix of the same form: every
// lane gets back its registers. A plain store then a .trans load gives the
// transpose, checked element by element against the fragment layout (lane
// t holds row t/4, columns 2(t%4) and 2(t%4)+1).
func TestStmatrixInvertsLdmatrix(t *testing.T) {
	const src = `.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out, .param .u32 mode)
{
	.reg .pred %p<2>;
	.reg .b32 %r<24>;
	.reg .b64 %rd<8>;
	.shared .align 16 .b8 s[512];
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	ld.param.u32 %r20, [mode];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 16;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd4];
	mov.u32 %r6, s;
	shl.b32 %r7, %r1, 4;
	add.s32 %r8, %r6, %r7;
	setp.eq.u32 %p1, %r20, 1;
	@%p1 bra TRANS;
	stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r8], {%r2, %r3, %r4, %r5};
	bar.warp.sync -1;
	setp.eq.u32 %p1, %r20, 2;
	@%p1 bra LOADT;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r8];
	bra DONE;
LOADT:
	ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r10, %r11, %r12, %r13}, [%r8];
	bra DONE;
TRANS:
	stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r8], {%r2, %r3, %r4, %r5};
	bar.warp.sync -1;
	ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r10, %r11, %r12, %r13}, [%r8];
DONE:
	st.global.v4.b32 [%rd5], {%r10, %r11, %r12, %r13};
	ret;
}
`
	in := make([]uint32, 32*4)
	for i := range in {
		in[i] = uint32(2*i) | uint32(2*i+1)<<16
	}
	// elem returns element (row, col) of matrix m in the fragment layout.
	elem := func(regs []uint32, m, row, col int) uint16 {
		v := regs[4*(4*row+col/2)+m]
		return uint16(v >> (16 * (col % 2)))
	}
	for mode := uint32(0); mode < 3; mode++ {
		e := newEnvSrc(t, "stmatrix", []byte(src), Config{})
		out := e.buf(cudart.U32, len(in))
		e.mustLaunch("k", 1, 32, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarU32(mode))
		got := e.u32s(out)
		for m := range 4 {
			for row := range 8 {
				for col := range 8 {
					want := elem(in, m, row, col)
					if mode == 2 {
						want = elem(in, m, col, row)
					}
					if g := elem(got, m, row, col); g != want {
						t.Fatalf("mode %d: matrix %d (%d,%d) = %#x, want %#x", mode, m, row, col, g, want)
					}
				}
			}
		}
	}
}
