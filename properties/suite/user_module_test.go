package suite_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/reports"
)

// A user's module (testdata/outside/user_test.go: TestMain with suite.Main,
// its own RMSNorm forwards checked by RMSNormForwardContract) gets a report
// of its own predictions on its own implementations: not every one of
// ptxprop's predictions, 23 of them not_run (which made ptxprop check fail
// it as partial); kernels naming the implementation that ran, not empty;
// a failure credited to the implementation that failed, not to
// ptxprop's rmsnorm_fwd.
func TestUserModuleReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "outside.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./testdata/outside").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	run := func(test string) (*reports.Report, error) {
		report := filepath.Join(dir, test+".json")
		cmd := exec.Command(bin, "-test.run=^"+test+"$", "-ptxprop.report="+report, "-ptxprop.backend=emu",
			"-ptxprop.checks=20", "-ptxprop.summary=false", "-ptxprop.progress=0", "-rapid.nofailfile")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PTXPROP_") && !strings.HasPrefix(kv, "RAPID_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		rep, rerr := reports.Read(report)
		if rerr != nil {
			t.Fatalf("%s: report: %v\n%s", test, rerr, out)
		}
		if verr := rep.Validate(); verr != nil {
			t.Errorf("%s: report is invalid: %v", test, verr)
		}
		return rep, err
	}
	ids := func(r *reports.Report) (s []string) {
		for _, p := range r.Predictions {
			s = append(s, p.ID+" "+string(p.Status))
		}
		return s
	}

	// The passing implementation: what ptxprop check requires (a
	// prediction ran, every one that ran discharged, nothing not_run).
	rep, err := run("TestMyRMSNorm")
	if err != nil {
		t.Errorf("TestMyRMSNorm: %v", err)
	}
	if got := ids(rep); !slices.Equal(got, []string{properties.RMSFwd + " discharged"}) {
		t.Errorf("passing run's predictions = %v, want only %s discharged", got, properties.RMSFwd)
	}
	if rep.Partial() {
		t.Errorf("passing run is partial: not run %v, stopped %q", rep.NotRun(), rep.Run.Stopped)
	}
	if k := rep.Kernel("main.hostRMSNorm"); k == nil || k.Origin != reports.KernelUser || len(rep.Kernels) != 1 {
		t.Errorf("passing run's kernels = %+v, want the user's main.hostRMSNorm alone", rep.Kernels)
	}
	if p := rep.Prediction(properties.RMSFwd); p != nil && !slices.Equal(p.Kernels, []string{"main.hostRMSNorm"}) {
		t.Errorf("passing prediction's kernels = %v, want [main.hostRMSNorm]", p.Kernels)
	}

	// The failing one: the finding is the user's implementation's.
	rep, err = run("TestMyBrokenRMSNorm")
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("TestMyBrokenRMSNorm: exit %v, want 1", err)
	}
	if got := ids(rep); !slices.Equal(got, []string{properties.RMSFwd + " falsified"}) {
		t.Errorf("failing run's predictions = %v, want only %s falsified", got, properties.RMSFwd)
	}
	if k := rep.Kernel("my-broken-rmsnorm"); k == nil || k.Origin != reports.KernelUser || len(rep.Kernels) != 1 {
		t.Errorf("failing run's kernels = %+v, want the user's my-broken-rmsnorm alone", rep.Kernels)
	}
	if p := rep.Prediction(properties.RMSFwd); p != nil {
		if !slices.Equal(p.Kernels, []string{"my-broken-rmsnorm"}) {
			t.Errorf("the failure is credited to %v, want [my-broken-rmsnorm]", p.Kernels)
		}
		if !strings.Contains(p.Reason, "my-broken-rmsnorm") {
			t.Errorf("the failure's reason %q does not name my-broken-rmsnorm", p.Reason)
		}
	}
}
