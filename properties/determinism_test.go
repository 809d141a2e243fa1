package properties_test

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// determinism runs FALSIFY-GPUTRAIN-006 on im on the emulator, on small
// tensors, and returns its outcome (removing the fail file of a failure
// provoked on purpose).
func determinism(t *testing.T, im properties.Impls) outcome.Outcome {
	t.Helper()
	d := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
	t.Cleanup(func() { d.Close() })
	cfg := properties.Config{Device: d, MaxElements: 256, Recorder: &outcome.Recorder{}, Loops: suite.Checks(60)}
	q := properties.RunQuiet(t.Name(), cfg, func(tb properties.TB) { properties.DeterminismContract(tb, im) })
	o := q.Outcomes()[properties.Determinism]
	removeFailFile(o.Failfile)
	return o
}

// Bit determinism is judged on any operation, not only an RMSNorm
// backward: a LayerNorm forward whose y changes in its last bit on every
// other call is falsified, the failure naming the output, the element and
// both values with their bits.
func TestDeterminismOnAnyOperation(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	flaky := properties.LayerNormForwardOp.Func(func(dev cudart.Device, a *op.LayerNormForwardArgs) error {
		err := kernels.LayerNormFwd.LayerNormForward(dev, a)
		if calls.Add(1)%2 == 0 && len(a.Y) > 0 {
			a.Y[len(a.Y)-1] = math.Float32frombits(math.Float32bits(a.Y[len(a.Y)-1]) ^ 1)
		}
		return err
	}, kernels.LayerNormFwd)
	o := determinism(t, properties.Impls{flaky})
	if o.Status != outcome.Falsified || !strings.Contains(o.Reason, "y, ") || !strings.Contains(o.Reason, "bits differ") ||
		!strings.Contains(o.Reason, "(row ") {
		t.Fatalf("outcome %s (%s), want falsified naming y, the element and the bits", o.Status, o.Reason)
	}
	if ok := determinism(t, properties.Impls{kernels.LayerNormFwd}); ok.Status != outcome.Discharged {
		t.Fatalf("the deterministic forward: %s (%s)", ok.Status, ok.Reason)
	}
}

// The outcome credits the kernels the contract launched: the RMSNorm
// forward's problems always ask for rms, so rmsnorm_fwd_rms runs and
// rmsnorm_fwd, which the implementation also lists, does not.
func TestDeterminismCreditsWhatRan(t *testing.T) {
	t.Parallel()
	o := determinism(t, properties.Impls{kernels.RMSNormFwd})
	if got := outcome.ImplNames(o.Impls); o.Status != outcome.Discharged || !slices.Equal(got, []string{"rmsnorm_fwd_rms"}) {
		t.Fatalf("outcome %s (%s) crediting %v, want discharged crediting [rmsnorm_fwd_rms]", o.Status, o.Reason, got)
	}
}

// The predictions that compare an implementation with itself do not pass
// one that gives the same NaN every time from finite inputs (a kernel
// reading past its input into a guard band's canary, which a GPU does not
// trap): a LayerNorm forward whose last column is NaN is deterministic,
// batch-independent and permutation-invariant, and each of the three
// falsifies it.
func TestSelfComparisonsRefuseNonFiniteOutputs(t *testing.T) {
	t.Parallel()
	nan := properties.LayerNormForwardOp.Func(func(dev cudart.Device, a *op.LayerNormForwardArgs) error {
		err := kernels.LayerNormFwd.LayerNormForward(dev, a)
		for r := range a.Rows {
			a.Y[r*a.Hidden+a.Hidden-1] = float32(math.NaN())
		}
		return err
	}, kernels.LayerNormFwd)
	run := map[string]func(tb properties.TB, im properties.Impls){
		properties.Determinism:       properties.DeterminismContract,
		properties.BatchIndependence: properties.BatchIndependenceContract,
		properties.RowPermutation:    properties.RowPermutationContract,
	}
	for id, contract := range run {
		d := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
		t.Cleanup(func() { d.Close() })
		cfg := properties.Config{Device: d, MaxElements: 256, Recorder: &outcome.Recorder{}, Loops: suite.Checks(30)}
		q := properties.RunQuiet(t.Name()+"/"+id, cfg, func(tb properties.TB) { contract(tb, properties.Impls{nan}) })
		o := q.Outcomes()[id]
		removeFailFile(o.Failfile)
		if o.Status != outcome.Falsified || !strings.Contains(o.Reason, "from finite inputs") {
			t.Errorf("%s: outcome %s (%s), want falsified for a NaN from finite inputs", id, o.Status, o.Reason)
		}
	}
}
