package binding_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// ptxprop's own PTX, bound by files alone: every prediction of the claimed
// contracts must discharge through the binding path as it does through
// package kernels.

// TestMain runs the package's tests under the runner (suite.Main). The
// binding tests run some 40 contracts over the emulator: 25 checks each
// keep the package under a minute on two cores; -ptxprop.checks,
// PTXPROP_CHECKS, -rapid.checks or RAPID_CHECKS set another number. The
// tests judge their contracts' outcomes themselves: the run writes no
// report.
func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, suite.WithChecks(25), suite.WithoutReport()))
}

// config is what t's contracts see: the run's device (the emulator unless
// a GPU build finds a GPU; -ptxprop.backend) and limits.
func config(t *testing.T) properties.Config {
	t.Helper()
	return *suite.T(t).Config()
}

func load(t *testing.T, path string) *binding.Binding {
	t.Helper()
	b, err := binding.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// falsified runs contract on its own (suite.RunContract, writing no fail
// file: the wrong bindings below must be falsified, and their failures are
// this test's finding, not the run's) and returns its log, failing t if
// the contract held.
func falsified(t *testing.T, contract func(properties.TB)) string {
	t.Helper()
	c := config(t)
	c.Recorder = nil
	q := suite.RunContract("wrong-binding", c, suite.Rapid{NoFailFile: true}, contract)
	if !q.Failed() {
		t.Fatalf("the contract held for a wrong binding")
	}
	log := strings.Join(q.Logs(), "\n")
	t.Logf("falsified as it must be:\n%.600s", log)
	return log
}

// rewrite loads a testdata binding with one substitution made.
func rewrite(t *testing.T, path, old, new string) *binding.Binding {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), old, new, 1)
	if s == string(src) {
		t.Fatalf("%q not in %s", old, path)
	}
	b, err := binding.Parse(path, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWrongSavedFormFalsified: the kernel writes rms, but the binding says
// it saves rstd, so the harness hands the contract 1/rms.
func TestWrongSavedFormFalsified(t *testing.T) {
	b2, err := binding.Parse("testdata/rmsnorm_fwd.yaml", []byte(strings.NewReplacer(
		"saved: rms_eps", "saved: rstd", "[x, gamma, y, rms,", "[x, gamma, y, rstd,").Replace(mustRead(t, "testdata/rmsnorm_fwd.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	log := falsified(t, func(tb properties.TB) {
		properties.RMSNormForwardContract(tb, b2.Impl().(properties.RMSNormForwarder))
	})
	if !strings.Contains(log, "rms") {
		t.Errorf("the failure does not name rms:\n%s", log)
	}
}

// TestSwappedParamsFalsified: x and dy swapped in the backward's launch.
func TestSwappedParamsFalsified(t *testing.T) {
	b := rewrite(t, "testdata/rmsnorm_bwd_chunk.yaml", "[x, gamma, rms, dy,", "[dy, gamma, rms, x,")
	falsified(t, func(tb properties.TB) {
		properties.RMSNormBackwardContract(tb, b.Impl().(properties.RMSNormBackwarder))
	})
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// TestOwnBindingsDischarge runs every prediction Jobs lists for each of
// our own kernels bound by a file.
func TestOwnBindingsDischarge(t *testing.T) {
	for _, path := range []string{"rmsnorm_fwd", "rmsnorm_bwd_chunk", "fused_residual_rmsnorm", "layernorm_fwd",
		"layernorm_bwd_chunk", "per_head_rmsnorm", "rope_fwd", "rope_bwd", "rope_bwd_inplace", "example"} {
		b := load(t, "testdata/"+path+".yaml")
		for _, j := range binding.Jobs(b) {
			t.Run(path+"/"+j.ID, func(t *testing.T) { j.Contract(suite.T(t)) })
		}
	}
}

// TestDeclaredReductions: the declared order is what the contracts read
// through properties.ReductionDescriber. The example's row sum at
// hidden=1000 (256 threads) is 4 serial float4 terms and a tree of 8; a
// binding that declares no order does not describe one (the contracts then
// use the serial worst case).
func TestDeclaredReductions(t *testing.T) {
	b := load(t, "testdata/example.yaml")
	d, ok := b.Impl().(properties.ReductionDescriber)
	if !ok {
		t.Fatal("the example's implementation does not describe its reductions")
	}
	rs := d.Reductions(op.Shape{Rows: 3, Hidden: 1000})
	if len(rs) != 1 || rs[0].Terms != 1000 || rs[0].Serial != 4 || rs[0].Tree != 8 {
		t.Fatalf("Reductions = %+v", rs)
	}
	if d, ok := load(t, "testdata/rmsnorm_bwd_chunk.yaml").Impl().(properties.ReductionDescriber); ok && len(d.Reductions(op.Shape{Rows: 3, Hidden: 1000})) > 0 {
		t.Fatal("a binding that declares no order describes one")
	}
}

// TestConstraintsNarrowDraws: a binding that handles only hidden % 8 == 0
// (and hidden <= 4096) is judged on those shapes: the narrowed limits and
// the refused draws keep the contracts from calling it elsewhere.
func TestConstraintsNarrowDraws(t *testing.T) {
	b := rewrite(t, "testdata/rmsnorm_fwd.yaml", "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden % 8 == 0\", \"hidden <= 4096\"]")
	for _, j := range binding.Jobs(b) {
		t.Run(j.ID, func(t *testing.T) { j.Contract(suite.T(t)) })
	}
}

// TestRowWiseJobs: a binding of a row-wise operation gets the row-wise
// predictions (batch independence, row permutation) besides its
// contract's, and they catch a kernel whose rows depend on the batch: this
// one is told a shorter row whenever it computes more than one.
func TestRowWiseJobs(t *testing.T) {
	for _, path := range []string{"rmsnorm_fwd", "rmsnorm_bwd_chunk", "rope_bwd", "per_head_rmsnorm"} {
		ids := map[string]bool{}
		for _, j := range binding.Jobs(load(t, "testdata/"+path+".yaml")) {
			ids[j.ID] = true
		}
		if !ids[properties.BatchIndependence] || !ids[properties.RowPermutation] {
			t.Errorf("%s: jobs %v lack the row-wise predictions", path, ids)
		}
	}
	b := rewrite(t, "testdata/rmsnorm_fwd.yaml", "rows, hidden, eps]", `rows, {value: "if(rows > 1, hidden - 1, hidden)"}, eps]`)
	for _, j := range binding.Jobs(b) {
		if j.ID == properties.BatchIndependence {
			falsified(t, j.Contract)
		}
	}
}
