package falsify

import (
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// An unmodified copy of a kernel, run as a mutant is (differential mode,
// the session's instruction budget and watchdog), passes every contract
// that probes it: a kill of a real mutant is then the mutant's doing, not
// the harness's (an instruction budget smaller than the original's
// launches, or the original's launches seen by a contract that watches
// its device).
func TestOriginalSurvives(t *testing.T) {
	s := getSession(t)
	for _, name := range []string{"rmsnorm_fwd_rms", "layernorm_fwd_stats"} {
		t.Run(name, func(t *testing.T) {
			k, ok := kernels.Lookup(name)
			if !ok {
				t.Fatalf("no kernel %s", name)
			}
			// A comment makes it another module with the same code, as a
			// mutant is.
			copyK := k.WithPTX(append(slices.Clone(k.PTX), "\n// an unmodified copy\n"...))
			orig, mut := defaults(), setWith(copyK)
			tr := s.tracer(launchOf(copyK), true)
			e := &env{orig: &orig, mut: &mut, tr: tr}
			m := Generic{Kernel: name, Op: 0, PC: -1, Arg: -1}
			for i, p := range kernelProbes(name) {
				pr, o := s.probe(m, p, e, i)
				switch o.Status {
				case outcome.Falsified, outcome.Inconclusive, outcome.Errored:
					t.Errorf("%s (%s) on an unmodified %s: %s after %d checks: %s", p.id, p.name, name, o.Status, pr.Checks, firstLine(o.Reason))
				}
			}
			if n, calls, differing, _, first := tr.snapshot(); n == 0 || calls == 0 || differing > 0 {
				t.Errorf("%d launches, %d calls compared, %d differing (%s): want launches and no difference", n, calls, differing, first)
			}
		})
	}
}

// The originals run within the launch budget a mutant gets at the largest
// shapes contracts draw on the emulator: a prediction's regimes reach 2²⁰
// elements (properties.RegimeElements) and 4096 rows, where a fixed budget
// (the old one, Options.MaxInstructions alone) stops them as hung. The
// launches go through the tracer a mutant's do.
func TestLaunchBudget(t *testing.T) {
	s := getSession(t)
	if s.budgeted == nil {
		t.Skip("the device has no instruction limit")
	}
	tr := s.tracer(nil, false)
	dev := tracedDevice{Device: s.dev, tr: tr}
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		return x
	}
	ones := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = 1
		}
		return x
	}
	for _, sh := range []op.Shape{{Rows: 4096, Hidden: properties.RegimeElements / 4096}, {Rows: 2049, Hidden: properties.RegimeElements / 2049},
		{Rows: 257, Hidden: properties.RegimeElements / 257}, {Rows: properties.RegimeWideChunk.MaxRows, Hidden: gen.EmuLimits.MaxHidden}} {
		n := sh.Rows * sh.Hidden
		t.Run(sh.String(), func(t *testing.T) {
			b := &op.RMSNormBackwardArgs{Rows: sh.Rows, Hidden: sh.Hidden, X: fill(n), Gamma: ones(sh.Hidden), RMS: ones(sh.Rows),
				DY: fill(n), DX: make([]float32, n), DGamma: make([]float32, sh.Hidden)}
			if err := kernels.RMSNormBwdChunk.RMSNormBackward(dev, b); err != nil {
				t.Errorf("rmsnorm_bwd_chunk: %v", err)
			}
			l := &op.LayerNormBackwardArgs{Rows: sh.Rows, Hidden: sh.Hidden, X: fill(n), Gamma: ones(sh.Hidden), DY: fill(n),
				Mean: make([]float32, sh.Rows), Rstd: ones(sh.Rows), DX: make([]float32, n), DGamma: make([]float32, sh.Hidden), DBeta: make([]float32, sh.Hidden)}
			if err := kernels.LayerNormBwd.LayerNormBackward(dev, l); err != nil {
				t.Errorf("layernorm_bwd_chunk: %v", err)
			}
		})
	}
	// A block of 256 threads a row, for rows of one element.
	f := &op.RMSNormForwardArgs{Rows: 4096, Hidden: 1, Eps: 1e-5, X: fill(4096), Gamma: ones(1), Y: make([]float32, 4096), RMS: make([]float32, 4096)}
	if err := kernels.RMSNormFwd.RMSNormForward(dev, f); err != nil {
		t.Errorf("rmsnorm_fwd_rms at 4096×1: %v", err)
	}
}
