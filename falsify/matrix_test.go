package falsify

import (
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

// TestSummaryScoresAsTheReport: the kill matrix in the test log and the
// report's summary give one score, the one the gate uses; a mutant no check
// exercised is not counted.
func TestSummaryScoresAsTheReport(t *testing.T) {
	results := []Result{
		{Mutant: "rmsnorm_fwd_rms/arith-swap@pc36", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantKilled, KilledBy: "P", Checks: 2},
		{Mutant: "rmsnorm_fwd_rms/arith-swap@pc37", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantSurvived, Reason: "rounding-level: …"},
		{Mutant: "rmsnorm_fwd_rms/bar-del@pc130", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantNotExercised, Reason: "not exercised: …"},
		{Mutant: "eps-hardcoded", Kind: reports.MutantNamed, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantKilled, KilledBy: "Q", Expected: []string{"P"}, Checks: 3, Duration: time.Second},
	}
	sc := reports.ScoreOf(Mutants(results), reports.MutantGeneric)
	if sc.String() != "1/2 = 50.0%" || sc.NotExercised != 1 {
		t.Errorf("generic score %s (%+v), want 1/2 with 1 not exercised", sc, sc)
	}
	out := Summary(results, map[string]int{"rmsnorm_fwd_rms": 140}, time.Second)
	t.Logf("\n%s", out)
	r := reports.New(reports.NewRun(reports.BackendEmu))
	r.Predictions = []reports.Prediction{{ID: "P", Status: reports.Skipped}}
	r.Mutants = Mutants(results)
	var b strings.Builder
	if err := reports.Summary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"mutation score 2/3 = 66.7% (4 mutants: 2 killed, 1 survived, 1 not_exercised)\n",
		"generic mutants: 1/2 = 50.0%; 3 run of 140 sites in 1 kernel\n",
		"UNEXPECTED (expected P)",
		"1 survivors differ from the original only at rounding level",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kill matrix lacks %q", want)
		}
	}
	if !strings.Contains(b.String(), "mutation score 2/3 = 66.7%") || !strings.Contains(b.String(), "generic mutants: 1/2 = 50.0%\n") {
		t.Errorf("report summary scores otherwise:\n%s", b.String())
	}
}
