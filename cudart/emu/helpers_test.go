package emu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// env is a device over a fresh emulator with one test module loaded.
type env struct {
	t   testing.TB
	b   *Backend
	dev cudart.Device
	mod cudart.Module
}

func newEnv(t testing.TB, file string, cfg Config) *env {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return newEnvSrc(t, file, src, cfg)
}

func newEnvSrc(t testing.TB, name string, src []byte, cfg Config) *env {
	t.Helper()
	opts := cudart.DefaultOptions()
	opts.Watchdog = 0
	return newEnvOn(t, name, src, New(cfg), opts)
}

// newEnvOn loads src on a Device with options opts over be: a *Backend, or
// Checked over one.
func newEnvOn(t testing.TB, name string, src []byte, be cudart.Backend, opts cudart.Options) *env {
	t.Helper()
	var b *Backend
	switch x := be.(type) {
	case *Backend:
		b = x
	case Checked:
		b = x.b
	default:
		t.Fatalf("backend %T is not the emulator", be)
	}
	dev := cudart.New(be, opts)
	t.Cleanup(func() { dev.Close() })
	m, err := dev.Load(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, b: b, dev: dev, mod: m}
}

func (e *env) buf(kind cudart.Kind, n int) cudart.Buffer {
	e.t.Helper()
	b, err := e.dev.Alloc(kind, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// in allocates and fills a buffer from a host slice.
func (e *env) in(host any) cudart.Buffer {
	e.t.Helper()
	kind, n, err := cudart.HostKind(host)
	if err != nil {
		e.t.Fatal(err)
	}
	b := e.buf(kind, n)
	if err := e.dev.Write(b, host); err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) launch(entry string, grid, block int, params ...cudart.Param) error {
	return e.dev.Launch(e.mod, entry, cudart.Geometry{Grid: cudart.D1(grid), Block: cudart.D1(block)}, params...)
}

func (e *env) mustLaunch(entry string, grid, block int, params ...cudart.Param) {
	e.t.Helper()
	if err := e.launch(entry, grid, block, params...); err != nil {
		e.t.Fatal(err)
	}
}

// mustLaunchN launches entry over n threads, 128 a block, with params and
// then n: the form of every kernel in arith.cu.
func (e *env) mustLaunchN(entry string, n int, params ...cudart.Param) {
	e.t.Helper()
	e.mustLaunch(entry, (n+127)/128, 128, append(params, cudart.ScalarI32(int32(n)))...)
}

func (e *env) read(dst any, b cudart.Buffer) {
	e.t.Helper()
	if err := e.dev.Read(dst, b); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) f32s(b cudart.Buffer) []float32 {
	out := make([]float32, b.Len())
	e.read(out, b)
	return out
}

func (e *env) i32s(b cudart.Buffer) []int32 {
	out := make([]int32, b.Len())
	e.read(out, b)
	return out
}

func (e *env) u32s(b cudart.Buffer) []uint32 {
	out := make([]uint32, b.Len())
	e.read(out, b)
	return out
}

// wantErr checks that err wraps code and mentions every fragment.
func wantErr(t testing.TB, err, code error, fragments ...string) *Fault {
	t.Helper()
	if err == nil {
		t.Fatalf("launch succeeded, want %v", code)
	}
	if !errors.Is(err, code) {
		t.Fatalf("error %v\n does not wrap %v", err, code)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error does not mention %q:\n%v", f, err)
		}
	}
	var f *Fault
	if !errors.As(err, &f) {
		t.Fatalf("error %v is not a *Fault", err)
	}
	return f
}

// instKernel wraps a PTX body into a kernel that runs it once per thread
// with 64-bit inputs %rd4, %rd5, %rd6 loaded from in[3*tid..] and stores
// %rd7 to out[tid].
func instKernel(body string) string {
	return fmt.Sprintf(`.version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
	.reg .pred %%p<8>;
	.reg .b16 %%h<8>;
	.reg .b32 %%r<16>;
	.reg .f32 %%f<16>;
	.reg .f64 %%fd<8>;
	.reg .b64 %%rd<16>;
	ld.param.u64 %%rd1, [in];
	ld.param.u64 %%rd2, [out];
	mov.u32 %%r15, %%tid.x;
	mul.wide.u32 %%rd3, %%r15, 24;
	add.s64 %%rd1, %%rd1, %%rd3;
	mul.wide.u32 %%rd3, %%r15, 8;
	add.s64 %%rd2, %%rd2, %%rd3;
	ld.global.u64 %%rd4, [%%rd1];
	ld.global.u64 %%rd5, [%%rd1+8];
	ld.global.u64 %%rd6, [%%rd1+16];
	mov.u64 %%rd7, 0;
%s
	st.global.u64 [%%rd2], %%rd7;
	ret;
}
`, body)
}

// runInst runs body (see instKernel) for each input triple and returns %rd7.
func runInst(t testing.TB, body string, inputs [][3]uint64) []uint64 {
	t.Helper()
	return runInstCfg(t, body, inputs, Config{})
}

func runInstCfg(t testing.TB, body string, inputs [][3]uint64, cfg Config) []uint64 {
	t.Helper()
	e := newEnvSrc(t, "inst", []byte(instKernel(body)), cfg)
	flat := make([]uint64, 0, 3*len(inputs))
	for _, in := range inputs {
		flat = append(flat, in[0], in[1], in[2])
	}
	inb := e.in(flat)
	out := e.buf(cudart.U64, len(inputs))
	e.mustLaunch("k", 1, len(inputs), cudart.Out(out), cudart.In(inb))
	res := make([]uint64, len(inputs))
	e.read(res, out)
	return res
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// kernel returns the loaded kernel named entry.
func (e *env) kernel(entry string) *kernel {
	e.t.Helper()
	for m := range e.b.modules {
		if k := m.kernels[entry]; k != nil {
			return k
		}
	}
	e.t.Fatalf("no kernel %s", entry)
	return nil
}
