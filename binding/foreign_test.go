package binding_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/ptx"
	"github.com/ptxprop/ptxprop/reports"
)

// falsifiedForeign are the predictions the committed foreign kernels must
// fail, each with what its reason must name: the Triton backward that sums
// dγ with float atomics, and the LayerNorm backward that sums dγ and dβ
// under locks, are not deterministic. Every other prediction must be
// discharged, except those in mayFalsify.
var falsifiedForeign = map[string]string{
	// Found before any launch: the PTX has atom.global.gpu.acq_rel.add.f32.
	"triton-rmsnorm-bwd-atomic/" + properties.Determinism: "floating-point atomic (atom.global.gpu.acq_rel.add.f32)",
	// No float atomic: found by launches under other schedules, which
	// reorder the CTAs taking a group's lock once three rows share it.
	"triton-layernorm-bwd-lock/" + properties.Determinism: "bits differ",
}

// mayFalsify are predictions a kernel fails only on some draws: the atomic
// backward's atom.add.f32 flushes subnormal sums to zero (as the PTX ISA
// specifies), so dγ of subnormal inputs is wrong when a check draws them.
// Its dγ also depends on the order of the atomics, so such a failure may
// not replay: then the prediction is inconclusive, flagged
// non-deterministic.
var mayFalsify = map[string]string{
	"triton-rmsnorm-bwd-atomic/" + properties.BRMSBack: "dgamma",
}

// TestForeignBindings verifies the committed foreign bindings (PTX from
// Triton 3.6 for sm_90a and from nvcc 13, which ptxprop did not write) as
// ptxprop verify does, and checks each verdict of the report: the Triton
// forward and deterministic backward and the nvcc 13 forward discharged,
// the Triton backward that sums dγ with float atomics (statically) and the
// lock-and-group LayerNorm backward (on launches) falsified by the
// determinism prediction. Shrinking is cut to a few seconds: the verdicts,
// not minimal cases, are under test.
func TestForeignBindings(t *testing.T) {
	paths, err := filepath.Glob("testdata/foreign/*/*.binding.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no foreign bindings: %v", err)
	}
	cfg := config(t)
	if cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	c := suite.Default()
	c.Backend, c.Progress, c.Summary = cfg.Device.Info().Backend, 0, false
	c.Rapid.ShrinkTime = 3 * time.Second
	// The lock kernel's non-determinism shows only on draws where three
	// rows share a lock group: 5 checks (a fifth of the package's 25, as
	// -short runs) missed it in 1 run of 20, 25 checks in none of 40.
	// -short keeps 25 for this verdict.
	c.Checks = 25
	if testing.Short() {
		c.Checks = 5 * 25
	}
	c.Report = filepath.Join(t.TempDir(), "foreign.json")
	rep, err := binding.Verify(context.Background(), c, paths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"triton-rmsnorm-fwd", "triton-rmsnorm-bwd", "triton-rmsnorm-bwd-atomic", "nvcc13-rms-norm-f32",
		"triton-layernorm-bwd-lock", "triton-softmax-fwd", "triton-softmax-bwd"} {
		// Every binding gets the determinism prediction, whatever its operation.
		if rep.Prediction(properties.Determinism+"@"+name) == nil {
			t.Errorf("%s: not in the report", name)
		}
	}
	for _, p := range rep.Predictions {
		id, name, _ := strings.Cut(p.ID, "@")
		key := name + "/" + id
		want := reports.Discharged
		if id == properties.Parity && rep.Run.Backend != "gpu" {
			want = reports.Skipped // GPU/emulator parity needs a GPU
		}
		if why, ok := falsifiedForeign[key]; ok {
			t.Logf("%s: %s", p.ID, p.Reason)
			want = reports.Falsified
			if !strings.Contains(p.Reason, why) {
				t.Errorf("%s: falsified for %q, want a reason naming %q", p.ID, p.Reason, why)
			}
		}
		switch why, ok := mayFalsify[key]; {
		case ok && p.Status == reports.Falsified && strings.Contains(p.Reason, why),
			ok && p.Status == reports.Inconclusive && p.HasFlag(reports.FlagNonDeterministic) && strings.Contains(p.Reason, why):
			t.Logf("%s: %s as it may be: %s", p.ID, p.Status, p.Reason)
		case p.Status != want:
			t.Errorf("%s: %s (%s), want %s", p.ID, p.Status, p.Reason, want)
		default:
			t.Logf("%s: %s after %d checks", p.ID, p.Status, p.Checks)
		}
	}
}

// TestPaddedRowStride: the nvcc 13 kernel takes its rows' strides, so it
// is run on rows hidden+8 apart, the gaps filled with NaN; it must read
// only its rows and leave the gaps of y alone.
func TestPaddedRowStride(t *testing.T) {
	src := strings.Replace(mustRead(t, "testdata/foreign/nvcc13/rms_norm.binding.yaml"), "saved: rstd", "saved: rstd\nrow_stride: hidden + 8", 1)
	b, err := binding.Parse("testdata/foreign/nvcc13/rms_norm.binding.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	properties.RMSNormForwardContract(suite.T(t), b.Impl().(properties.RMSNormForwarder))
}

// A bound kernel names its entries and PTX, so that a parity mismatch can
// name the approximate instructions in it and whether the emulator models
// them: the Triton forward's sqrt.approx.ftz.f32 and div.full.f32, both
// computed as sm_90 does.
func TestBindingNamesItsApproximations(t *testing.T) {
	b := load(t, "testdata/foreign/triton/rmsnorm_fwd.binding.yaml")
	es, ok := b.Impl().(interface{ EntrySources() ([]string, [][]byte) })
	if !ok {
		t.Fatal("the binding's implementation does not name its entries")
	}
	entries, srcs := es.EntrySources()
	if len(entries) != 1 || entries[0] != "rmsnorm_fwd_kernel" || len(srcs) != 1 {
		t.Fatalf("entries %v (%d sources), want [rmsnorm_fwd_kernel]", entries, len(srcs))
	}
	as, err := ptx.Approximations(srcs[0])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range as {
		names = append(names, a.String())
	}
	all := strings.Join(names, ", ")
	if !strings.Contains(all, "sqrt.approx.ftz.f32") || !strings.Contains(all, "div.full.f32") {
		t.Errorf("approximations %v, want sqrt.approx.ftz.f32 and div.full.f32 among them", names)
	}
	for _, a := range as {
		if !a.Modelled {
			t.Errorf("%s: the emulator models it as sm_90 computes it, yet it is listed unmodelled", a)
		}
	}
}
