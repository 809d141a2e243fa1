package emu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

func TestReduceSum(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	for _, tc := range []struct{ n, grid, block int }{{1, 1, 32}, {1000, 4, 128}, {4097, 3, 256}, {77, 2, 96}} {
		in := make([]float32, tc.n)
		var want []float64 = make([]float64, tc.grid)
		for i := range in {
			in[i] = float32(i%17) - 8
		}
		for b := 0; b < tc.grid; b++ {
			for i := b * tc.block; i < tc.n; i += tc.grid * tc.block {
				for j := i; j < min(i+tc.block, tc.n); j++ {
					want[b] += float64(in[j])
				}
			}
		}
		out := e.buf(cudart.F32, tc.grid)
		e.mustLaunch("reduce_sum", tc.grid, tc.block, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(int32(tc.n)))
		for b, got := range e.f32s(out) {
			if float64(got) != want[b] {
				t.Errorf("n=%d grid=%d block=%d: block %d sum = %g, want %g", tc.n, tc.grid, tc.block, b, got, want[b])
			}
		}
	}
}

func TestSinUsesGlobalTableAndLocalMemory(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	xs := []float32{0, 1, -1, 3.14159265, 100, -1234.5, 1e5, 3e7, -8.5e20, 1e30, float32(math.Inf(1)), float32(math.NaN()), 1e-40}
	out := e.buf(cudart.F32, len(xs))
	e.mustLaunch("sin_kernel", 1, 32, cudart.In(e.in(xs)), cudart.Out(out), cudart.ScalarI32(int32(len(xs))))
	for i, got := range e.f32s(out) {
		want := math.Sin(float64(xs[i]))
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) {
				t.Errorf("sinf(%g) = %g, want NaN", xs[i], got)
			}
			continue
		}
		// CUDA's sinf is accurate to 2 ulp over the whole range.
		if ulps := math.Abs(float64(got)-want) / ulp32(float32(want)); ulps > 2 {
			t.Errorf("sinf(%g) = %g, want %g (%.1f ulp)", xs[i], got, want, ulps)
		}
	}
}

func ulp32(x float32) float64 {
	a := float32(math.Abs(float64(x)))
	return float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
}

func TestDivergentBranches(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	n := 200
	in := make([]int32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range in {
		in[i] = int32(r.IntN(1000))
	}
	out := e.buf(cudart.I32, n)
	e.mustLaunch("divergent", 4, 64, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(int32(n)))
	acc := func(v int32) int32 {
		switch {
		case v%3 == 0:
			var a int32
			for k := int32(0); k < v%7; k++ {
				a += k * v
			}
			return a
		case v%3 == 1:
			a := v
			for a < 5000 {
				a = a*2 + 3
			}
			return a
		}
		switch v & 3 {
		case 0:
			return 1
		case 1:
			return v << 2
		}
		return v ^ 0x55
	}
	got := e.i32s(out)
	for i := 0; i < n; i++ {
		want := acc(in[i])
		if i%64%32 != 0 {
			want += acc(in[i-1])
		}
		if got[i] != want {
			t.Fatalf("out[%d] = %d, want %d (in %d)", i, got[i], want, in[i])
		}
	}
}

func TestAtomicSumDependsOnSchedule(t *testing.T) {
	n := 4096
	in := make([]float32, n)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range in {
		in[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4)))
	}
	sum := func(seed int64) uint32 {
		e := newEnv(t, "kernels.ptx", Config{Seed: seed})
		out := e.in([]float32{0})
		e.mustLaunch("atomic_sum", n/128, 128, cudart.In(e.in(in)), cudart.InOut(out), cudart.ScalarI32(int32(n)))
		return math.Float32bits(e.f32s(out)[0])
	}
	base := sum(0)
	if again := sum(0); again != base {
		t.Fatalf("seed 0 is not reproducible: %#x vs %#x", base, again)
	}
	differs := false
	for seed := int64(1); seed <= 8; seed++ {
		a, b := sum(seed), sum(seed)
		if a != b {
			t.Fatalf("seed %d is not reproducible: %#x vs %#x", seed, a, b)
		}
		differs = differs || a != base
	}
	if !differs {
		t.Fatalf("float atomicAdd gave the same bits %#x under 9 schedules", base)
	}
}

func TestWriteCounts(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	n, k := 300, 17
	out := e.buf(cudart.F32, n)
	e.mustLaunch("write_twice", 3, 128, cudart.Out(out), cudart.ScalarI32(int32(n)), cudart.ScalarI32(int32(k)))
	counts, err := e.dev.WriteCounts(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range counts {
		want := uint32(1)
		if i < k {
			want = 2
		}
		if c != want {
			t.Fatalf("element %d written %d times, want %d", i, c, want)
		}
	}
	// Counts are per launch: a launch that writes fewer elements resets them.
	e.mustLaunch("write_twice", 1, 32, cudart.Out(out), cudart.ScalarI32(10), cudart.ScalarI32(0))
	counts, _ = e.dev.WriteCounts(out)
	for i, c := range counts {
		want := uint32(0)
		if i < 10 {
			want = 1
		}
		if c != want {
			t.Fatalf("second launch: element %d written %d times, want %d", i, c, want)
		}
	}
}

func TestDynamicSharedMemory(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	n, block := 200, 64
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	out := e.buf(cudart.F32, n)
	err := e.dev.Launch(e.mod, "dyn_reverse", cudart.Geometry{Grid: cudart.D1(4), Block: cudart.D1(block), SharedBytes: 4 * block},
		cudart.In(e.in(in)), cudart.InOut(out), cudart.ScalarI32(int32(n)))
	if err != nil {
		t.Fatal(err)
	}
	got := e.f32s(out)
	for b := 0; b < 4; b++ {
		for tI := 0; tI < block; tI++ {
			j := b*block + (block - 1 - tI)
			i := b*block + tI
			if j < n {
				want := float32(0)
				if i < n {
					want = in[i]
				}
				if got[j] != want {
					t.Fatalf("out[%d] = %g, want %g", j, got[j], want)
				}
			}
		}
	}
	// Too little dynamic shared memory is an out-of-bounds access.
	err = e.dev.Launch(e.mod, "dyn_reverse", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(block), SharedBytes: 4 * (block - 1)},
		cudart.In(e.in(in)), cudart.InOut(out), cudart.ScalarI32(int32(n)))
	wantErr(t, err, cudart.ErrOutOfBounds, "shared", "beyond")
}

func TestLocalArrayAndCall(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	n := 100
	in := make([]int32, n)
	for i := range in {
		in[i] = int32(i*37 + 5)
	}
	out := e.buf(cudart.I32, n)
	e.mustLaunch("local_array", 1, 128, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(int32(n)))
	for i, got := range e.i32s(out) {
		v := in[i]
		if want := v*(v&15) + v*((v>>4)&15); got != want {
			t.Fatalf("local_array[%d] = %d, want %d", i, got, want)
		}
	}
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i+1)
	}
	yb := e.in(y)
	e.mustLaunch("call_kernel", 1, 128, cudart.In(e.in(x)), cudart.InOut(yb), cudart.ScalarF32(3), cudart.ScalarI32(int32(n)))
	for i, got := range e.f32s(yb) {
		if want := 3*x[i] + y[i]; got != want {
			t.Fatalf("call_kernel[%d] = %g, want %g", i, got, want)
		}
	}
}

func TestBarrierReductions(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	in := make([]int32, 2*96)
	for i := range in {
		in[i] = 1
	}
	in[5] = -3 // block 0: 95 positive
	for i := 96; i < 192; i++ {
		in[i] = -1 // block 1: none positive
	}
	out := e.buf(cudart.I32, 6)
	e.mustLaunch("bar_red", 2, 96, cudart.In(e.in(in)), cudart.Out(out))
	want := []int32{95, 0, 1, 0, 0, 0}
	for i, got := range e.i32s(out) {
		if got != want[i] {
			t.Errorf("bar_red out[%d] = %d, want %d (all %v)", i, got, want[i], e.i32s(out))
		}
	}
}

func TestEarlyExitBeforeBarrier(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{})
	n := 70
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	out := e.buf(cudart.F32, n)
	e.mustLaunch("early_exit", 1, 256, cudart.In(e.in(in)), cudart.Out(out), cudart.ScalarI32(int32(n)))
	for i, got := range e.f32s(out) {
		if want := float32(n - 1 - i); got != want {
			t.Fatalf("out[%d] = %g, want %g", i, got, want)
		}
	}
}

func TestGrid3D(t *testing.T) {
	e := newEnv(t, "kernels.ptx", Config{Seed: 7})
	w, h := 37, 21
	out := e.buf(cudart.I32, w*h)
	g := cudart.Geometry{Grid: cudart.Dim3{X: 3, Y: 3, Z: 2}, Block: cudart.Dim3{X: 16, Y: 8, Z: 1}}
	if err := e.dev.Launch(e.mod, "grid2d", g, cudart.InOut(out), cudart.ScalarI32(int32(w)), cudart.ScalarI32(int32(h))); err == nil {
		t.Fatalf("blocks with z=0 and z=1 both store every element: want a cross-block race")
	} else {
		wantErr(t, err, cudart.ErrRace, "block")
	}
	g.Grid.Z = 1
	if err := e.dev.Launch(e.mod, "grid2d", g, cudart.Out(out), cudart.ScalarI32(int32(w)), cudart.ScalarI32(int32(h))); err != nil {
		t.Fatal(err)
	}
	for i, got := range e.i32s(out) {
		if want := int32(i%w + 1000*(i/w)); got != want {
			t.Fatalf("out[%d] = %d, want %d", i, got, want)
		}
	}
}

func TestInfoAndRegistration(t *testing.T) {
	if !cudart.Registered("emu") {
		t.Fatal("emu backend not registered")
	}
	dev, err := cudart.Open("emu", cudart.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if info := dev.Info(); info.Backend != "emu" || info.Name != "ptxprop PTX emulator (warp 32, approximate instructions as sm_90)" {
		t.Fatalf("Info() = %+v", info)
	}
}

func TestNamedBarrierProducerConsumer(t *testing.T) {
	for _, seed := range []int64{0, 1, 2, 3} {
		e := newEnv(t, "kernels.ptx", Config{Seed: seed})
		out := e.buf(cudart.I32, 32)
		e.mustLaunch("named_barrier", 1, 64, cudart.Out(out))
		for lane, got := range e.i32s(out) {
			if want := int32((31 - lane) * (31 - lane)); got != want {
				t.Fatalf("seed %d: out[%d] = %d, want %d", seed, lane, got, want)
			}
		}
	}
}

func TestBlockOrderFollowsSeed(t *testing.T) {
	order := func(seed int64) []uint32 {
		e := newEnv(t, "kernels.ptx", Config{Seed: seed})
		counter := e.in([]uint32{0})
		out := e.buf(cudart.U32, 64)
		e.mustLaunch("block_order", 64, 32, cudart.InOut(counter), cudart.Out(out))
		return e.u32s(out)
	}
	for i, v := range order(0) {
		if v != uint32(i) {
			t.Fatalf("seed 0: block %d ran %d-th, want canonical order", i, v)
		}
	}
	a, b, c := order(5), order(5), order(6)
	same := func(x, y []uint32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("seed 5 is not reproducible")
	}
	if same(a, c) || same(a, order(0)) {
		t.Fatalf("seeds 0, 5 and 6 do not give three block orders: %v %v", a, c)
	}
}
