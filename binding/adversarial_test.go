package binding_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// A deterministic kernel stays deterministic under adversarial
// approximations: the determinism prediction launches it under several
// emulator schedules, and an approximate instruction's value must depend on
// its operands and the adversarial seed alone, as on a GPU. The committed
// Triton backward (rsqrt.approx in its recomputed statistics) was falsified
// here at check 1 while the adversarial value followed the schedule seed.
func TestAdversarialDeterministicKernel(t *testing.T) {
	c := suite.Default()
	c.Backend, c.Progress, c.Summary = "emu", 0, false
	c.EmuAdversarial, c.Seed, c.Checks = 7, 1, 25
	c.Rapid.ShrinkTime = time.Second
	c.Report = filepath.Join(t.TempDir(), "adversarial.json")
	rep, err := binding.Verify(context.Background(), c, "testdata/foreign/triton/rmsnorm_bwd.binding.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Prediction(properties.Determinism + "@triton-rmsnorm-bwd")
	if p == nil {
		t.Fatalf("%s@triton-rmsnorm-bwd not in the report", properties.Determinism)
	}
	// c.Checks, unless -rapid.checks or RAPID_CHECKS was given: the run
	// records the budget it ran.
	if want := ranChecks(rep.Run.RapidChecks); p.Status != reports.Discharged || p.Checks != want {
		t.Fatalf("%s: %s after %d checks (%s), want discharged after %d", p.ID, p.Status, p.Checks, p.Reason, want)
	}
}
