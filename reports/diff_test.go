package reports

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	a := sampleReport()
	if d := Diff(a, sampleReport()); len(d) != 0 {
		t.Errorf("Diff of equal reports = %q", d)
	}
	b := sampleReport()
	b.Predictions[0].Status = Falsified
	b.Predictions[1].ClearFlag(FlagUnproven)
	b.Predictions[2].SetFlag(FlagUnproven)
	b.Predictions = slices.Delete(b.Predictions, 2, 3) // removes X-003 after editing it
	b.UpsertPrediction(Prediction{ID: "NEW-004", Status: Discharged})
	b.Mutants[0].Status, b.Mutants[0].KilledBy = MutantSurvived, ""
	b.Mutants[1].Status, b.Mutants[1].KilledBy = MutantKilled, "NEW-004"
	b.Mutants = b.Mutants[:2]
	b.UpsertMutant(Mutant{Name: "fresh", Kind: MutantNamed, Status: MutantSurvived})
	b.Kernels[0].PTXSHA256 = shaB
	b.Kernels = b.Kernels[:1]
	b.UpsertKernel(Kernel{Name: "softmax", Entry: "softmax"})

	want := []string{
		"prediction FALSIFY-DIM-001: discharged -> falsified",
		"prediction FALSIFY-RMS-002: flag unproven cleared",
		"prediction NEW-004: added (discharged)",
		"prediction FALSIFY-X-003: removed (was skipped)",
		"mutant drop-eps: killed -> survived",
		"mutant ptx:add->sub@12: survived -> killed by NEW-004",
		"mutant fresh: added (survived)",
		"mutant ptx:rnd@40: removed (was equivalent)",
		"mutant ptx:mul@7: removed (was not_exercised)",
		"mutant wrong-axis: removed (was killed)",
		"kernel rmsnorm_fwd: ptx_sha256 changed",
		"kernel softmax: added",
		"kernel rmsnorm_bwd: removed",
		"mutation score: 2/3 = 66.7% -> 1/3 = 33.3%",
	}
	if got := Diff(a, b); !slices.Equal(got, want) {
		t.Errorf("Diff =\n%q\nwant\n%q", got, want)
	}
	if got := Diff(nil, minimalReport()); !slices.Equal(got, []string{"prediction P-0: added (skipped)"}) {
		t.Errorf("Diff(nil, minimal) = %q", got)
	}
	if got := Diff(a, nil); len(got) != len(a.Predictions)+len(a.Mutants)+len(a.Kernels)+1+len(a.Benchmarks)+len(a.Coverage)+len(a.Costs)+1 {
		t.Errorf("Diff(a, nil) = %q", got)
	}

	c := sampleReport()
	c.Mutants[0].KilledBy = "FALSIFY-RMS-002"
	if got := Diff(a, c); !slices.Equal(got, []string{"mutant drop-eps: killed by FALSIFY-DIM-001 -> FALSIFY-RMS-002"}) {
		t.Errorf("Diff of killer = %q", got)
	}
}

// TestDiffEvidence: a change of the evidence with no change of status is a
// change — fewer checks (flagged), more checks, and a worst ratio that moved
// by more than RatioMoveThreshold — while a move within it is not.
func TestDiffEvidence(t *testing.T) {
	a := sampleReport()
	b := sampleReport()
	b.Predictions[0].Checks = a.Predictions[0].Checks / 2                           // 10000 -> 5000
	b.Predictions[4].Checks = a.Predictions[4].Checks * 2                           // 12 -> 24
	b.Predictions[0].ErrorStats.MaxRatio = 2 * a.Predictions[0].ErrorStats.MaxRatio // 0.31 -> 0.62
	b.Predictions[4].ErrorStats = nil                                               // 0.5 -> not measured
	want := []string{
		"prediction FALSIFY-DIM-001: checks 10000 -> 5000 (fewer)",
		"prediction FALSIFY-DIM-001: worst err/tol 0.31 -> 0.62 (+100%)",
		"prediction FALSIFY-Z-005: checks 12 -> 24",
		"prediction FALSIFY-Z-005: worst err/tol 0.5 -> (none)",
	}
	if got := Diff(a, b); !slices.Equal(got, want) {
		t.Errorf("Diff =\n%q\nwant\n%q", got, want)
	}

	c := sampleReport()
	c.Predictions[0].ErrorStats.MaxRatio *= 1 + RatioMoveThreshold/2
	if got := Diff(a, c); len(got) != 0 {
		t.Errorf("a ratio move within the threshold: Diff = %q", got)
	}
	for _, m := range []struct {
		was, is *float64
		moved   bool
	}{
		{ptr(0.5), ptr(0.5 * (1 + 2*RatioMoveThreshold)), true},
		{ptr(0.5), ptr(0.5 * (1 - 2*RatioMoveThreshold)), true},
		{ptr(0.5), ptr(0.5 * (1 + RatioMoveThreshold/2)), false},
		{ptr(RatioFloor / 10), ptr(RatioFloor / 100), false}, // both far from failing
		{ptr(math.NaN()), ptr(math.NaN()), false},
		{ptr(0.5), ptr(math.NaN()), true},
		{ptr(0.5), ptr(math.Inf(1)), true},
		{nil, ptr(0.5), true},
		{nil, nil, false},
	} {
		if got := RatioMoved(m.was, m.is); got != m.moved {
			t.Errorf("RatioMoved(%s, %s) = %v, want %v", ratioText(m.was), ratioText(m.is), got, m.moved)
		}
	}
}

// TestDiffRun: the run's settings that decide what was checked are
// changes; where the output went is not.
func TestDiffRun(t *testing.T) {
	a := sampleReport()
	a.Run.CommandLine = []string{"properties.test", "-rapid.checks=10000", "-ptxprop.max-elements", "4096", "-ptxprop.report=/tmp/a.json"}
	b := sampleReport()
	b.Run.ID, b.Run.Start, b.Run.Host, b.Run.GitCommit, b.Run.Notes = "other", a.Run.Start.Add(time.Hour), "other-host", "fedcba", nil
	b.Run.Backend = BackendEmu
	b.Run.Devices = b.Run.Devices[:1]
	b.Run.RapidChecks = 100
	b.Run.RapidSeed = ptr(uint64(7))
	b.Run.CommandLine = []string{"properties.test", "-test.short", "-rapid.checks=100", "--ptxprop.emu-adversarial=3", "-ptxprop.report", "/tmp/b.json"}
	for i := range b.Predictions {
		b.Predictions[i].Devices = nil
	}
	b.Mutants[4].Device = nil
	want := []string{
		"run: backend gpu -> emu",
		"run: devices [gpu 0 NVIDIA H200, gpu 1 NVIDIA H200] -> [gpu 0 NVIDIA H200]",
		"run: rapid_checks 10000 -> 100 (fewer)",
		"run: rapid_seed 18446744073709551615 -> 7",
		"run: -ptxprop.emu-adversarial (unset) -> 3",
		"run: -ptxprop.max-elements 4096 -> (unset)",
		"run: -rapid.checks 10000 -> 100",
		"run: -test.short (unset) -> true",
	}
	if got := Diff(a, b); !slices.Equal(got, want) {
		t.Errorf("Diff =\n%q\nwant\n%q", got, want)
	}
}

func TestCommandSettings(t *testing.T) {
	got := CommandSettings([]string{"x.test", "-test.v", "-ptxprop.checks", "200", "-rapid.seed=5", "-test.short", "-ptxprop.devices=2",
		"-ptxprop.merge", "-ptxprop.devices=0,1", "--ptxprop.seed=9", "-ptxprop.progress=0", "stray", "--", "-ptxprop.backend=gpu"})
	want := map[string]string{"ptxprop.checks": "200", "rapid.seed": "5", "test.short": "true", "ptxprop.devices": "0,1", "ptxprop.seed": "9"}
	if !maps.Equal(got, want) {
		t.Errorf("CommandSettings = %v, want %v", got, want)
	}
}

// TestCompareClasses: the classes Compare gives the lines of TestDiff's
// kind of change, and the noise rule for bandwidth.
func TestCompareClasses(t *testing.T) {
	a := sampleReport()
	b := sampleReport()
	b.Predictions[0].Status = Falsified                                    // was discharged: regression
	b.Predictions[1].Status, b.Predictions[1].ChecksFailed = Discharged, 0 // was falsified: improvement
	b.Predictions[4].Status = Error                                        // inconclusive -> error: neither
	b.Mutants[0].Status, b.Mutants[0].KilledBy = MutantSurvived, ""        // named: regression
	b.Mutants[1].Status, b.Mutants[1].KilledBy = MutantKilled, "FALSIFY-Z-005"
	want := map[string]Class{
		"prediction FALSIFY-DIM-001: discharged -> falsified":         Regression,
		"prediction FALSIFY-RMS-002: falsified -> discharged":         Improvement,
		"prediction FALSIFY-Z-005: inconclusive -> error":             Changed,
		"mutant drop-eps: killed -> survived":                         Regression,
		"mutant ptx:add->sub@12: survived -> killed by FALSIFY-Z-005": Changed, // generic: counted in the score
	}
	got := map[string]Class{}
	for _, c := range Compare(a, b) {
		got[c.Text] = c.Class
	}
	for text, class := range want {
		if c, ok := got[text]; !ok || c != class {
			t.Errorf("%q: class %v (present %v), want %v; all: %v", text, c, ok, class, got)
		}
	}

	for _, c := range []struct {
		old, new      []float64
		dropped, rose bool
	}{
		{[]float64{0.8, 0.82}, []float64{0.7, 0.79}, true, false},
		{[]float64{0.8, 0.82}, []float64{0.7, 0.8}, false, false}, // touches the old night's worst
		{[]float64{0.8, 0.82}, []float64{0.83, 0.9}, false, true},
		{[]float64{0.8}, []float64{0.1, 0.2}, false, false}, // one repetition: noise unknown
	} {
		if d, r := BandwidthDropped(c.old, c.new), BandwidthRose(c.old, c.new); d != c.dropped || r != c.rose {
			t.Errorf("%v -> %v: dropped %v rose %v, want %v %v", c.old, c.new, d, r, c.dropped, c.rose)
		}
	}
}
