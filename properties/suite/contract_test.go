package suite_test

import (
	"context"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// runContract runs f on the emulator with checks rapid checks (no fail
// files), a base seed and the given watchdog, and returns the outcome of
// prediction id and the time it took.
func runContract(t *testing.T, id string, checks int, watchdog time.Duration, f func(properties.TB)) (outcome.Outcome, time.Duration) {
	t.Helper()
	c := suite.Default()
	c.Backend, c.Watchdog = "emu", watchdog
	dev, _, err := suite.OpenDevice(c)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cfg := suite.ContractConfig(c, dev)
	cfg.Recorder, cfg.Seed = &outcome.Recorder{}, 12345
	defer suite.SetRapid(suite.Rapid{Checks: checks, NoFailFile: true})()
	start := time.Now()
	properties.RunQuiet(t.Name(), cfg, f)
	o, ok := cfg.Recorder.Outcomes()[id]
	if !ok {
		t.Fatalf("%s recorded no outcome", id)
	}
	return o, time.Since(start)
}

// The report's statistics of real contracts mean what they say: a
// contract that compares only scalars (C-BRMS-BACK-001's directional
// derivatives) has a ratio and no element statistics; RoPE's rotations,
// which cancel to near zero, have relative errors and ULP distances only
// where they describe the result (at most 1/2 and one binade, by Scaled's
// floor).
func TestContractStatistics(t *testing.T) {
	const checks = 5
	fd, _ := runContract(t, properties.BRMSBackFD, checks, 0, func(tb properties.TB) {
		properties.RMSNormBackwardFDContract(tb, kernels.RMSNormBwdWarp)
	})
	if s := fd.Stats; fd.Status != outcome.Discharged || s.Compared != 0 || s.MaxAbs != 0 || s.RelCompared != 0 || s.Scalars == 0 || !(s.MaxRatio > 0) {
		t.Errorf("%s: %s, stats %+v: want only ratios", properties.BRMSBackFD, fd.Status, s)
	}
	// In the report: the ratio, no element statistics, and the command
	// that reruns the prediction.
	c := suite.Default()
	c.Backend, c.Report, c.Summary, c.Progress, c.Checks = "emu", "off", false, 0, checks
	rep, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestFD", Run: func(tb properties.TB) {
		properties.RMSNormBackwardFDContract(tb, kernels.RMSNormBwdWarp)
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Prediction(properties.BRMSBackFD); p == nil || p.ErrorStats == nil || p.ErrorStats.MaxAbs != nil ||
		p.ErrorStats.MaxRel != nil || p.ErrorStats.MaxULP != nil || !(p.ErrorStats.MaxRatio > 0) || p.Rerun == "" {
		t.Errorf("reported %+v, stats %+v: want a ratio alone and a rerun command", p, p.ErrorStats)
	}
	rope, _ := runContract(t, properties.RoPEBasis, checks, 0, func(tb properties.TB) {
		properties.RoPEBasisContract(tb, kernels.RoPEFwdBatched, properties.PerRowPositions, kernels.RoPEBwd)
	})
	if s := rope.Stats; rope.Status != outcome.Discharged || s.Compared == 0 || s.RelCompared == 0 || s.MaxRel > 0.5 || s.MaxULP > 1<<24 {
		t.Errorf("%s: %s, stats %+v", properties.RoPEBasis, rope.Status, s)
	}
}
