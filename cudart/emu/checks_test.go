package emu

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

func TestDeadlockDivergentSyncthreads(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.buf(cudart.F32, 64)
	err := e.launch("deadlock_bar", 1, 64, cudart.Out(out))
	f := wantErr(t, err, cudart.ErrDeadlock, "deadlock_bar", "warp 0 lanes 0-15 wait", "warp 0 lanes 16-31 wait", "warp 1 lanes 0-31 wait", "bar.sync")
	if f.Line == 0 || f.PC < 0 {
		t.Errorf("fault has no position: %+v", f)
	}
}

func TestDeadlockShuffleAgainstBarrier(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{Seed: 3})
	out := e.buf(cudart.F32, 32)
	err := e.launch("deadlock_shfl", 1, 32, cudart.Out(out))
	wantErr(t, err, cudart.ErrDeadlock, "lanes 16-31 wait", "shfl.sync", "for lanes 0-15 of membermask 0xffffffff", "lanes 0-15 wait", "bar.sync")
}

func TestOutOfBoundsWriteNamesBuffer(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	n := 100
	out := e.buf(cudart.F32, n)
	err := e.launch("oob_write", 1, 128, cudart.Out(out), cudart.ScalarI32(int32(n)))
	f := wantErr(t, err, cudart.ErrOutOfBounds, out.String(), "guard band after", "0 bytes past the end", "st.global", "threadIdx (100,0,0)")
	if f.Space != "global" || f.Size != 4 || f.Thread[0] != 100 {
		t.Errorf("fault = %+v", f)
	}
}

func TestOutOfBoundsReadBeforeBuffer(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	in := e.in(make([]float32, 64))
	out := e.buf(cudart.F32, 64)
	err := e.launch("oob_read", 1, 64, cudart.In(in), cudart.Out(out), cudart.ScalarI32(64))
	wantErr(t, err, cudart.ErrOutOfBounds, in.String(), "guard band before", "before the start", "threadIdx (0,0,0)")
	// Without guard bands the read lands outside every allocation.
	opts := cudart.DefaultOptions()
	opts.GuardBytes = 0
	e = newEnvOn(t, "checks", mustRead(t, "testdata/checks.ptx"), New(Config{}), opts)
	err = e.launch("oob_read", 1, 64, cudart.In(e.in(make([]float32, 64))), cudart.Out(e.buf(cudart.F32, 64)), cudart.ScalarI32(64))
	wantErr(t, err, cudart.ErrOutOfBounds, "outside every live allocation", "bytes before")
}

func TestOutOfBoundsShared(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	idx := make([]int32, 32)
	for i := range idx {
		idx[i] = int32(i)
	}
	out := e.buf(cudart.I32, 32)
	e.mustLaunch("oob_shared", 1, 32, cudart.In(e.in(idx)), cudart.Out(out))
	idx[7] = 32 // one past the end of a[32]
	err := e.launch("oob_shared", 1, 32, cudart.In(e.in(idx)), cudart.Out(out))
	wantErr(t, err, cudart.ErrOutOfBounds, "red zone 0 bytes past the end of shared variable", "threadIdx (7,0,0)")
}

func TestSharedRaceMissingSyncthreads(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	in := e.in(make([]float32, 64))
	out := e.buf(cudart.F32, 64)
	err := e.launch("race_missing_sync", 1, 64, cudart.In(in), cudart.Out(out))
	wantErr(t, err, cudart.ErrRace, "shared-memory race", "same barrier interval", "warp 0", "warp 1")
	e.mustLaunch("race_fixed", 1, 64, cudart.In(in), cudart.Out(out))
	// Without race checking the first warp's read is of a byte nobody has
	// written yet; with neither check the launch passes.
	e.b.SetConfig(Config{NoRaceCheck: true})
	wantErr(t, e.launch("race_missing_sync", 1, 64, cudart.In(in), cudart.Out(out)), cudart.ErrOutOfBounds, "computed from uninitialised memory", "never written in this block")
	e.b.SetConfig(Config{NoRaceCheck: true, AllowUninitShared: true})
	e.mustLaunch("race_missing_sync", 1, 64, cudart.In(in), cudart.Out(out))
}

func TestWarpExchangeNeedsSyncwarp(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	in := e.in(make([]float32, 32))
	out := e.buf(cudart.F32, 32)
	err := e.launch("warp_exchange", 1, 32, cudart.In(in), cudart.Out(out), cudart.ScalarI32(0))
	wantErr(t, err, cudart.ErrRace, "no bar.warp.sync")
	e.mustLaunch("warp_exchange", 1, 32, cudart.In(in), cudart.Out(out), cudart.ScalarI32(1))
}

func TestLockstepStoresOfDifferentValues(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.buf(cudart.I32, 64)
	e.mustLaunch("lockstep_conflict", 1, 64, cudart.Out(out), cudart.ScalarI32(1))
	err := e.launch("lockstep_conflict", 1, 64, cudart.Out(out), cudart.ScalarI32(0))
	wantErr(t, err, cudart.ErrRace, "store different values")
}

func TestCrossBlockRace(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.in([]int32{0})
	err := e.launch("cross_block_write", 4, 32, cudart.InOut(out))
	wantErr(t, err, cudart.ErrRace, "block (1,0,0)", "block (0,0,0) already wrote", out.String())
	e.mustLaunch("cross_block_atomic", 4, 32, cudart.InOut(out))
	if got := e.i32s(out)[0]; got != 0+0+1+2+3 {
		t.Fatalf("atomic sum = %d, want 6", got)
	}
}

func TestUninitialisedSharedRead(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.buf(cudart.F32, 64)
	err := e.launch("uninit_shared", 1, 64, cudart.Out(out))
	wantErr(t, err, cudart.ErrOutOfBounds, "stores to global memory", "computed from uninitialised memory", "threadIdx (32,0,0)", "never written in this block")
	e.b.SetConfig(Config{AllowUninitShared: true})
	e.mustLaunch("uninit_shared", 1, 64, cudart.Out(out))
}

func TestInstructionBudget(t *testing.T) {
	e := newEnv(t, "sched.ptx", Config{MaxInstructions: 100000})
	flag := e.in([]int32{0})
	out := e.buf(cudart.I32, 32)
	err := e.launch("busy", 1, 32, cudart.In(flag), cudart.Out(out))
	wantErr(t, err, cudart.ErrTimeout, "budget")
}

// A launch that never finishes ends at the instruction budget the emulator
// derives from the launch when none is set, with no wall-clock watchdog.
func TestAutoBudgetEndsAHang(t *testing.T) {
	opts := cudart.DefaultOptions()
	opts.Watchdog = 0
	b := New(Config{})
	e := newEnvOn(t, "sched", mustRead(t, "testdata/sched.ptx"), b, opts)
	flag, out := e.in([]int32{0}), e.buf(cudart.I32, 32)
	err := e.launch("busy", 1, 32, cudart.In(flag), cudart.Out(out))
	wantErr(t, err, cudart.ErrTimeout, "budget")
	want := b.mem.autoBudget(32)
	if got := b.Stats().ThreadInstructions; got < want || got > want+1<<20 {
		t.Fatalf("ran %d thread-instructions, want the budget %d", got, want)
	}
	if want < autoBudgetBase+32*autoBudgetThread {
		t.Fatalf("budget %d below its floor", want)
	}
}

func TestWatchdogAborts(t *testing.T) {
	opts := cudart.DefaultOptions()
	opts.Watchdog = 200 * time.Millisecond
	e := newEnvOn(t, "sched", mustRead(t, "testdata/sched.ptx"), New(Config{}), opts)
	flag, out := e.in([]int32{0}), e.buf(cudart.I32, 32)
	start := time.Now()
	err := e.launch("busy", 1, 32, cudart.In(flag), cudart.Out(out))
	if !errors.Is(err, cudart.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("abort took %v", d)
	}
	// The device stays usable: the emulator honoured Abort.
	if _, err := e.dev.Alloc(cudart.F32, 4); err != nil {
		t.Fatalf("device unusable after abort: %v", err)
	}
}

func TestLoadErrorsNameInstructionAndLine(t *testing.T) {
	src := strings.Replace(instKernel("\tadd.s32 %r1, %r2, %r3;\n\ttex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex, {%r1}];"), "", "", 1)
	b := New(Config{})
	_, err := b.LoadModule("bad", []byte(src))
	if err == nil || !errors.Is(err, cudart.ErrInvalid) || !strings.Contains(err.Error(), "tex.1d.v4.f32.s32") || !strings.Contains(err.Error(), "line 24") {
		t.Fatalf("err = %v", err)
	}
	_, err = b.LoadModule("bad", []byte(instKernel("\tfrob.s32 %r1, %r2;")))
	if err == nil || !strings.Contains(err.Error(), `unknown instruction "frob"`) || !strings.Contains(err.Error(), "line 23") {
		t.Fatalf("err = %v", err)
	}
	_, err = b.LoadModule("bad", []byte(instKernel("\tadd.s32 %r1, %nosuch, 1;")))
	if err == nil || !strings.Contains(err.Error(), "%nosuch") {
		t.Fatalf("err = %v", err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	src, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestSpeculativeSharedLoadIsNotAnError(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.buf(cudart.F32, 96)
	e.mustLaunch("speculative_load", 1, 96, cudart.Out(out))
	for i, got := range e.f32s(out) {
		if got != 1+2+3 {
			t.Fatalf("out[%d] = %g, want 6", i, got)
		}
	}
}

func TestUninitialisedBranchAndLocal(t *testing.T) {
	e := newEnv(t, "checks.ptx", Config{})
	out := e.buf(cudart.I32, 64)
	err := e.launch("uninit_branch", 1, 64, cudart.Out(out))
	wantErr(t, err, cudart.ErrOutOfBounds, "guard predicate computed from uninitialised memory", "never written in this block")
	idx := make([]int32, 32)
	for i := range idx {
		idx[i] = int32(i % 4)
	}
	e.mustLaunch("uninit_local", 1, 32, cudart.In(e.in(idx)), cudart.Out(out))
	idx[9] = 6
	err = e.launch("uninit_local", 1, 32, cudart.In(e.in(idx)), cudart.Out(out))
	wantErr(t, err, cudart.ErrOutOfBounds, "computed from uninitialised memory", "local", "threadIdx (9,0,0)")
	e.b.SetConfig(Config{AllowUninitLocal: true})
	e.mustLaunch("uninit_local", 1, 32, cudart.In(e.in(idx)), cudart.Out(out))
}

func TestLaunchBoundsDirectives(t *testing.T) {
	src := strings.Replace(instKernel("\tmov.u64 %rd7, 1;"), "{\n\t.reg .pred", ".maxntid 64, 1, 1\n{\n\t.reg .pred", 1)
	e := newEnvSrc(t, "bounds", []byte(src), Config{})
	in, out := e.in(make([]uint64, 3*128)), e.buf(cudart.U64, 128)
	e.mustLaunch("k", 1, 64, cudart.Out(out), cudart.In(in))
	err := e.launch("k", 1, 128, cudart.Out(out), cudart.In(in))
	if !errors.Is(err, cudart.ErrLaunch) || !strings.Contains(err.Error(), ".maxntid") {
		t.Fatalf("err = %v", err)
	}
}
