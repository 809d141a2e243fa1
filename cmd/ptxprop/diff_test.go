package main

import (
	"testing"

	"github.com/ptxprop/ptxprop/reports"
)

// nightly is newReport with what a nightly adds: a named mutant killed, a
// generic one killed, coverage, a benchmark with repeated timings, a clean
// sanitizer pass and emulator counts.
func nightly(r *reports.Report) {
	r.Kernels = []reports.Kernel{{Name: "k", Origin: reports.KernelUser}}
	r.Mutants = []reports.Mutant{
		{Name: "drop-eps", Kind: reports.MutantNamed, Kernel: "k", Status: reports.MutantKilled, KilledBy: "P-1"},
		{Name: "ptx:add@3", Kind: reports.MutantGeneric, Kernel: "k", Status: reports.MutantKilled, KilledBy: "P-1"},
	}
	r.Coverage = []reports.Coverage{{Kernel: "k", Branches: 10, Covered: 9, Uncovered: []reports.UncoveredBranch{{Line: 7}}}}
	r.Benchmarks = []reports.Benchmark{{Kernel: "k", Shape: "hidden=4096", Size: 4096, CopyRatio: []float64{0.80, 0.82, 0.81}}}
	r.Sanitizer = &reports.Sanitizer{Tools: []string{"memcheck", "racecheck"}}
	r.Costs = []reports.Cost{{Kernel: "k", Shape: "hidden=33", Elements: 33, InstructionsPerElement: 40, BytesPerElement: 8}}
}

// TestReportDiffRegressions plants each regression report diff must catch
// in a copy of one night's report: each exits 1 naming it, and the same
// pair the other way round is an improvement and exits 0.
func TestReportDiffRegressions(t *testing.T) {
	old := write(t, nightly)
	planted := []struct {
		name, line, converse string
		edit                 func(r *reports.Report)
	}{
		{"failing property", "regression   prediction P-1: discharged -> falsified", "improvement  prediction P-1: falsified -> discharged",
			func(r *reports.Report) {
				r.Predictions[0].Status, r.Predictions[0].Reason, r.Predictions[0].ChecksFailed = reports.Falsified, "wrong", 1
			}},
		{"re-enabled mutant", "regression   mutant drop-eps: killed -> survived", "improvement  mutant drop-eps: survived -> killed by P-1",
			func(r *reports.Report) { r.Mutants[0].Status, r.Mutants[0].KilledBy = reports.MutantSurvived, "" }},
		{"lower mutation score", "regression   mutation score: 2/2 = 100.0% -> 1/2 = 50.0%", "improvement  mutation score: 1/2 = 50.0% -> 2/2 = 100.0%",
			func(r *reports.Report) { r.Mutants[1].Status, r.Mutants[1].KilledBy = reports.MutantSurvived, "" }},
		{"lower coverage", "regression   coverage k: 9/10 (90.0%) -> 8/10 (80.0%)", "improvement  coverage k: 8/10 (80.0%) -> 9/10 (90.0%)",
			func(r *reports.Report) { r.Coverage[0].Covered = 8 }},
		{"slower kernel", "regression   bench k hidden=4096: copy ratio 0.81 (3 runs, 0.8–0.82) -> 0.7 (3 runs, 0.69–0.71) (down beyond the timings' spread)",
			"improvement  bench k hidden=4096: copy ratio 0.7 (3 runs, 0.69–0.71) -> 0.81",
			func(r *reports.Report) { r.Benchmarks[0].CopyRatio = []float64{0.70, 0.69, 0.71} }},
		{"new sanitizer finding", "regression   sanitizer: new finding racecheck k:12 RAW hazard", "improvement  sanitizer: finding gone racecheck k:12 RAW hazard",
			func(r *reports.Report) {
				r.Sanitizer.Findings = []reports.SanitizerFinding{{Tool: "racecheck", Kernel: "k", PTXLine: 12, Kind: "RAW hazard"}}
			}},
		{"costlier kernel", "regression   cost k hidden=33: instructions per element 40 -> 41 (+2.5%)", "improvement  cost k hidden=33: instructions per element 41 -> 40",
			func(r *reports.Report) { r.Costs[0].InstructionsPerElement = 41 }},
		{"more bytes", "regression   cost k hidden=33: bytes per element 8 -> 12", "improvement  cost k hidden=33: bytes per element 12 -> 8",
			func(r *reports.Report) { r.Costs[0].BytesPerElement = 12 }},
	}
	for _, p := range planted {
		t.Run(p.name, func(t *testing.T) {
			bad := write(t, func(r *reports.Report) { nightly(r); p.edit(r) })
			runCases(t, []cliCase{
				{[]string{"report", "diff", old, bad}, 1, p.line, ""},
				{[]string{"diff", old, bad}, 1, p.line, ""}, // the alias
				{[]string{"report", "diff", bad, old}, 0, p.converse, ""},
			})
		})
	}

	// Within the noise: the new night's timings overlap the old night's.
	runCases(t, []cliCase{
		{[]string{"report", "diff", old, write(t, func(r *reports.Report) {
			nightly(r)
			r.Benchmarks[0].CopyRatio = []float64{0.79, 0.805, 0.80}
		})}, 0, "no changes", ""},
		// One repetition: the noise is unknown, so a drop is a change only.
		{[]string{"report", "diff", write(t, func(r *reports.Report) { nightly(r); r.Benchmarks[0].CopyRatio = []float64{0.8} }),
			write(t, func(r *reports.Report) { nightly(r); r.Benchmarks[0].CopyRatio = []float64{0.5} })}, 0,
			"change       bench k hidden=4096: copy ratio 0.8 (1 run) -> 0.5 (1 run) (noise unknown: one repetition)", ""},
		{[]string{"report", "diff", old, old}, 0, "no changes", ""},
	})
}
