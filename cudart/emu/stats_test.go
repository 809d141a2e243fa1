package emu

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// statsPTX moves a known number of global bytes per active lane: a
// 16-byte vector load, a 4-byte store through a generic address, a 4-byte
// atomic, and shared and parameter accesses that are not global.
const statsPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 ctr, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<12>;
	.shared .align 4 .b32 s[64];
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	ld.param.u64 %rd3, [ctr];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd4, %r2, 16;
	add.s64 %rd5, %rd1, %rd4;
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5];
	add.f32 %f5, %f1, %f4;
	mov.u32 %r4, s;
	shl.b32 %r5, %r2, 2;
	add.u32 %r4, %r4, %r5;
	st.shared.f32 [%r4], %f5;
	ld.shared.f32 %f6, [%r4];
	mul.wide.u32 %rd6, %r2, 4;
	add.s64 %rd7, %rd2, %rd6;
	cvta.global.u64 %rd8, %rd7;
	st.f32 [%rd8], %f6;
	atom.global.add.u32 %r3, [%rd3], 1;
DONE:
	ret;
}
`

// TestLaunchStatsGlobalBytes checks the global bytes a launch reports
// against the kernel's accesses: per active lane 16 loaded, 4 stored (a
// generic address that is global), 4 atomically; shared and parameter
// accesses and the lanes the guard leaves out count nothing. The counts
// are the same on a second launch and on a seeded schedule.
func TestLaunchStatsGlobalBytes(t *testing.T) {
	const n, block = 37, 64
	for _, seed := range []int64{0, 5} {
		e := newEnvSrc(t, "stats", []byte(statsPTX), Config{Seed: seed})
		in := e.in(make([]float32, 4*block))
		out := e.buf(cudart.F32, block)
		ctr := e.in([]uint32{0})
		var first LaunchStats
		for i := range 2 {
			e.mustLaunch("k", 1, block, cudart.Out(out), cudart.In(in), cudart.InOut(ctr), cudart.ScalarU32(n))
			st := e.b.Stats()
			if st.GlobalLoadBytes != 16*n || st.GlobalStoreBytes != 4*n || st.GlobalAtomicBytes != 4*n || st.GlobalBytes() != 24*n {
				t.Fatalf("seed %d: load/store/atomic/total bytes %d/%d/%d/%d, want %d/%d/%d/%d",
					seed, st.GlobalLoadBytes, st.GlobalStoreBytes, st.GlobalAtomicBytes, st.GlobalBytes(), 16*n, 4*n, 4*n, 24*n)
			}
			if i == 0 {
				first = st
			} else if st.ThreadInstructions != first.ThreadInstructions || st.WarpInstructions != first.WarpInstructions {
				t.Errorf("seed %d: second launch %d thread / %d warp instructions, first %d / %d",
					seed, st.ThreadInstructions, st.WarpInstructions, first.ThreadInstructions, first.WarpInstructions)
			}
		}
	}
}
