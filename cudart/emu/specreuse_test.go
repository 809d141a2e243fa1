package emu

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestParallelReusesState runs one launch whose CTAs write disjoint words
// three times on a Backend, after the one that shows its CTAs read what
// they write (TestParallelUnnotedReads): each run must again be parallel
// (state kept from the one before — page structures, private pages,
// summaries — must come back clean, or it reads as a conflict) and give
// the same words.
func TestParallelReusesState(t *testing.T) {
	e := newEnvSrc(t, "chain.ptx", []byte(chainPTX), Config{})
	e.b.workers = 4
	e.mustLaunch("chain", 64, 32, cudart.InOut(e.in(make([]int32, 65))), cudart.ScalarI32(0), cudart.ScalarI32(4))
	if e.b.parallelRuns != 0 {
		t.Fatal("a launch whose CTAs read unnoted what they then write ran in parallel")
	}
	for run := 1; run <= 3; run++ {
		p := e.in(make([]int32, 65))
		e.mustLaunch("chain", 64, 32, cudart.InOut(p), cudart.ScalarI32(0), cudart.ScalarI32(4))
		for c, got := range e.i32s(p)[:64] {
			if got != 1 {
				t.Fatalf("run %d: p[%d] = %d, want 1", run, c, got)
			}
		}
		if e.b.parallelRuns != run {
			t.Fatalf("run %d: %d launches ran in parallel, want %d", run, e.b.parallelRuns, run)
		}
	}
}

// gatherPTX: thread 0 of every block writes 1 to out[block], except
// block 63, which first reads out[40..47] (written by blocks that are
// never the first a worker runs) and writes 1 plus their sum.
const gatherPTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry gather_last(.param .u64 out)
{
	.reg .pred %p<3>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %tid.x;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra done;
	mov.u32 %r3, 1;
	setp.ne.u32 %p2, %r1, 63;
	@%p2 bra store;
	mov.u32 %r4, 40;
loop:
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.u32 %r5, [%rd3];
	add.s32 %r3, %r3, %r5;
	add.s32 %r4, %r4, 1;
	setp.lt.u32 %p2, %r4, 48;
	@%p2 bra loop;
store:
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd5, %rd1, %rd4;
	st.global.u32 [%rd5], %r3;
done:
	ret;
}
`

// TestParallelLaterCTAConflict: a block reads what blocks wrote that ran
// second or later on their workers; the parallel run must see the
// conflict (their accesses count as much as a worker's first block's),
// whichever worker ran which block, and leave the launch to the serial
// run.
func TestParallelLaterCTAConflict(t *testing.T) {
	for run := range 4 {
		// Runs 1-3 on one Backend, after run 0 made the kernel note every
		// read (as it would when block 63 reads before any block writes).
		e := newEnvSrc(t, "gather.ptx", []byte(gatherPTX), Config{})
		e.b.workers = 4
		if run > 0 {
			e.kernel("gather_last").trackReads = true
		}
		out := e.in(make([]int32, 64))
		e.mustLaunch("gather_last", 64, 32, cudart.InOut(out))
		if e.b.parallelRuns != 0 {
			t.Fatalf("run %d: the conflict went unseen: the launch ran in parallel", run)
		}
		for i, got := range e.i32s(out) {
			want := int32(1)
			if i == 63 {
				want = 9
			}
			if got != want {
				t.Fatalf("run %d: out[%d] = %d, want %d", run, i, got, want)
			}
		}
	}
}
