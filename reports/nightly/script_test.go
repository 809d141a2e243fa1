package nightly

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// script is the nightly job this package's reports come from.
var script = filepath.Join("..", "..", "scripts", "gpu-nightly.sh")

// dryRun runs the script with DRY_RUN=1 and env, and returns its output.
func dryRun(t *testing.T, env ...string) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command("bash", script)
	cmd.Env = append(scriptFree(os.Environ()), append([]string{"DRY_RUN=1", "OUT=" + t.TempDir(), "SANITIZER=true"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// scriptFree returns env without the variables the script reads as its
// settings: the test's expectations are the script's defaults, whatever
// the calling make or CI set (make test exports CHECKS=1000).
func scriptFree(env []string) []string {
	settings := map[string]bool{}
	for _, v := range []string{"BENCH_COUNT", "BIN", "CHECKS", "DEADLINE", "DEVICES", "DRY_RUN", "EMU_CHECKS", "EMU_SCHEDULE",
		"FALSIFY_FLAGS", "FOREIGN_CHECKS", "MAX_ELEMENTS", "NIGHTLY_BACKEND", "OUT", "PROFILE", "SANITIZER", "SAN_CHECKS",
		"SOAK_CHECKS", "SOAK_MAX_ELEMENTS", "SOAK_RUN", "SOAK_SHARDS"} {
		settings[v] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !settings[k] {
			out = append(out, kv)
		}
	}
	return out
}

// The GPU path of the nightly, as far as it goes without a GPU: every
// stage's command is printed, on the GPU backend, with the reports where
// nightly-merge reads them (SANITIZER=true stands in for compute-sanitizer).
func TestScriptDryRunGPU(t *testing.T) {
	out := dryRun(t, "NIGHTLY_BACKEND=gpu")
	for _, want := range []string{
		"properties.test -test.v", "-ptxprop.backend=gpu", "-rapid.checks=10000", "-ptxprop.report=", ContractReport,
		"falsify.test", MutantsReport, "ptxprop verify", ForeignReport, "binding/testdata/foreign/",
		"-test.bench \\^BenchmarkKernels\\$", "-test.count 3",
		"true --tool memcheck", "true --tool racecheck", "true --tool initcheck", "true --tool synccheck",
		"PTXPROP_SANITIZER_PLANTED=1", "TestSanitizerPlanted", SanitizerDir + "/memcheck-planted.log", SanitizerDir + "/synccheck-foreign.log",
		"-ptxprop.backend=emu -ptxprop.emu-schedule=", EmuReport, EmuForeignReport,
		"ptxprop nightly-merge -o", "ptxprop report html -o",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not print %q:\n%s", want, out)
		}
	}
}

// NIGHTLY_BACKEND=emu runs everything on the emulator and says why the
// benchmarks and the sanitizer are skipped.
func TestScriptDryRunEmu(t *testing.T) {
	out := dryRun(t, "NIGHTLY_BACKEND=emu")
	for _, want := range []string{"unit skipped: ", "bench skipped: the emulator's timings", "sanitizer skipped: compute-sanitizer needs the GPU",
		"-ptxprop.backend=emu ", "ptxprop nightly-merge -o"} {
		if !strings.Contains(out, want) {
			t.Errorf("the emu dry run does not print %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-ptxprop.backend=gpu") {
		t.Errorf("the emu dry run uses the GPU:\n%s", out)
	}
}

func TestScriptShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("no shellcheck")
	}
	if out, err := exec.Command(sc, script).CombinedOutput(); err != nil {
		t.Errorf("shellcheck %s: %v\n%s", script, err, out)
	}
}
