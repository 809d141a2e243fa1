package emu

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

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
			e, launch := rmsnormBwd(b, shape.rows, shape.hidden, shape.checks)
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

// rmsnormBwd sets up BenchmarkRMSNormBackward's launch on rows×hidden
// and launches it once: the first launch decodes the rsqrt.approx table,
// once per process and on one core, and the benchmarks measure the
// launches after it.
func rmsnormBwd(b *testing.B, rows, hidden int, checks bool) (*env, func() error) {
	cfg := Config{}
	if !checks {
		cfg = Config{NoRaceCheck: true, AllowUninitShared: true, AllowUninitLocal: true}
	}
	e := newEnv(b, "kernels.ptx", cfg)
	opts := e.dev.Options()
	opts.Poison, opts.VerifyInputs, opts.CheckGuards = false, false, false
	e.dev.SetOptions(opts)
	n := rows * hidden
	r := rand.New(rand.NewPCG(1, 2))
	x, dy, g := make([]float32, n), make([]float32, n), make([]float32, hidden)
	for i := range x {
		x[i], dy[i] = r.Float32(), r.Float32()
	}
	for i := range g {
		g[i] = r.Float32()
	}
	bx, bdy, bg, bdx := e.in(x), e.in(dy), e.in(g), e.buf(cudart.F32, n)
	warps := 8
	geo := cudart.Geometry{Grid: cudart.D1((rows + warps - 1) / warps), Block: cudart.D1(32 * warps)}
	launch := func() error {
		return e.dev.Launch(e.mod, "rmsnorm_bwd", geo, cudart.In(bx), cudart.In(bg), cudart.In(bdy), cudart.Out(bdx),
			cudart.ScalarI32(int32(rows)), cudart.ScalarI32(int32(hidden)), cudart.ScalarF32(1e-5))
	}
	if err := launch(); err != nil {
		b.Fatal(err)
	}
	return e, launch
}

// BenchmarkParallelSpeedup measures what the second core gives
// BenchmarkRMSNormBackward's launch: each iteration launches it once on
// one core (the serial path) and once on two (the parallel path), on the
// same backend, so that both see the same machine; speedup is the ratio
// of their summed elapsed times. A shared machine whose speed drifts
// moves both alike.
//
//	go test ./cudart/emu -run '^$' -bench ParallelSpeedup -benchtime 200x -cpu 2
func BenchmarkParallelSpeedup(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two cores: run with -cpu 2")
	}
	e, launch := rmsnormBwd(b, 256, 1024, false)
	var t [2]time.Duration
	var insts [2]int64
	var par int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, workers := range []int{1, 2} {
			if i&1 == 1 {
				k, workers = 1-k, 2-k // alternate which goes first
			}
			e.b.workers = workers
			before := e.b.parallelRuns
			start := time.Now()
			if err := launch(); err != nil {
				b.Fatal(err)
			}
			t[k] += time.Since(start)
			insts[k] += e.b.Stats().ThreadInstructions
			par += e.b.parallelRuns - before
		}
	}
	if par != b.N {
		b.Fatalf("%d of %d two-core launches ran in parallel", par, b.N)
	}
	b.ReportMetric(float64(insts[0])/t[0].Seconds(), "1core-thread-inst/s")
	b.ReportMetric(float64(insts[1])/t[1].Seconds(), "2core-thread-inst/s")
	b.ReportMetric(t[0].Seconds()/t[1].Seconds(), "speedup")
}
