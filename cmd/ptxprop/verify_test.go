package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/reports"
)

func TestVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := "../../binding/testdata/rmsnorm_fwd.yaml"
	src, err := os.ReadFile("../../binding/testdata/rmsnorm_bwd_chunk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(cwd0, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// x and dy swapped: loads, then is falsified.
	wrong := filepath.Join(dir, "swapped.yaml")
	src = bytes.Replace(src, []byte("[x, gamma, rms, dy,"), []byte("[dy, gamma, rms, x,"), 1)
	src = bytes.ReplaceAll(src, []byte("../../kernels/ptx/"), []byte(abs("../../kernels/ptx")+"/"))
	src = bytes.Replace(src, []byte("forward: rmsnorm_fwd.yaml"), []byte("forward: "+abs("../../binding/testdata/rmsnorm_fwd.yaml")), 1)
	if err := os.WriteFile(wrong, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // relative paths resolve here
	cases := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, ""},
		{"no binding", nil, 2, "usage: ptxprop verify"},
		{"missing binding", []string{filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml: cannot read the binding file: no such file or directory"},
		{"discharged", []string{abs(good)}, 0, ""},
		{"falsified", []string{wrong}, 1, ""},
		// A forward that saves no statistics (an inference kernel) is a
		// valid binding: its predictions check y alone.
		{"layernorm without statistics", []string{abs("../../binding/testdata/layernorm_fwd_no_stats.yaml")}, 0, ""},
		// Binding errors that show at some shapes only: exit 2 with the
		// file:line, before anything is launched (no report).
		{"scratch divides by zero", []string{abs("../../binding/testdata/faults/scratch_div7.yaml")}, 2, "scratch_div7.yaml:9: scratch tmp size at rows=1 hidden=7: division by zero"},
		{"grid below one", []string{abs("../../binding/testdata/faults/grid_negative.yaml")}, 2, "grid_negative.yaml:9: rmsnorm_fwd_rms at rows=1 hidden=3: impossible launch: grid.x = 0"},
		{"scratch over the cap", []string{abs("../../binding/testdata/faults/scratch_huge.yaml")}, 2, "scratch_huge.yaml:9: scratch big has 4913000 elements at rows=1 hidden=17"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			report := filepath.Join(dir, c.name+".json")
			var out, errb bytes.Buffer
			code := run(append([]string{"verify", "-ptxprop.checks=5", "-ptxprop.report=" + report}, c.args...), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), c.err) {
				t.Fatalf("stderr does not contain %q:\n%s", c.err, errb.String())
			}
			if c.code == 2 || c.name == "help" {
				if _, err := os.Stat(report); err == nil {
					t.Errorf("exit %d wrote a report", c.code)
				}
				return
			}
			rep, err := reports.Read(report)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]reports.PredictionStatus{"RMS-FWD-001": reports.Discharged}
			switch c.name {
			case "falsified":
				want = map[string]reports.PredictionStatus{"P-BRMS-BACK-001": reports.Falsified}
			case "layernorm without statistics":
				want = map[string]reports.PredictionStatus{"LN-FWD-001": reports.Discharged, "LN-MOMENTS-001": reports.Discharged}
			}
			for _, p := range rep.Predictions {
				id, _, _ := strings.Cut(p.ID, "@") // ID@binding
				if s, ok := want[id]; ok {
					if p.Status != s || p.Checks == 0 {
						t.Errorf("%s: %s after %d checks, want %s", p.ID, p.Status, p.Checks, s)
					}
					delete(want, id)
				}
				if p.Status == reports.NotRun {
					t.Errorf("%s: not run: a verify report lists only the claimed predictions", p.ID)
				}
			}
			if c.name == "falsified" {
				for _, p := range rep.Predictions {
					if p.Reproduction != nil && !strings.HasPrefix(p.Reproduction.Command, "ptxprop verify ") {
						t.Errorf("%s: reproduction %q, want a ptxprop verify command", p.ID, p.Reproduction.Command)
					}
				}
			}
			if len(want) > 0 {
				t.Errorf("not in the report: %v", want)
			}
		})
	}
}

var cwd0, _ = os.Getwd()

// goodBinding is a binding whose one prediction is discharged, by absolute
// path (tests change directory).
func goodBinding(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(cwd0, "../../binding/testdata/rmsnorm_fwd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runVerify runs ptxprop with args and fails unless it exits code.
func runVerify(t *testing.T, code int, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if got := run(args, &out, &errb); got != code {
		t.Fatalf("ptxprop %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, got, code, cut(out.String()), cut(errb.String()))
	}
	return out.String(), errb.String()
}

// TestVerifyFlagsAfterFiles: flags after the binding files are flags, as a
// person types them; before, they were read as binding files (exit 2).
func TestVerifyFlagsAfterFiles(t *testing.T) {
	report := filepath.Join(t.TempDir(), "r.json")
	runVerify(t, 0, "verify", goodBinding(t), "-ptxprop.checks=5", "-ptxprop.report="+report)
	rep, err := reports.Read(report)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run.RapidChecks != 5 {
		t.Errorf("rapid_checks %d, want the 5 of -ptxprop.checks=5 given after the file", rep.Run.RapidChecks)
	}
	// After "--", a flag-like argument is a binding file.
	_, errs := runVerify(t, 2, "verify", "-ptxprop.report="+report, "--", "-ptxprop.checks=5")
	if !strings.Contains(errs, "-ptxprop.checks=5: cannot read the binding file") {
		t.Errorf("after --, -ptxprop.checks=5 should be a binding file; stderr:\n%s", errs)
	}
}

// TestVerifyRapidFlags: -rapid.checks and -rapid.seed are taken and win
// over -ptxprop.checks and -ptxprop.seed, in either order; before, verify
// refused them (exit 2).
func TestVerifyRapidFlags(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"-ptxprop.checks=5", "-ptxprop.seed=99", "-rapid.checks=7", "-rapid.seed=12345"},
		{"-rapid.checks=7", "-rapid.seed=12345", "-ptxprop.checks=5", "-ptxprop.seed=99"},
	} {
		report := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		runVerify(t, 0, append(append([]string{"verify", "-ptxprop.report=" + report}, args...), goodBinding(t))...)
		rep, err := reports.Read(report)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Run.RapidChecks != 7 || rep.Run.RapidSeed == nil || *rep.Run.RapidSeed != 12345 {
			t.Errorf("%q: rapid_checks %d, rapid_seed %v; want 7 and 12345", args, rep.Run.RapidChecks, rep.Run.RapidSeed)
		}
	}
	runVerify(t, 2, "verify", "-rapid.checks=many", goodBinding(t))

	// In a process of its own, as the command runs: the flag wins over
	// RAPID_CHECKS and RAPID_SEED, which rapid reads when the process starts.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "env.json")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "RAPID_CHECKS=3", "RAPID_SEED=4", mainEnv+"=1",
		mainEnv+"_ARGS=verify -ptxprop.report="+report+" -rapid.checks=7 -rapid.seed=12345 "+goodBinding(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, cut(string(out)))
	}
	rep, err := reports.Read(report)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run.RapidChecks != 7 || rep.Run.RapidSeed == nil || *rep.Run.RapidSeed != 12345 {
		t.Errorf("with RAPID_CHECKS=3 RAPID_SEED=4: rapid_checks %d, rapid_seed %v; want the flags' 7 and 12345", rep.Run.RapidChecks, rep.Run.RapidSeed)
	}
}

// TestVerifyReportPath: verify writes a report of its own and says where;
// it never replaces the suite's report, and creates no out/ outside the
// ptxprop module. Before, it wrote out/contract-report.json wherever it
// ran, silently.
func TestVerifyReportPath(t *testing.T) {
	if _, ok := os.LookupEnv("PTXPROP_REPORT"); ok {
		t.Setenv("PTXPROP_REPORT", "") // "": the default
	}
	good := goodBinding(t)

	// Outside any module: verify-report.json here, no out/.
	outside := t.TempDir()
	t.Chdir(outside)
	stdout, _ := runVerify(t, 0, "verify", "-ptxprop.checks=5", good)
	if !strings.Contains(stdout, "report: verify-report.json\n") {
		t.Errorf("stdout does not name the report written:\n%s", cut(stdout))
	}
	if _, err := reports.Read(filepath.Join(outside, "verify-report.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("verify created out/ outside the ptxprop module")
	}

	// Inside the ptxprop module (a copy of its go.mod), below its root:
	// out/verify-report.json at the root, beside the suite's report, which
	// is left as it was.
	root := t.TempDir()
	mod, err := os.ReadFile(filepath.Join(cwd0, "../../go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "binding")
	suiteReport := filepath.Join(root, "out", "contract-report.json")
	for _, d := range []string{sub, filepath.Dir(suiteReport)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.Write(suiteReport, newReport()); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(suiteReport)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	want := filepath.Join("..", "out", "verify-report.json")
	stdout, _ = runVerify(t, 0, "verify", "-ptxprop.checks=5", good)
	if !strings.Contains(stdout, "report: "+want+"\n") {
		t.Errorf("stdout does not name %s:\n%s", want, cut(stdout))
	}
	if rep, err := reports.Read(want); err != nil || rep.Predictions[0].Binding == "" {
		t.Errorf("verify's report: %v", err)
	}
	// Told to write over the suite's report, it refuses, and launches nothing.
	_, errs := runVerify(t, 2, "verify", "-ptxprop.checks=5", "-ptxprop.report="+suiteReport, good)
	if !strings.Contains(errs, "holds a report of ptxprop's own kernels") {
		t.Errorf("stderr does not say why:\n%s", errs)
	}
	if after, err := os.ReadFile(suiteReport); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the suite's report changed (%v)", err)
	}
	// The same binding's report, though, is verify's to replace.
	runVerify(t, 0, "verify", "-ptxprop.checks=5", "-ptxprop.report="+want, good)
}

// TestMakeVerifyForeignBadBinding runs `make verify-foreign` as a person
// does, on a binding that names an entry its PTX lacks: the target must
// fail with verify's exit status 2. Through `go run`, which turns every
// failure into exit status 1, the target took it for a finding and passed.
// The CLI is built where PTXPROP names (here a temporary file), and an
// existing one is used as it is, as on the GPU machine, which has no Go.
func TestMakeVerifyForeignBadBinding(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make command")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(goodBinding(t))
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := filepath.Abs(filepath.Join(cwd0, "../../kernels/ptx"))
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte("entry: rmsnorm_fwd_rms"), []byte("entry: no_such_entry"), 1)
	src = bytes.ReplaceAll(src, []byte("../../kernels/ptx"), []byte(ptx))
	bad := filepath.Join(dir, "bad.binding.yaml")
	if err := os.WriteFile(bad, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(dir, "bin", "ptxprop")
	makeIt := func() (int, string) {
		cmd := exec.Command(makeBin, "-C", filepath.Join(cwd0, "../.."), "verify-foreign",
			"FOREIGN="+bad, "FOREIGN_REPORT="+filepath.Join(dir, "r.json"), "FOREIGN_CHECKS=5", "PTXPROP="+cli)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	for i := range 2 {
		code, out := makeIt()
		if code == 0 || !strings.Contains(out, "no_such_entry") || !strings.Contains(out, "verify-foreign] Error 2") {
			t.Fatalf("make verify-foreign with a bad binding: exit %d, want make to fail with the recipe's exit status 2:\n%s", code, cut(out))
		}
		if built := strings.Contains(out, "go build"); built != (i == 0) {
			t.Errorf("run %d: built the CLI %v, want only when it was missing:\n%s", i+1, built, cut(out))
		}
	}
}
