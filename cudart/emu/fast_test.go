package emu

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestFastExecutors runs every instruction of the committed kernels that
// decodes to a warp-wide executor (fast.go) on random lanes and operands,
// special floating-point values included, and compares its results with
// those of the general executor over the same per-lane closure.
func TestFastExecutors(t *testing.T) {
	fast := map[uintptr]bool{}
	for _, f := range []func(*warp, *inst, uint32){execAddF32, execSubF32, execMulF32, execFmaF32, execAddF32Ftz,
		execSubF32Ftz, execMulF32Ftz, execFmaF32Ftz, execAddF32LE, execSubF32LE, execMulF32LE, execAddInt, execSubInt, execMulLo, execMadLo, execMulWideS32,
		execMulWideU32, execMadWideS32, execMadWideU32, execAndInt, execOrInt, execXorInt, execShl, execShrU, execSetpInt} {
		fast[reflect.ValueOf(f).Pointer()] = true
	}
	var files []string
	for _, pat := range []string{"../../kernels/ptx/*.ptx", "../../binding/testdata/*/*.ptx",
		"../../binding/testdata/foreign/*/*.ptx", "testdata/*.ptx", "testdata/foreign/*.ptx"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	specials := []uint64{0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x00400000, 0x80000001, 0x7F800000, 0xFF800000,
		0x7FC00000, 0xFFC00001, 0x3F800000, 0x3F000000, 0xBF000000, 0x40000000, 0x7F7FFFFF, 0x33800000, 0xFFFFFFFF,
		15, 16, 31, 32, 63, 64, 1 << 63, math.MaxUint64}
	r := rand.New(rand.NewPCG(3, 4))
	value := func() uint64 {
		switch r.IntN(3) {
		case 0:
			return specials[r.IntN(len(specials))]
		case 1:
			return uint64(r.Uint32())
		}
		return r.Uint64()
	}
	checked := 0
	for _, file := range append(files, "every variant") {
		src, err := os.ReadFile(file)
		if file == "every variant" {
			src, err = []byte(instKernel(fastVariants)), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := loadModule(&globalMem{next: globalBase}, filepath.Base(file), src)
		if err != nil {
			continue // files the emulator rejects on purpose (testdata)
		}
		for _, k := range m.kernels {
			a := &warp{regs: make([]uint64, int(k.nslots)*32), preds: make([]uint32, k.npreds)}
			b := &warp{regs: make([]uint64, int(k.nslots)*32), preds: make([]uint32, k.npreds)}
			for i := range k.insts {
				in := &k.insts[i]
				if in.kind != kOp || !fast[reflect.ValueOf(in.fn).Pointer()] {
					continue
				}
				general := exec2
				switch {
				case in.cmp != nil:
					general = execSetp
				case in.f3 != nil:
					general = exec3
				}
				for range 10 {
					for i := range a.preds {
						p := r.Uint32()
						a.preds[i], b.preds[i] = p, p
					}
					for _, s := range []int32{in.a, in.b, in.c, in.d} {
						if s < 0 || in.cmp != nil && s != in.a && s != in.b {
							continue
						}
						for l := range 32 {
							v := value()
							a.regs[s*32+int32(l)], b.regs[s*32+int32(l)] = v, v
						}
					}
					mask := r.Uint32()
					if r.IntN(2) == 0 {
						mask = fullMask
					}
					in.fn(a, in, mask)
					general(b, in, mask)
					if in.cmp == nil && !slices.Equal(a.r(in.d), b.r(in.d)) || !slices.Equal(a.preds, b.preds) {
						t.Fatalf("%s: %s (line %d) differs from its general executor on lanes %#x", file, in.text(), in.line, mask)
					}
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d instructions", checked)
	}
	t.Logf("%d instructions", checked)
}

// fastVariants has every instruction form fast.go implements.
const fastVariants = `
	add.rn.f32 %f1, %f2, %f3;
	add.rn.ftz.f32 %f1, %f2, %f3;
	add.f32 %f1, %f2, %f3;
	sub.rn.f32 %f1, %f2, %f3;
	sub.rn.ftz.f32 %f1, %f2, %f3;
	mul.rn.f32 %f1, %f2, %f3;
	mul.rn.ftz.f32 %f1, %f2, %f3;
	fma.rn.f32 %f1, %f2, %f3, %f4;
	fma.rn.ftz.f32 %f1, %f2, %f3, %f4;
	mad.rn.ftz.f32 %f1, %f2, %f3, %f4;
	add.s32 %r1, %r2, %r3;
	add.u16 %h1, %h2, %h3;
	add.s64 %rd1, %rd2, %rd3;
	sub.u32 %r1, %r2, %r3;
	sub.s64 %rd1, %rd2, %rd3;
	mul.lo.s32 %r1, %r2, %r3;
	mul.lo.u64 %rd1, %rd2, %rd3;
	mul.lo.u16 %h1, %h2, %h3;
	mad.lo.s32 %r1, %r2, %r3, %r4;
	mad.lo.u64 %rd1, %rd2, %rd3, %rd4;
	mul.wide.s32 %rd1, %r2, %r3;
	mul.wide.u32 %rd1, %r2, %r3;
	mad.wide.s32 %rd1, %r2, %r3, %rd4;
	mad.wide.u32 %rd1, %r2, %r3, %rd4;
	and.b32 %r1, %r2, %r3;
	and.b16 %h1, %h2, %h3;
	or.b64 %rd1, %rd2, %rd3;
	xor.b32 %r1, %r2, %r3;
	shl.b32 %r1, %r2, %r3;
	shl.b64 %rd1, %rd2, %r3;
	shl.b16 %h1, %h2, %r3;
	shr.u32 %r1, %r2, %r3;
	shr.b64 %rd1, %rd2, %r3;
	shr.u16 %h1, %h2, %r3;
	setp.lt.s32 %p1, %r2, %r3;
	setp.lo.s32 %p1, %r2, %r3;
	setp.ge.u64 %p1, %rd2, %rd3;
	setp.ne.b16 %p1, %h2, %h3;
	setp.hi.u32 %p1|%p2, %r2, %r3;
	setp.eq.and.s32 %p1, %r2, %r3, %p3;
	setp.le.or.s64 %p1|%p2, %rd2, %rd3, !%p3;
	setp.gt.s16 %p1, %h2, %h3;
	setp.hs.s64 %p1, %rd2, %rd3;
`
