package emu

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// scalePTX: y[i] = 2·x[i] for i in [lo, hi) (signed, so lo may be
// negative), and, when poke is set, x[poke-1] = 0: stores outside y's
// bounds and into its input on demand.
const scalePTX = `.version 7.0
.target sm_70
.address_size 64

.visible .entry scale(
	.param .u64 x,
	.param .u64 y,
	.param .u32 lo,
	.param .u32 hi,
	.param .u32 poke
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<10>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<8>;

	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [y];
	ld.param.u32 %r1, [lo];
	ld.param.u32 %r2, [hi];
	ld.param.u32 %r3, [poke];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r5, %ntid.x;
	mov.u32 %r6, %tid.x;
	mad.lo.s32 %r7, %r4, %r5, %r6;
	add.s32 %r7, %r7, %r1;
	setp.ge.s32 %p1, %r7, %r2;
	@%p1 bra DONE;
	max.s32 %r8, %r7, 0;
	mul.wide.s32 %rd3, %r8, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, %f1;
	mul.wide.s32 %rd5, %r7, 4;
	add.s64 %rd6, %rd2, %rd5;
	st.global.f32 [%rd6], %f2;
	setp.eq.s32 %p2, %r7, 0;
	setp.ne.and.u32 %p2, %r3, 0, %p2;
	@!%p2 bra DONE;
	add.s32 %r9, %r3, -1;
	mul.wide.u32 %rd7, %r9, 4;
	add.s64 %rd7, %rd1, %rd7;
	st.global.f32 [%rd7], 0f00000000;
DONE:
	ret;
}
`

func TestDeviceChecks(t *testing.T) {
	for _, n := range []int32{1 << 19, 1000} { // 2 MiB: compared on the device; 4 KB: gathered back
		testDeviceChecks(t, n)
	}
}

func testDeviceChecks(t *testing.T, n int32) {
	cases := []struct {
		name          string
		lo, hi, poke  int32
		want          error
		wantSubstring string
	}{
		{"clean", 0, n, 0, nil, ""},
		{"one past the end", 0, n + 1, 0, cudart.ErrGuardBand, "1 past its end"},
		{"three before the start", -3, n, 0, cudart.ErrGuardBand, "1 element(s) before its start"}, // the nearest damage, as from the host
		{"input stored to", 0, n, 100, cudart.ErrInputModified, "element 99 changed"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%s", n, c.name), func(t *testing.T) {
			opts := cudart.DefaultOptions()
			opts.Watchdog = 0
			e := newEnvOn(t, "scale", []byte(scalePTX), Checked{New(Config{})}, opts)
			host := make([]float32, int(n))
			for i := range host {
				host[i] = float32(i)
			}
			x, y := e.in(host), e.buf(cudart.F32, int(n))
			grid := int(n+4+255) / 256
			err := e.launch("scale", grid, 256, cudart.In(x), cudart.Out(y), cudart.ScalarI32(c.lo), cudart.ScalarI32(c.hi), cudart.ScalarU32(uint32(c.poke)))
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				got := e.f32s(y)
				for i := range got {
					if got[i] != 2*float32(i) {
						t.Fatalf("y[%d] = %g", i, got[i])
					}
				}
				if k := e.b.Stats().Kernel; k != "ptxprop_verify" {
					t.Errorf("last emulated kernel %q, want ptxprop_verify: the large buffers were not checked on the device", k)
				}
				// Again with new data and a shorter range: the write and the
				// output's poison are made by the pass before the kernel.
				for i := range host {
					host[i] = -float32(i)
				}
				if err := e.dev.Write(x, host); err != nil {
					t.Fatal(err)
				}
				e.mustLaunch("scale", grid, 256, cudart.In(x), cudart.Out(y), cudart.ScalarI32(0), cudart.ScalarI32(n-1), cudart.ScalarU32(0))
				got = e.f32s(y)
				for i := range got[:n-1] {
					if got[i] != -2*float32(i) {
						t.Fatalf("second launch: y[%d] = %g", i, got[i])
					}
				}
				if bits := math.Float32bits(got[n-1]); bits != cudart.PoisonF32 {
					t.Fatalf("second launch: unwritten y[%d] = %#x, want the poison", n-1, bits)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantSubstring) {
				t.Fatalf("err = %v, want %v with %q", err, c.want, c.wantSubstring)
			}
		})
	}
}
