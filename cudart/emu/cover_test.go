package emu

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// coverPTX stores 1 where x[i] < 0 and 2 elsewhere, i the global thread
// index; threads past n exit
// early, and a branch on n > 1000 leads to a block only large n reaches.
const coverPTX = `.version 8.0
.target sm_90
.address_size 64

.visible .entry cover(.param .u64 x, .param .u64 y, .param .u32 n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<6>;
	.reg .f32 %f<2>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [y];
	ld.param.u32 %r1, [n];
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r5, %ntid.x;
	mov.u32 %r2, %tid.x;
	mad.lo.u32 %r2, %r4, %r5, %r2;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	setp.lt.f32 %p2, %f1, 0f00000000;
	mov.u32 %r3, 2;
	@%p2 mov.u32 %r3, 1;
	st.global.u32 [%rd5], %r3;
	setp.gt.u32 %p3, %r1, 1000;
	@!%p3 bra DONE;
	st.global.u32 [%rd5], 3;
DONE:
	ret;
}
`

func TestCoverage(t *testing.T) {
	cov := NewCoverage()
	e := newEnvSrc(t, "cover.ptx", []byte(coverPTX), Config{Coverage: cov})
	x := e.in([]float32{1, 2, 3, 4})
	y := e.buf(cudart.U32, 4)
	e.mustLaunch("cover", 1, 32, cudart.In(x), cudart.Out(y), cudart.ScalarU32(4))

	sum := sha256.Sum256([]byte(coverPTX))
	kc, ok := cov.Kernel(hex.EncodeToString(sum[:]), "cover")
	if !ok {
		t.Fatal("no coverage recorded for cover")
	}
	if kc.Launches != 1 || len(kc.Branches) != 2 || len(kc.Guards) != 1 {
		t.Fatalf("launches %d, branches %d, guards %d; want 1, 2, 1", kc.Launches, len(kc.Branches), len(kc.Guards))
	}
	b0, b1 := kc.Branches[0], kc.Branches[1]
	// Lanes 4..31 exit, 0..3 go on; n = 4 never takes the large-n block.
	if !b0.Taken || !b0.NotTaken || b1.Taken != true || b1.NotTaken {
		t.Errorf("branches: %+v, %+v; want the first both ways, the second taken only", b0, b1)
	}
	if b0.Guard != "@%p1" || b0.Condition != "setp.ge.u32 %p1, %r2, %r1;" || b1.Guard != "@!%p3" || b1.Condition != "setp.gt.u32 %p3, %r1, 1000;" {
		t.Errorf("conditions: %q %q, %q %q", b0.Guard, b0.Condition, b1.Guard, b1.Condition)
	}
	if g := kc.Guards[0]; !g.False || g.True {
		t.Errorf("guard of the mov: %+v; want false only (every x ≥ 0)", g)
	}
	if c, n := kc.BlocksCovered(); c != 3 || n != 4 {
		t.Errorf("blocks %d/%d, want 3/4: %+v", c, n, kc.Blocks)
	}
	if c, n := kc.Directions(); c != 3 || n != 4 {
		t.Errorf("directions %d/%d, want 3/4", c, n)
	}

	// A second launch adds a negative element: the mov's guard holds.
	x2 := e.in(make([]float32, 32))
	e.dev.Write(x2, append([]float32{-1}, make([]float32, 31)...))
	y2 := e.buf(cudart.U32, 32)
	e.mustLaunch("cover", 1, 32, cudart.In(x2), cudart.Out(y2), cudart.ScalarU32(32))
	kc, _ = cov.Kernel(hex.EncodeToString(sum[:]), "cover")
	if c, n := kc.Directions(); c != 3 || n != 4 || kc.Launches != 2 {
		t.Errorf("after n = 32: directions %d/%d in %d launches, want 3/4 in 2", c, n, kc.Launches)
	}
	if g := kc.Guards[0]; !g.True || !g.False {
		t.Errorf("guard of the mov after a negative x: %+v; want both", g)
	}
	if len(cov.Kernels()) != 1 {
		t.Errorf("Kernels: %d, want 1", len(cov.Kernels()))
	}
}

// TestCoverageTwoDevices checks that one module on two emulators is one
// kernel of a Coverage, their launches' coverage added up.
func TestCoverageTwoDevices(t *testing.T) {
	cov := NewCoverage()
	for _, n := range []uint32{4, 2000} {
		e := newEnvSrc(t, "cover.ptx", []byte(coverPTX), Config{Coverage: cov})
		e.b.workers = 2 // the second launch's CTAs run in parallel, each with its own bytes
		x := e.in(make([]float32, 64))
		y := e.buf(cudart.U32, 64)
		e.mustLaunch("cover", 2, 32, cudart.In(x), cudart.Out(y), cudart.ScalarU32(n))
		if n == 2000 && e.b.parallelRuns != 1 {
			t.Errorf("the launch with n = 2000 ran its CTAs one at a time: the parallel path is not tested")
		}
	}
	ks := cov.Kernels()
	if len(ks) != 1 {
		t.Fatalf("%d kernels, want 1", len(ks))
	}
	if c, n := ks[0].Directions(); c != 4 || n != 4 {
		t.Errorf("directions %d/%d, want 4/4", c, n)
	}
	if c, n := ks[0].BlocksCovered(); c != 4 || n != 4 {
		t.Errorf("blocks %d/%d, want 4/4", c, n)
	}
}
