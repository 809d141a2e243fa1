package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// BenchmarkRMSNormBackward runs the one-warp-per-row RMSNorm backward
// kernel (shuffle reductions and strided loops) and reports the emulator's
// speed in thread-instructions per second of elapsed and of CPU time, on
// one core and on two (its 32 CTAs run in parallel):
//
//	go test ./cudart/emu -run '^$' -bench 'RMSNormBackward/256x1024/nochecks$' -benchtime 200x -cpu 1,2
func BenchmarkRMSNormBackward(b *testing.B) {
	for _, shape := range []struct {
		name         string
		rows, hidden int
		checks       bool
	}{{"256x1024", 256, 1024, true}, {"256x1024/nochecks", 256, 1024, false}} {
		b.Run(shape.name, func(b *testing.B) {
			cfg := Config{}
			if !shape.checks {
				cfg = Config{NoRaceCheck: true, AllowUninitShared: true, AllowUninitLocal: true}
			}
			e := newEnv(b, "kernels.ptx", cfg)
			opts := e.dev.Options()
			opts.Poison, opts.VerifyInputs, opts.CheckGuards = false, false, false
			e.dev.SetOptions(opts)
			n := shape.rows * shape.hidden
			r := rand.New(rand.NewPCG(1, 2))
			x, dy, g := make([]float32, n), make([]float32, n), make([]float32, shape.hidden)
			for i := range x {
				x[i], dy[i] = r.Float32(), r.Float32()
			}
			for i := range g {
				g[i] = r.Float32()
			}
			bx, bdy, bg, bdx := e.in(x), e.in(dy), e.in(g), e.buf(cudart.F32, n)
			warps := 8
			geo := cudart.Geometry{Grid: cudart.D1((shape.rows + warps - 1) / warps), Block: cudart.D1(32 * warps)}
			launch := func() error {
				return e.dev.Launch(e.mod, "rmsnorm_bwd", geo, cudart.In(bx), cudart.In(bg), cudart.In(bdy), cudart.Out(bdx),
					cudart.ScalarI32(int32(shape.rows)), cudart.ScalarI32(int32(shape.hidden)), cudart.ScalarF32(1e-5))
			}
			// The first launch decodes the rsqrt.approx table, once per
			// process and on one core; the benchmark measures the launches
			// after it.
			if err := launch(); err != nil {
				b.Fatal(err)
			}
			var insts int64
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if err := launch(); err != nil {
					b.Fatal(err)
				}
				insts += e.b.Stats().ThreadInstructions
			}
			b.ReportMetric(float64(insts)/b.Elapsed().Seconds(), "thread-inst/s")
			if cpu := processCPU() - cpu0; cpu > 0 {
				// On a shared machine the CPU time, summed over cores, says
				// what the elapsed time cannot: the cost of the work.
				b.ReportMetric(float64(insts)/cpu.Seconds(), "thread-inst/cpu-s")
			}
			b.ReportMetric(float64(insts)/float64(b.N), "thread-inst/op")
		})
	}
}
