package reports

import (
	"slices"
	"testing"
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
	if got := Diff(a, nil); len(got) != len(a.Predictions)+len(a.Mutants)+len(a.Kernels)+1 {
		t.Errorf("Diff(a, nil) = %q", got)
	}

	c := sampleReport()
	c.Mutants[0].KilledBy = "FALSIFY-RMS-002"
	if got := Diff(a, c); !slices.Equal(got, []string{"mutant drop-eps: killed by FALSIFY-DIM-001 -> FALSIFY-RMS-002"}) {
		t.Errorf("Diff of killer = %q", got)
	}
}
