package emu

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestTritonStyleRowSum runs PTX in the form Triton 3.6 emits for sm_90a
// (testdata/foreign/row_sum.ptx): .ptr .global .align 1 parameters laid out
// at their natural alignment after a .u32, the .extern shared scratch sized
// by the launch's dynamic shared memory, predicated vector loads,
// shfl.sync.bfly, bfe, rem, an .acq_rel atomic and .reqntid.
func TestTritonStyleRowSum(t *testing.T) {
	e := newEnv(t, "foreign/row_sum.ptx", Config{})
	rows, n := 5, 100
	x := make([]float32, rows*n)
	for i := range x {
		x[i] = float32(i%7 - 3) // small integers: every order of summation is exact
	}
	out := e.buf(cudart.F32, rows)
	counter := e.in([]uint32{0})
	scratch := e.buf(cudart.F32, 1)
	geo := cudart.Geometry{Grid: cudart.D1(rows), Block: cudart.D1(64), SharedBytes: 8}
	params := []cudart.Param{cudart.In(e.in(x)), cudart.ScalarI32(int32(n)), cudart.Out(out), cudart.InOut(counter),
		cudart.In(scratch), cudart.In(scratch)}
	if err := e.dev.Launch(e.mod, "row_sum_kernel", geo, params...); err != nil {
		t.Fatal(err)
	}
	for r, got := range e.f32s(out) {
		var want float32
		for _, v := range x[r*n : r*n+n] {
			want += v
		}
		if got != want {
			t.Errorf("out[%d] = %g, want %g", r, got, want)
		}
	}
	if c := e.u32s(counter)[0]; c != uint32(rows) {
		t.Errorf("counter = %d, want %d", c, rows)
	}
	// global_smem has exactly the launch's dynamic shared memory: 4 bytes
	// are too few for the two warps' partial sums.
	geo.SharedBytes = 4
	err := e.dev.Launch(e.mod, "row_sum_kernel", geo, params...)
	wantErr(t, err, cudart.ErrOutOfBounds, "shared")
	// .reqntid 64 holds.
	geo.SharedBytes, geo.Block = 8, cudart.D1(32)
	err = e.dev.Launch(e.mod, "row_sum_kernel", geo, params...)
	if !errors.Is(err, cudart.ErrLaunch) || !strings.Contains(err.Error(), ".reqntid") {
		t.Errorf("a block of 32 threads: err = %v, want ErrLaunch naming .reqntid", err)
	}
}
