package binding_test

import (
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// TestStorage16RMSNormForward runs bfloat16- and float16-storage kernels
// through their bindings: inputs drawn in float32 are rounded to the format
// first (the values the kernel holds, and so the ones the oracle must see),
// y comes back widened and must lie within the float32 bound plus the
// storage bound oracle.StorageTol; rms comes from the kernel's float32 rstd.
// The float16 kernel converts with cvt.f32.f16 and cvt.rn.f16.f32, so the
// emulator's conversions are checked against oracle.Storage's as well.
// TestStorage16Contracts runs the contracts themselves on these kernels.
func TestStorage16RMSNormForward(t *testing.T) {
	for path, st := range map[string]oracle.Storage{
		"testdata/bf16/rmsnorm_fwd_bf16.yaml": oracle.StorageBFloat16,
		"testdata/f16/rmsnorm_fwd_f16.yaml":   oracle.StorageFloat16,
	} {
		t.Run(st.String(), func(t *testing.T) { checkStorage16(t, path, st) })
	}
}

func checkStorage16(t *testing.T, path string, st oracle.Storage) {
	b := load(t, path)
	if b.InputStorage() != st {
		t.Fatalf("storage %v, want %v", b.InputStorage(), st)
	}
	impl := b.Impl().(properties.RMSNormForwarder)
	cfg := config(t)
	dev := cfg.Device
	if dev == nil {
		t.Skip(cfg.NoDevice)
	}
	rapid.Check(t, func(rt *rapid.T) {
		rows := rapid.IntRange(1, 70).Draw(rt, "rows")
		hidden := rapid.IntRange(1, 300).Draw(rt, "hidden")
		scale := math.Pow(10, rapid.Float64Range(-3, 3).Draw(rt, "log10scale"))
		eps := float32(rapid.SampledFrom([]float64{1e-6, 1e-5, 1e-3}).Draw(rt, "eps"))
		x := make([]float32, rows*hidden)
		for i := range x {
			x[i] = st.Round(float32(scale * rapid.Float64Range(-2, 2).Draw(rt, "x")))
		}
		gamma := make([]float32, hidden)
		for i := range gamma {
			gamma[i] = st.Round(float32(rapid.Float64Range(-2, 2).Draw(rt, "gamma")))
		}
		a := &op.RMSNormForwardArgs{Rows: rows, Hidden: hidden, Eps: eps, X: x, Gamma: gamma,
			Y: make([]float32, rows*hidden), RMS: make([]float32, rows)}
		if err := impl.RMSNormForward(dev, a); err != nil {
			rt.Fatal(err)
		}
		want, rms := make([]float64, len(x)), make([]float64, rows)
		tol, tolRMS := make([]float64, len(x)), make([]float64, rows)
		oracle.RMSNormForwardWithTol(want, rms, tol, tolRMS, gen.F64(x), gen.F64(gamma), rows, hidden, float64(eps), oracle.SerialReduction())
		for i, y := range a.Y {
			bound := tol[i] + oracle.StorageTol(st, want[i], tol[i])
			if e := math.Abs(float64(y) - want[i]); !(e <= bound) {
				rt.Fatalf("y[%d] (row %d) = %g, want %g: |err| %.3g > bound %.3g", i, i/hidden, y, want[i], e, bound)
			}
		}
		for r, v := range a.RMS {
			if e := math.Abs(float64(v) - rms[r]); !(e <= tolRMS[r]) {
				rt.Fatalf("rms[%d] = %g, want %g: |err| %.3g > bound %.3g", r, v, rms[r], e, tolRMS[r])
			}
		}
	})
}

// TestAliasSharesBuffer: with alias {dx: dy} the backward runs in place,
// on one buffer fewer, and gives the same dx.
func TestAliasSharesBuffer(t *testing.T) {
	cfg := config(t)
	dev := cfg.Device
	if dev == nil {
		t.Skip(cfg.NoDevice)
	}
	run := func(path string) ([]float32, int) {
		b := load(t, path)
		a := &op.RoPEBackwardArgs{Rows: 3, Heads: 2, HeadDim: 8, Theta: 10000, Positions: []uint32{0, 5, 900},
			DY: make([]float32, 48), DX: make([]float32, 48)}
		for i := range a.DY {
			a.DY[i] = float32(i) - 20
		}
		before := dev.Stats().Allocs
		if err := b.Impl().(properties.RoPEBackwarder).RoPEBackward(dev, a); err != nil {
			t.Fatal(err)
		}
		if a.DY[47] != 27 {
			t.Fatalf("the caller's dy changed: %v", a.DY[47])
		}
		return a.DX, dev.Stats().Allocs - before
	}
	dx, n := run("testdata/rope_bwd.yaml")
	dxIn, nIn := run("testdata/rope_bwd_inplace.yaml")
	if nIn != n-1 {
		t.Errorf("in place: %d allocations, out of place %d; want one fewer", nIn, n)
	}
	for i := range dx {
		if dx[i] != dxIn[i] {
			t.Fatalf("dx[%d]: %v out of place, %v in place", i, dx[i], dxIn[i])
		}
	}
}

// TestScratchInit: a launch that reads scratch no launch wrote sees zeros
// when it is declared zeroed and NaN when uninitialized — so a kernel that
// depends on scratch it never wrote is caught. The chunked backward gets a
// third launch that sums a scratch buffer nothing writes into dγ.
func TestScratchInit(t *testing.T) {
	cfg := config(t)
	dev := cfg.Device
	if dev == nil {
		t.Skip(cfg.NoDevice)
	}
	src := mustRead(t, "testdata/rmsnorm_bwd_chunk.yaml")
	for _, init := range []string{"zeroed", "uninitialized"} {
		s := strings.Replace(src, "scratch:\n", "scratch:\n  - {name: unwritten, size: 4 * hidden, init: "+init+"}\n", 1) + `  - entry: colsum_f32
    ptx: ../../kernels/ptx/colsum.ptx
    grid: ["cdiv(hidden, 32)"]
    block: [32, 8, 1]
    params: [{scratch: unwritten}, dgamma, {value: 4}, hidden]
`
		b, err := binding.Parse("testdata/rmsnorm_bwd_chunk.yaml", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		rows, hidden := 5, 40
		a := &op.RMSNormBackwardArgs{Rows: rows, Hidden: hidden, X: ones(rows * hidden), Gamma: ones(hidden),
			RMS: ones(rows), DY: ones(rows * hidden), DX: make([]float32, rows*hidden), DGamma: make([]float32, hidden)}
		if err := b.Impl().(properties.RMSNormBackwarder).RMSNormBackward(dev, a); err != nil {
			t.Fatal(err)
		}
		for i, v := range a.DGamma {
			if init == "zeroed" && v != 0 || init == "uninitialized" && !math.IsNaN(float64(v)) {
				t.Fatalf("%s scratch: dgamma[%d] = %v", init, i, v)
			}
		}
	}
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// TestStorage16Contracts: the bfloat16 and float16 kernels discharge every
// prediction of their contract through the unmodified contracts, which
// round drawn inputs to the binding's storage (properties.Config.Storage)
// and add the storage rounding to the output bounds. Before, the contracts
// drew float32 inputs the kernel could not hold and were falsified by the
// harness itself.
func TestStorage16Contracts(t *testing.T) {
	if cfg := config(t); cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	for _, path := range []string{"testdata/bf16/rmsnorm_fwd_bf16.yaml", "testdata/f16/rmsnorm_fwd_f16.yaml"} {
		b := load(t, path)
		for _, j := range binding.Jobs(b) {
			t.Run(b.Name+"/"+j.ID, func(t *testing.T) {
				c := config(t)
				c.Recorder = &outcome.Recorder{}
				q := properties.RunQuiet(t.Name(), c, j.Contract)
				o := c.Recorder.Outcomes()[j.ID]
				if j.ID == properties.Parity && c.Device.Info().Backend != "gpu" {
					if o.Status != outcome.Skipped {
						t.Errorf("%s without a GPU: %s, want skipped", j.ID, o.Status)
					}
					return
				}
				if o.Status != outcome.Discharged || o.Checks == 0 {
					t.Errorf("%s after %d checks: %s\n%s", o.Status, o.Checks, o.Reason, strings.Join(q.Logs(), "\n"))
				}
			})
		}
	}
}
