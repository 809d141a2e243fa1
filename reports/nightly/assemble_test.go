package nightly

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// stageReport is one stage's report as the device's processes write it:
// one run per process, on one commit and device.
func stageReport(backend reports.Backend, preds []reports.Prediction, mutants []reports.Mutant) *reports.Report {
	start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	r := reports.New(reports.Run{ID: reports.NewRunID(), Start: start, End: start.Add(time.Minute), GitCommit: "abc123", GoVersion: "go1.26",
		Backend: backend, Device: "NVIDIA H200", RapidChecks: 10000})
	r.Predictions, r.Mutants = preds, mutants
	r.Kernels = []reports.Kernel{{Name: "rmsnorm_fwd", Origin: reports.KernelOurs, PTX: "kernels/ptx/rmsnorm.ptx", Entry: "rmsnorm_fwd", PTXSHA256: sha}}
	return r
}

func discharged(id string, checks int) reports.Prediction {
	return reports.Prediction{ID: id, Kernels: []string{"rmsnorm_fwd"}, Status: reports.Discharged, Checks: checks,
		ErrorStats: &reports.ErrorStats{MaxRatio: 0.5}}
}

func write(t *testing.T, dir, name string, r *reports.Report) {
	t.Helper()
	if err := reports.Write(filepath.Join(dir, name), r); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// nightlyDir writes the outputs of every stage of one night.
func nightlyDir(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, ContractReport, stageReport(reports.BackendGPU, []reports.Prediction{discharged("FALSIFY-RMS-001", 10000)}, nil))
	foreign := discharged("FALSIFY-RMS-001@triton_rmsnorm", 100)
	foreign.Binding = "triton_rmsnorm"
	write(t, dir, ForeignReport, stageReport(reports.BackendGPU, []reports.Prediction{foreign}, nil))
	notRun := reports.Prediction{ID: "FALSIFY-RMS-001", Kernels: []string{"rmsnorm_fwd"}, Status: reports.NotRun, Reason: "falsify runs contracts on mutants only"}
	write(t, dir, MutantsReport, stageReport(reports.BackendGPU, []reports.Prediction{notRun},
		[]reports.Mutant{{Name: "rmsnorm_no_eps", Kind: reports.MutantNamed, Kernel: "rmsnorm_fwd", Status: reports.MutantKilled, KilledBy: "FALSIFY-RMS-001", ChecksToKill: 3}}))
	race := reports.Prediction{ID: "FALSIFY-RMS-001", Kernels: []string{"rmsnorm_fwd"}, Status: reports.Error, Checks: 1, ChecksFailed: 1,
		Reason: "launch rmsnorm_fwd: data race: shared write by thread (1,0,0) after read by (0,0,0)\n\tkernel rmsnorm_fwd, PTX line 88 (pc 40): st.shared.f32"}
	write(t, dir, EmuReport, stageReport(reports.BackendEmu, []reports.Prediction{race}, nil))
	write(t, dir, EmuForeignReport, stageReport(reports.BackendEmu, []reports.Prediction{foreign}, nil))
	// memcheck's planted run as an H200 printed it: the planted write,
	// then the API calls that fail because it destroyed the context.
	for _, f := range []string{"memcheck-planted-h200.txt", "racecheck-planted.txt", "initcheck-clean.txt"} {
		tool := strings.Split(f, "-")[0]
		target := strings.TrimSuffix(strings.Split(f, "-")[1], ".txt")
		if target == "clean" {
			target = "edge"
		}
		copyFile(t, filepath.Join("testdata", f), filepath.Join(dir, SanitizerDir, tool+"-"+target+".log"))
	}
	copyFile(t, filepath.Join("testdata", "bench.log"), filepath.Join(dir, BenchLog))
	copyFile(t, filepath.Join("testdata", "torch-kernels.jsonl"), filepath.Join(dir, TorchFile))
	stages := "properties\tok\t0\t412\nfalsify\tok\t0\t233\nforeign\tok\t1\t20\tverify found a falsified prediction (expected)\n" +
		"bench\tok\t0\t60\ntorch\tok\t0\t90\nsanitizer\tok\t0\t300\nemu-checks\tfailed\t1\t500\nsynccheck\tskipped\t0\t0\tno planted target for synccheck\n"
	if err := os.WriteFile(filepath.Join(dir, StagesFile), []byte(stages), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, EnvironmentFile), []byte("nightly.start=2026-12-02T14:42:51Z\ntorch=2.5.1\ncompute-sanitizer=2024.3.1\nnot a pair\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAssemble(t *testing.T) {
	dir := nightlyDir(t)
	res, err := Assemble(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if lint := r.Lint(); len(lint) > 0 {
		t.Fatalf("lint: %v", lint)
	}
	// Predictions: the suite's verdict (its checks, not the mutants'
	// placeholder), and the foreign binding's.
	if p := r.Prediction("FALSIFY-RMS-001"); p == nil || p.Status != reports.Discharged || p.Checks != 10000 {
		t.Errorf("FALSIFY-RMS-001 = %+v, want discharged with 10000 checks", p)
	}
	if p := r.Prediction("FALSIFY-RMS-001@triton_rmsnorm"); p == nil || p.HasFlag(reports.FlagUnproven) {
		t.Errorf("the foreign verdict is missing, or flagged unproven by our mutants: %+v", p)
	}
	if p := r.Prediction("FALSIFY-RMS-001"); p == nil || p.HasFlag(reports.FlagUnproven) {
		t.Errorf("FALSIFY-RMS-001 killed a mutant, yet is flagged unproven: %+v", p)
	}
	if m := r.Mutant("rmsnorm_no_eps"); m == nil || m.Status != reports.MutantKilled {
		t.Errorf("kill matrix: %+v", m)
	}
	if r.Run.RapidChecks != 10000 {
		t.Errorf("rapid_checks = %d, want the suite's 10000", r.Run.RapidChecks)
	}
	// Benchmarks: three repetitions, torch beside them.
	b := r.Benchmark("RMSNormFwd", "rows=4096 hidden=896")
	if b == nil || len(b.CopyRatio) != 3 || len(b.TorchEagerRatio) != 3 || len(b.TorchCompileRatio) != 3 || b.Size != 896 {
		t.Fatalf("benchmark = %+v", b)
	}
	if got := b.TorchEagerRatio[0]; got < 1.99 || got > 2.01 { // 20 µs over 10 µs
		t.Errorf("torch eager ratio = %v, want 2", got)
	}
	if r.Benchmark("RMSNormFwd", "rows=2048 hidden=128") == nil || len(r.Benchmark("RMSNormFwd", "rows=2048 hidden=128").TorchEagerRatio) != 0 {
		t.Error("a shape torch could not time keeps its copy ratio, without torch")
	}
	// Sanitizer: the planted bugs were found and are not findings; the
	// emulator's race is one.
	s := r.Sanitizer
	if s == nil {
		t.Fatal("no sanitizer section")
	}
	for _, tool := range []string{EmuTool, "memcheck", "racecheck", "initcheck"} {
		if !slices.Contains(s.Tools, tool) {
			t.Errorf("tools %v lack %s", s.Tools, tool)
		}
	}
	if len(s.Findings) != 1 || s.Findings[0].Tool != EmuTool || s.Findings[0].Kind != "data race" || s.Findings[0].PTXLine != 88 || s.Findings[0].Kernel != "rmsnorm_fwd" {
		t.Errorf("findings = %+v, want the emulator's data race at PTX line 88 alone", s.Findings)
	}
	// The run spans the night: from the script's start through its
	// stages (412 + 233 + 20 + 60 + 90 + 300 + 500 s).
	if got := r.Run.Start.Format(time.RFC3339); got != "2026-12-02T14:42:51Z" {
		t.Errorf("run start %s, want the night's", got)
	}
	if got := r.Run.End.Sub(r.Run.Start); got != 1615*time.Second {
		t.Errorf("run spans %v, want the stages' 1615 s", got)
	}
	// Environment and stages.
	for k, want := range map[string]string{"torch": "2.5.1", "stage.synccheck": "skipped: no planted target for synccheck",
		"stage.properties": "ok in 412 s", "stage.emu-checks": "failed (exit 1) after 500 s"} {
		if got := r.Run.Environment[k]; got != want {
			t.Errorf("environment[%s] = %q, want %q", k, got, want)
		}
	}
	if !res.Failed() {
		t.Error("a failed stage must fail the nightly")
	}
	if len(res.Problems) > 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	// The report round-trips.
	out := filepath.Join(t.TempDir(), "nightly.json")
	if err := reports.Write(out, r); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.Read(out); err != nil {
		t.Fatal(err)
	}
}

// A planted bug the sanitizer missed fails the nightly and says so.
func TestAssemblePlantedMissed(t *testing.T) {
	dir := nightlyDir(t)
	copyFile(t, filepath.Join("testdata", "initcheck-clean.txt"), filepath.Join(dir, SanitizerDir, "memcheck-planted.log"))
	res, err := Assemble(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "memcheck did not find the bug planted in planted_oob_write") {
		t.Errorf("problems = %v", res.Problems)
	}
	i := slices.IndexFunc(res.Report.Sanitizer.Findings, func(f reports.SanitizerFinding) bool { return f.Kind == "planted bug not found" })
	if i < 0 {
		t.Error("no finding says the planted bug was not found")
	}
}

func TestAssembleNothing(t *testing.T) {
	if _, err := Assemble(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no contract report") {
		t.Errorf("err = %v", err)
	}
}

// A device error outside the planted target is one finding: the API calls
// that fail after it, because it destroyed the context, are noted on it,
// not counted apart.
func TestSanitizerLostContextIsOneFinding(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join("testdata", "memcheck-planted-h200.txt"), filepath.Join(dir, "memcheck-edge.log"))
	san := &reports.Sanitizer{}
	probs, err := sanitizerLogs(dir, san)
	if err != nil || len(probs) != 0 {
		t.Fatalf("sanitizerLogs: %v, problems %q", err, probs)
	}
	if len(san.Findings) != 1 || san.Findings[0].Kernel != "planted_oob_write" || !strings.Contains(san.Findings[0].Message, "the context is lost") {
		t.Fatalf("findings = %+v, want the invalid write alone, noting the lost context", san.Findings)
	}
}

// The emulator stage's coverage is united with the GPU run's (its
// emulator side covered other directions), and its counts are taken for
// the report's kernels only.
func TestTakeEmulatorCounts(t *testing.T) {
	k := reports.Kernel{Name: "k"}
	ua, ub := reports.UncoveredBranch{Line: 10, Direction: "taken"}, reports.UncoveredBranch{Line: 20, Direction: "not taken"}
	out := &reports.Report{Kernels: []reports.Kernel{k}, Coverage: []reports.Coverage{{Kernel: "k", Branches: 4, Covered: 2, Uncovered: []reports.UncoveredBranch{ua, ub}}}}
	emu := &reports.Report{Kernels: []reports.Kernel{k, {Name: "other"}},
		Coverage: []reports.Coverage{{Kernel: "k", Branches: 4, Covered: 3, Uncovered: []reports.UncoveredBranch{ub}}, {Kernel: "other", Branches: 2, Covered: 2}},
		Costs:    []reports.Cost{{Kernel: "k", Shape: "rows=1 hidden=1", Elements: 1}, {Kernel: "other", Shape: "rows=1 hidden=1", Elements: 1}}}
	takeEmulatorCounts(out, emu)
	if len(out.Coverage) != 1 || out.Coverage[0].Covered != 3 || len(out.Coverage[0].Uncovered) != 1 || out.Coverage[0].Uncovered[0] != ub {
		t.Errorf("coverage = %+v, want k's union: 3 of 4, line 20 uncovered", out.Coverage)
	}
	if len(out.Costs) != 1 || out.Costs[0].Kernel != "k" {
		t.Errorf("costs = %+v, want k's alone", out.Costs)
	}
}
