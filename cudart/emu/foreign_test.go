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
	out := e.buf(cudart.F32, 2*rows)
	counter := e.in([]uint32{0})
	scratch := e.buf(cudart.F32, 1)
	geo := cudart.Geometry{Grid: cudart.D1(rows), Block: cudart.D1(64), SharedBytes: 8}
	params := []cudart.Param{cudart.In(e.in(x)), cudart.ScalarI32(int32(n)), cudart.Out(out), cudart.InOut(counter),
		cudart.In(scratch), cudart.In(scratch)}
	if err := e.dev.Launch(e.mod, "row_sum_kernel", geo, params...); err != nil {
		t.Fatal(err)
	}
	got := e.f32s(out)
	for r := 0; r < rows; r++ {
		var sum, first float32
		for i, v := range x[r*n : r*n+n] {
			sum += v
			if i < 64 {
				first += v
			}
		}
		if got[2*r] != sum || got[2*r+1] != first {
			t.Errorf("row %d: sums %g, %g, want %g, %g", r, got[2*r], got[2*r+1], sum, first)
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
