package emu

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestLargeLaunch runs RMSNorm backward over 1000×8192 floats (32 MiB per
// tensor) with every check on. Skipped with -short.
func TestLargeLaunch(t *testing.T) {
	if testing.Short() {
		t.Skip("large launch")
	}
	e := newEnv(t, "kernels.ptx", Config{})
	rows, hidden := 1000, 8192
	n := rows * hidden
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%97) / 97
	}
	g := make([]float32, hidden)
	for i := range g {
		g[i] = 1
	}
	bx, bg := e.in(x), e.in(g)
	out := e.buf(cudart.F32, n)
	e.mustLaunch("rmsnorm_bwd", rows/8, 256, cudart.In(bx), cudart.In(bg), cudart.In(bx), cudart.Out(out),
		cudart.ScalarI32(int32(rows)), cudart.ScalarI32(int32(hidden)), cudart.ScalarF32(1e-5))
	counts, err := e.dev.WriteCounts(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range counts {
		if c != 1 {
			t.Fatalf("element %d written %d times", i, c)
		}
	}
	t.Log(e.b.Stats())
}
