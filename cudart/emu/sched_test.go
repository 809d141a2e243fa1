package emu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// Small integers, so that every order of the float additions gives the
// same sum.
func accumInput(blocks, n int) []float32 {
	x := make([]float32, blocks*n)
	for i := range x {
		x[i] = float32(i%7 + i/n)
	}
	return x
}

func runAccum(e *env, kernel string, blocks, n, groups int) ([]float32, error) {
	locks, counts := e.in(make([]int32, groups)), e.in(make([]int32, groups))
	partial := e.buf(cudart.F32, groups*n)
	x := e.in(accumInput(blocks, n))
	err := e.launch(kernel, blocks, 128, cudart.InOut(locks), cudart.InOut(counts), cudart.Out(partial), cudart.In(x),
		cudart.ScalarI32(int32(n)), cudart.ScalarI32(int32(groups)))
	if err != nil {
		return nil, err
	}
	return e.f32s(partial), nil
}

func TestLockProtectedAccumulation(t *testing.T) {
	const blocks, n, groups = 12, 300, 3
	x := accumInput(blocks, n)
	want := make([]float32, groups*n)
	for b := 0; b < blocks; b++ {
		for i := 0; i < n; i++ {
			want[b%groups*n+i] += x[b*n+i]
		}
	}
	for _, kernel := range []string{"lock_accum", "lock_fence_accum", "lock_block_accum"} {
		for _, seed := range []int64{0, 1, 2, 3, 4, 5} {
			e := newEnv(t, "sched.ptx", Config{Seed: seed})
			got, err := runAccum(e, kernel, blocks, n, groups)
			if err != nil {
				t.Fatalf("%s seed %d: %v", kernel, seed, err)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("%s seed %d: partial[%d] = %g, want %g", kernel, seed, i, got[i], want[i])
			}
		}
	}
}

func firstDiff(a, b []float32) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func TestUnorderedAccumulationRaces(t *testing.T) {
	// Without the lock, with a lock whose exchange releases nothing, or
	// with a CTA-scoped lock, the next block's stores are not ordered after
	// the previous block's.
	for _, kernel := range []string{"nolock_accum", "lock_relaxed_accum", "lock_cta_accum"} {
		for _, seed := range []int64{0, 1, 2} {
			e := newEnv(t, "sched.ptx", Config{Seed: seed})
			_, err := runAccum(e, kernel, 12, 300, 3)
			wantErr(t, err, cudart.ErrRace, "already wrote in this launch with nothing ordering the two", "buf#")
		}
	}
}

func TestWaitForLaterBlock(t *testing.T) {
	// Block 0 spins on a flag the last block sets; a schedule that ran
	// blocks one at a time to completion would never finish.
	for _, kernel := range []string{"wait_later", "wait_later_fence"} {
		for _, seed := range []int64{0, 1, 2, 3} {
			e := newEnv(t, "sched.ptx", Config{Seed: seed})
			flag, data, out := e.in([]int32{0}), e.in([]int32{0}), e.buf(cudart.I32, 1)
			if err := e.launch(kernel, 8, 32, cudart.InOut(flag), cudart.InOut(data), cudart.Out(out)); err != nil {
				t.Fatalf("%s seed %d: %v", kernel, seed, err)
			}
			if got, d := e.i32s(out)[0], e.i32s(data)[0]; got != 42 || d != 43 {
				t.Fatalf("%s seed %d: block 0 read %d and left %d, want 42 and 43", kernel, seed, got, d)
			}
		}
	}
	e := newEnv(t, "sched.ptx", Config{})
	flag, data, out := e.in([]int32{0}), e.in([]int32{0}), e.buf(cudart.I32, 1)
	err := e.launch("wait_later_weak", 8, 32, cudart.InOut(flag), cudart.InOut(data), cudart.Out(out))
	wantErr(t, err, cudart.ErrRace, "block (0,0,0) stores to", "block (7,0,0) already wrote")
}

func stealOwners(t *testing.T, seed int64) []int32 {
	t.Helper()
	e := newEnv(t, "sched.ptx", Config{Seed: seed})
	const tasks = 256
	counter, owner := e.in([]int32{0}), e.buf(cudart.I32, tasks)
	e.mustLaunch("steal", 16, 64, cudart.InOut(counter), cudart.Out(owner), cudart.ScalarI32(tasks))
	got := e.i32s(owner)
	for task, b := range got {
		if b < 0 || b >= 16 {
			t.Fatalf("seed %d: task %d has owner %d", seed, task, b)
		}
	}
	return got
}

func TestWorkStealingFollowsSchedule(t *testing.T) {
	// Under the canonical schedule block 0 runs until the counter runs out.
	for task, b := range stealOwners(t, 0) {
		if b != 0 {
			t.Fatalf("canonical schedule: task %d taken by block %d, want 0", task, b)
		}
	}
	seen := map[string]bool{}
	for _, seed := range []int64{1, 2, 3, 4, 5, 6} {
		a, b := stealOwners(t, seed), stealOwners(t, seed)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d does not reproduce the assignment", seed)
		}
		owners := map[int32]bool{}
		for _, o := range a {
			owners[o] = true
		}
		if len(owners) < 2 {
			t.Fatalf("seed %d: block %d took every task: the blocks did not interleave", seed, a[0])
		}
		seen[string(fmtInts(a))] = true
	}
	if len(seen) < 4 {
		t.Fatalf("6 seeds gave %d task assignments, want the CTA interleaving to vary", len(seen))
	}
}

func fmtInts(xs []int32) []byte {
	var b []byte
	for _, x := range xs {
		b = append(b, byte(x))
	}
	return b
}

func TestFloatAtomicOrderFollowsSchedule(t *testing.T) {
	const blocks = 64
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, blocks)
	for i := range x {
		x[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(24)))
	}
	sum := func(seed int64) uint32 {
		e := newEnv(t, "sched.ptx", Config{Seed: seed})
		out := e.in([]float32{0})
		e.mustLaunch("atomic_fsum", blocks, 32, cudart.In(e.in(x)), cudart.InOut(out))
		return math.Float32bits(e.f32s(out)[0])
	}
	bits := map[uint32]bool{}
	for seed := int64(1); seed <= 8; seed++ {
		a := sum(seed)
		if b := sum(seed); a != b {
			t.Fatalf("seed %d: sums %#x and %#x", seed, a, b)
		}
		bits[a] = true
	}
	if len(bits) < 3 {
		t.Fatalf("8 seeds gave %d distinct sums, want the order of the atomics to vary", len(bits))
	}
}

func TestDeadlockReportedFast(t *testing.T) {
	for _, run := range []struct {
		kernel string
		seed   int64
	}{{"lock_leak", 0}, {"lock_leak", 1}, {"lock_leak", 2}, {"lock_block_leak", 0}, {"lock_block_leak", 3}} {
		seed := run.seed
		e := newEnv(t, "sched.ptx", Config{Seed: seed})
		lock, out := e.in([]int32{0}), e.buf(cudart.I32, 64)
		start := time.Now()
		err := e.launch(run.kernel, 64, 64, cudart.InOut(lock), cudart.Out(out))
		f := wantErr(t, err, cudart.ErrDeadlock, "no thread can make progress", "spins reading 0x", "atom.acquire.gpu.global.cas.b32")
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("seed %d: deadlock took %v to report", seed, d)
		}
		if f.Inst == "" {
			t.Fatalf("seed %d: the fault names no instruction: %+v", seed, f)
		}
	}
	// Every block spins on a flag nobody sets.
	e := newEnv(t, "checks.ptx", Config{Seed: 9})
	flag, out := e.in([]int32{0}), e.buf(cudart.I32, 32)
	err := e.launch("spin", 16, 32, cudart.In(flag), cudart.Out(out))
	wantErr(t, err, cudart.ErrDeadlock, "16 resident blocks (16 of 16 started)", "ld.volatile.global.u32")
}

func TestSameSeedSameRace(t *testing.T) {
	report := func(seed int64) string {
		e := newEnv(t, "sched.ptx", Config{Seed: seed})
		_, err := runAccum(e, "nolock_accum", 12, 300, 3)
		if err == nil {
			t.Fatalf("seed %d: no race reported", seed)
		}
		return err.Error()
	}
	for _, seed := range []int64{1, 2} {
		if a, b := report(seed), report(seed); a != b {
			t.Fatalf("seed %d reports\n%s\nthen\n%s", seed, a, b)
		}
	}
}

// BenchmarkLockAccumulation runs lock-protected accumulation of 256 rows
// into 8 partial rows, canonical and seeded (interleaved CTAs):
//
//	go test ./cudart/emu -run '^$' -bench LockAccumulation
func BenchmarkLockAccumulation(b *testing.B) {
	for _, seed := range []int64{0, 1} {
		b.Run(map[int64]string{0: "canonical", 1: "seeded"}[seed], func(b *testing.B) {
			const blocks, n, groups = 256, 1024, 8
			e := newEnv(b, "sched.ptx", Config{Seed: seed})
			opts := e.dev.Options()
			opts.Poison, opts.VerifyInputs, opts.CheckGuards = false, false, false
			e.dev.SetOptions(opts)
			x := e.in(accumInput(blocks, n))
			locks, counts := e.buf(cudart.I32, groups), e.buf(cudart.I32, groups)
			partial := e.buf(cudart.F32, groups*n)
			var insts int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.dev.Write(locks, make([]int32, groups)); err != nil {
					b.Fatal(err)
				}
				if err := e.dev.Write(counts, make([]int32, groups)); err != nil {
					b.Fatal(err)
				}
				if err := e.launch("lock_accum", blocks, 128, cudart.InOut(locks), cudart.InOut(counts), cudart.Out(partial), cudart.In(x),
					cudart.ScalarI32(n), cudart.ScalarI32(groups)); err != nil {
					b.Fatal(err)
				}
				insts += e.b.Stats().ThreadInstructions
			}
			b.ReportMetric(float64(insts)/b.Elapsed().Seconds(), "thread-inst/s")
		})
	}
}
