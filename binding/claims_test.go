package binding_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// atomicWithClaims writes the atomic Triton backward's binding with claims
// (a YAML line, "" for none) after its saved: line into a temporary
// folder, its PTX files named by absolute paths, and returns its path.
func atomicWithClaims(t *testing.T, claims string) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/foreign/triton")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(mustRead(t, "testdata/foreign/triton/rmsnorm_bwd_atomic.binding.yaml"), "    ptx: ", "    ptx: "+dir+"/")
	src = strings.Replace(src, "saved: rstd\n", "saved: rstd\n"+claims, 1)
	path := filepath.Join(t.TempDir(), "atomic.binding.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A binding whose kernel claims no bit determinism has the prediction
// reported not_claimed, with the file and line that say so: not run, not
// a failure, not left out, and the report is not partial for it.
func TestNotClaimedDeterminism(t *testing.T) {
	b, err := binding.Load(atomicWithClaims(t, "claims: {determinism: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []suite.Job
	for _, j := range binding.SuiteJobs(b) {
		if j.Prediction == properties.Determinism {
			jobs = append(jobs, j)
		}
	}
	c := suite.Default()
	c.Backend, c.Progress, c.Summary = "emu", 0, false
	c.Report = filepath.Join(t.TempDir(), "report.json")
	rep, err := suite.Run(context.Background(), c, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Prediction(properties.Determinism + "@" + b.Name)
	if p == nil {
		t.Fatalf("%s@%s is not in the report", properties.Determinism, b.Name)
	}
	if p.Status != reports.NotClaimed || !strings.Contains(p.Reason, "atomic.binding.yaml:12: claims: {determinism: false}") {
		t.Errorf("%s: %s (%s), want not_claimed naming the file's line 12", p.ID, p.Status, p.Reason)
	}
	if err := rep.Validate(); err != nil || rep.Partial() {
		t.Errorf("report: partial %v, validation %v", rep.Partial(), err)
	}
}

// claims takes booleans and known claims only, reported at their line.
func TestClaimsChecked(t *testing.T) {
	for _, bad := range []string{"claims: {determinism: maybe}\n", "claims: {bitwise: false}\n"} {
		_, err := binding.Load(atomicWithClaims(t, bad))
		if err == nil || !strings.Contains(err.Error(), "atomic.binding.yaml:12") {
			t.Errorf("%q: %v, want an error at line 12", bad, err)
		}
	}
	b, err := binding.Load(atomicWithClaims(t, "claims: {determinism: true}\n"))
	if err != nil || b.NoDeterminism != "" {
		t.Errorf("determinism: true: %v, no determinism %q", err, b.NoDeterminism)
	}
}
