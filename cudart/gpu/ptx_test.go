//go:build cuda

package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart/internal/ptxas"
)

// The test kernels, hand-written PTX. sm_80 is the oldest target every
// driver from CUDA 11.8 to 13 JIT-compiles for a Hopper GPU.
const ptxHeader = ".version 7.0\n.target sm_80\n.address_size 64\n\n"

// echoPTX writes its parameters back, widened to u64 slots, so the test can
// check every bit: out[0]=a, out[1]=bits(b), out[2]=c, out[3]=out itself,
// out[4]=bits(d), out[5]=e. The signature mixes sizes (4,4,8,8,8,4) so a
// parameter marshalled at the wrong size or offset shows.
const echoPTX = ptxHeader + `.visible .entry echo(
	.param .u32 a,
	.param .f32 b,
	.param .u64 c,
	.param .u64 out,
	.param .f64 d,
	.param .u32 e
)
{
	.reg .b32 %r<4>;
	.reg .f32 %f<2>;
	.reg .f64 %fd<2>;
	.reg .b64 %rd<9>;

	ld.param.u32 %r1, [a];
	ld.param.f32 %f1, [b];
	ld.param.u64 %rd1, [c];
	ld.param.u64 %rd2, [out];
	ld.param.f64 %fd1, [d];
	ld.param.u32 %r3, [e];
	cvta.to.global.u64 %rd3, %rd2;
	cvt.u64.u32 %rd4, %r1;
	st.global.u64 [%rd3], %rd4;
	mov.b32 %r2, %f1;
	cvt.u64.u32 %rd5, %r2;
	st.global.u64 [%rd3+8], %rd5;
	st.global.u64 [%rd3+16], %rd1;
	st.global.u64 [%rd3+24], %rd2;
	mov.b64 %rd6, %fd1;
	st.global.u64 [%rd3+32], %rd6;
	cvt.u64.u32 %rd7, %r3;
	st.global.u64 [%rd3+40], %rd7;
	ret;
}
`

// fillPTX: out[i] = float(i) for i < n, except i == skip.
const fillPTX = ptxHeader + `.visible .entry fill(
	.param .u64 out,
	.param .u32 n,
	.param .u32 skip
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.reg .f32 %f<2>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	ld.param.u32 %r2, [skip];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r6, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra DONE;
	setp.eq.u32 %p2, %r6, %r2;
	@%p2 bra DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd2, %rd3;
	cvt.rn.f32.u32 %f1, %r6;
	st.global.f32 [%rd4], %f1;
DONE:
	ret;
}
`

// addkPTX: out[i] = i + k (u32) for i < n.
const addkPTX = ptxHeader + `.visible .entry addk(
	.param .u64 out,
	.param .u32 n,
	.param .u32 k
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<9>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	ld.param.u32 %r2, [k];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r6, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd2, %rd3;
	add.u32 %r7, %r6, %r2;
	st.global.u32 [%rd4], %r7;
DONE:
	ret;
}
`

// spinPTX busy-waits on the global nanosecond timer for ns nanoseconds: to
// the watchdog it is an infinite loop, but it ends, so the GPU is freed for
// the tests that follow.
const spinPTX = ptxHeader + `.visible .entry spin(
	.param .u64 ns
)
{
	.reg .pred %p<2>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [ns];
	mov.u64 %rd2, %globaltimer;
LOOP:
	mov.u64 %rd3, %globaltimer;
	sub.u64 %rd4, %rd3, %rd2;
	setp.lt.u64 %p1, %rd4, %rd1;
	@%p1 bra LOOP;
	ret;
}
`

// storePTX stores 1 to the raw address p: given an unmapped address, an
// illegal address fault.
const storePTX = ptxHeader + `.visible .entry store(
	.param .u64 p
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;

	ld.param.u64 %rd1, [p];
	mov.u32 %r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}
`

// shmPTX uses dynamic shared memory up to byte limit-4: each thread stores
// its index at the top of shared memory, and thread 0 reads it back after a
// barrier. It proves a launch above the default 48 KiB limit works.
const shmPTX = ptxHeader + `.extern .shared .align 16 .b8 smem[];

.visible .entry shm(
	.param .u64 out,
	.param .u32 limit
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<3>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [limit];
	mov.u32 %r2, %tid.x;
	sub.u32 %r3, %r1, 4;
	mov.u32 %r4, smem;
	add.u32 %r5, %r4, %r3;
	setp.eq.u32 %p1, %r2, 7;
	@%p1 st.shared.u32 [%r5], %r2;
	bar.sync 0;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra DONE;
	ld.shared.u32 %r2, [%r5];
	cvta.to.global.u64 %rd2, %rd1;
	st.global.u32 [%rd2], %r2;
DONE:
	ret;
}
`

// konstPTX returns a kernel writing the constant k to out[i] for i < n: the
// same entry name and text, specialised by one constant, as a code
// generator would.
func konstPTX(k uint32) string {
	return ptxHeader + fmt.Sprintf(`.visible .entry konst(
	.param .u64 out,
	.param .u32 n
)
{
	.reg .pred %%p<2>;
	.reg .b32 %%r<8>;
	.reg .b64 %%rd<5>;

	ld.param.u64 %%rd1, [out];
	ld.param.u32 %%r1, [n];
	mov.u32 %%r3, %%ctaid.x;
	mov.u32 %%r4, %%ntid.x;
	mov.u32 %%r5, %%tid.x;
	mad.lo.s32 %%r6, %%r3, %%r4, %%r5;
	setp.ge.u32 %%p1, %%r6, %%r1;
	@%%p1 bra DONE;
	cvta.to.global.u64 %%rd2, %%rd1;
	mul.wide.u32 %%rd3, %%r6, 4;
	add.s64 %%rd4, %%rd2, %%rd3;
	mov.u32 %%r7, %d;
	st.global.u32 [%%rd4], %%r7;
DONE:
	ret;
}
`, k)
}

// badPTX does not assemble: the JIT log must say why.
const badPTX = ptxHeader + `.visible .entry bad()
{
	frobnicate.u32 %r1, 42;
	ret;
}
`

// TestPTXAssembles checks the test kernels with the toolkit's ptxas when one
// is on PATH; it needs no GPU, so it runs on a build machine too.
func TestPTXAssembles(t *testing.T) {
	texts := map[string]string{
		"echo": echoPTX, "fill": fillPTX, "addk": addkPTX, "spin": spinPTX, "store": storePTX,
		"shm": shmPTX, "hold": holdPTX, "konst1": konstPTX(1111), "konst2": konstPTX(2222), "bad": badPTX,
	}
	for name, text := range texts {
		out, err := ptxas.Assemble(t, "sm_80", name, text)
		if name == "bad" {
			if err == nil {
				t.Errorf("ptxas accepted bad PTX")
			}
			continue
		}
		if err != nil || strings.Contains(string(out), "error") {
			t.Errorf("%s: ptxas: %v\n%s", name, err, out)
		}
	}
}
