package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/ptx"
)

// TestParallelMatchesSerial launches every entry of every committed kernel
// (kernels/ptx, binding/testdata, testdata/foreign) with generic arguments
// on two emulators: one that runs its CTAs on four workers with the
// warp-wide memory paths, and a reference that runs them one at a time
// through the per-lane paths. Under several schedules and problem sizes
// both must return the same error, the same bytes in every buffer, the
// same write counts and the same instruction counts. (Seeded schedules run
// serially; they test the warp-wide paths.)
func TestParallelMatchesSerial(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../kernels/ptx/*.ptx", "../../binding/testdata/*/*.ptx",
		"../../binding/testdata/foreign/*/*.ptx", "testdata/foreign/*.ptx"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d PTX files", len(files))
	}
	parallel := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := ptx.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name := filepath.Base(file)
		ref, par := New(Config{}), New(Config{})
		ref.ref, par.workers = true, 4
		opts := cudart.DefaultOptions()
		opts.Watchdog = 0
		envs := [2]*env{newEnvOn(t, name, src, ref, opts), newEnvOn(t, name, src, par, opts)}
		for _, f := range mod.Entries() {
			for _, c := range []struct {
				n    int32
				seed int64
			}{{100, 0}, {16, 0}, {16, 5}, {16, 9}} {
				name := fmt.Sprintf("%s/%s/n=%d/seed=%d", name, f.Name, c.n, c.seed)
				ref := runGeneric(t, envs[0], name, mod, f, c.n, c.seed)
				got := runGeneric(t, envs[1], name, mod, f, c.n, c.seed)
				if got.err != ref.err || got.stats != ref.stats || !slices.EqualFunc(got.bufs, ref.bufs, slices.Equal) ||
					!slices.EqualFunc(got.counts, ref.counts, slices.Equal) {
					t.Errorf("%s: parallel run differs from the serial reference:\n\tgot  err %q, %s\n\twant err %q, %s",
						name, got.err, got.stats, ref.err, ref.stats)
				}
			}
		}
		parallel += par.parallelRuns
	}
	if parallel == 0 {
		t.Error("no launch ran its CTAs in parallel")
	}
}

type genericRun struct {
	err, stats string
	bufs       [][]uint32
	counts     [][]uint32
}

// runGeneric launches entry f on e with every pointer a buffer of 2^14
// float32 in [0.5, 1.5), every integer n and every float 1e-5, on 12 CTAs
// of the kernel's required block or 256 threads.
func runGeneric(t *testing.T, e *env, name string, mod *ptx.Module, f *ptx.Function, n int32, seed int64) genericRun {
	t.Helper()
	e.b.SetConfig(Config{Seed: seed})
	r := rand.New(rand.NewPCG(1, 1))
	var params []cudart.Param
	var bufs []cudart.Buffer
	for _, p := range f.Params {
		switch p.Type {
		case "u64", "b64", "s64":
			host := make([]float32, 1<<14)
			for i := range host {
				host[i] = 0.5 + r.Float32()
			}
			b := e.in(host)
			bufs = append(bufs, b)
			params = append(params, cudart.InOut(b))
		case "u32", "s32", "b32":
			params = append(params, cudart.ScalarI32(n))
		case "f32":
			params = append(params, cudart.ScalarF32(1e-5))
		case "f64":
			params = append(params, cudart.ScalarF64(1e-5))
		default:
			t.Skipf("%s: parameter type .%s", name, p.Type)
		}
	}
	shared := 0
	for _, v := range mod.Variables() {
		if v.Space == "shared" && v.Linkage == "extern" {
			shared = 16 << 10
		}
	}
	block, ok := blockShapes[f.Name]
	if !ok {
		block = cudart.D1(256)
	}
	for _, d := range f.Directives {
		if d.Name == "reqntid" && len(d.Args) > 0 {
			block = cudart.D1(int(d.Args[0]))
		}
	}
	g := cudart.Geometry{Grid: cudart.D1(12), Block: block, SharedBytes: shared}
	var out genericRun
	if err := e.dev.Launch(e.mod, f.Name, g, params...); err != nil {
		out.err = err.Error()
	}
	st := e.b.Stats()
	out.stats = fmt.Sprintf("%d thread-instructions, %d warp-instructions, %d CTAs, global bytes %d loaded %d stored %d atomic",
		st.ThreadInstructions, st.WarpInstructions, st.CTAs, st.GlobalLoadBytes, st.GlobalStoreBytes, st.GlobalAtomicBytes)
	for _, b := range bufs {
		host := make([]float32, b.Len())
		if err := e.dev.Read(host, b); err != nil {
			t.Fatal(err)
		}
		words := make([]uint32, len(host))
		for i, x := range host {
			words[i] = math.Float32bits(x)
		}
		out.bufs = append(out.bufs, words)
		c, err := e.dev.WriteCounts(b)
		if err != nil {
			t.Fatal(err)
		}
		out.counts = append(out.counts, c)
		if err := e.dev.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

const chainPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 p, .param .u32 step, .param .u32 stride)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [step];
	ld.param.u32 %r6, [stride];
	mov.u32 %r2, %tid.x;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra DONE;
	mov.u32 %r3, %ctaid.x;
	mul.wide.u32 %rd2, %r3, %r6;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.u32 %r4, [%rd3];
	add.u32 %r5, %r4, 1;
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd5, %rd3, %rd4;
	st.global.u32 [%rd5], %r5;
DONE:
	ret;
}
`

// TestParallelConflicts shows that CTAs that communicate through plain
// global memory get the serial result: block c of chain adds one to
// p[c·s] and stores it to p[c·s+step] (s = stride/4). With step = s each
// block reads what the one before wrote (p[c·s] = c only in block order);
// with step 0 the blocks are independent and run in parallel. A block
// reads the allocation it then writes: the first launch runs serially and
// the kernel's later launches note every read (TestParallelUnnotedReads),
// so each case launches twice and the second is the one tested. With a
// stride of a page a block reads a page it does not write, written by the
// block before; on one core (procs 1) the first worker to run takes every
// block in order, so that each page's reader ends after its writer, which
// then cannot be the one to find the conflict. Two blocks storing to one
// word remain the race the serial run reports.
func TestParallelConflicts(t *testing.T) {
	for _, c := range []struct{ step, stride, procs int32 }{{1, 4, 0}, {0, 4, 0}, {pageSize / 4, pageSize, 0}, {0, pageSize, 0}, {pageSize / 4, pageSize, 1}} {
		if c.procs > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(int(c.procs)))
		}
		e := newEnvSrc(t, "chain.ptx", []byte(chainPTX), Config{})
		e.b.workers = 4
		s := int(c.stride / 4)
		for launch := range 2 {
			p := e.in(make([]int32, 64*s+1))
			e.mustLaunch("chain", 64, 32, cudart.InOut(p), cudart.ScalarI32(c.step), cudart.ScalarI32(c.stride))
			got := e.i32s(p)
			for b := range 64 {
				want := int32(1)
				if c.step != 0 {
					want = int32(b + 1)
				}
				if i := b*s + int(c.step); got[i] != want {
					t.Fatalf("step %d, stride %d, launch %d: p[%d] = %d, want %d", c.step, c.stride, launch, i, got[i], want)
				}
			}
		}
		if ran := e.b.parallelRuns == 1; ran != (c.step == 0) {
			t.Errorf("step %d, stride %d: ran in parallel: %v", c.step, c.stride, ran)
		}
	}
	e := newEnv(t, "checks.ptx", Config{})
	e.b.workers = 4
	out := e.in([]int32{0})
	err := e.launch("cross_block_write", 4, 32, cudart.InOut(out))
	wantErr(t, err, cudart.ErrRace, "block (1,0,0)", "block (0,0,0) already wrote", out.String())
}

// incPTX: thread 0 of block c stores in[c] + 1 to out[c].
const incPTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry inc(.param .u64 in, .param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mov.u32 %r2, %ctaid.x;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.u32 %r3, [%rd4];
	add.u32 %r4, %r3, 1;
	add.s64 %rd5, %rd2, %rd3;
	st.global.u32 [%rd5], %r4;
DONE:
	ret;
}
`

// TestParallelUnnotedReads: the CTAs of a parallel launch read without
// noting the bytes an allocation no CTA writes. A kernel that reads one
// allocation and writes another runs in parallel from its first launch,
// its reads unnoted; one whose CTAs read what they then write (chain with
// step 0, in place) cannot know, from unnoted reads, whether another CTA
// read what it writes: its first launch runs serially, and its later
// launches note every read and run in parallel.
func TestParallelUnnotedReads(t *testing.T) {
	e := newEnvSrc(t, "inc.ptx", []byte(incPTX), Config{})
	e.b.workers = 4
	in := make([]int32, 64)
	for i := range in {
		in[i] = int32(3 * i)
	}
	for launch := 1; launch <= 2; launch++ {
		out := e.buf(cudart.I32, 64)
		e.mustLaunch("inc", 64, 32, cudart.In(e.in(in)), cudart.Out(out))
		for i, got := range e.i32s(out) {
			if got != in[i]+1 {
				t.Fatalf("inc launch %d: out[%d] = %d, want %d", launch, i, got, in[i]+1)
			}
		}
		if e.b.parallelRuns != launch || e.kernel("inc").trackReads {
			t.Fatalf("inc launch %d: %d parallel runs, notes every read %v; want %d, false", launch, e.b.parallelRuns, e.kernel("inc").trackReads, launch)
		}
	}

	e = newEnvSrc(t, "chain.ptx", []byte(chainPTX), Config{})
	e.b.workers = 4
	for launch := 1; launch <= 2; launch++ {
		p := e.in(make([]int32, 65))
		e.mustLaunch("chain", 64, 32, cudart.InOut(p), cudart.ScalarI32(0), cudart.ScalarI32(4))
		for c, got := range e.i32s(p)[:64] {
			if got != 1 {
				t.Fatalf("chain launch %d: p[%d] = %d, want 1", launch, c, got)
			}
		}
		if want := launch - 1; e.b.parallelRuns != want || !e.kernel("chain").trackReads {
			t.Fatalf("chain launch %d: %d parallel runs, notes every read %v; want %d, true", launch, e.b.parallelRuns, e.kernel("chain").trackReads, want)
		}
	}
}
