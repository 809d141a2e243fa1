package binding_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// ptxprop's own PTX, bound by files alone: every prediction of the claimed
// contracts must discharge through the binding path as it does through
// package kernels.

// cfg is what the contracts see: the device of PTXPROP_BACKEND (the
// emulator unless a GPU build finds a GPU) and the run's limits.
var cfg properties.Config

func TestMain(m *testing.M) {
	flag.Parse()
	c, err := suite.Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The binding tests run some 40 contracts over the emulator: 25 checks
	// each keep the package under a minute on two cores. -rapid.checks,
	// RAPID_CHECKS or PTXPROP_CHECKS set another number.
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	if _, env := os.LookupEnv("RAPID_CHECKS"); !given && !env {
		checks := 25
		if c.Checks > 0 {
			checks = c.Checks
		}
		flag.Set("rapid.checks", fmt.Sprint(checks))
	}
	dev, note, err := suite.OpenDevice(c)
	if note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	cfg = suite.ContractConfig(c, dev)
	if err != nil {
		cfg.NoDevice = err.Error()
	}
	code := m.Run()
	if dev != nil {
		dev.Close()
	}
	os.Exit(code)
}

// tb gives a test's contracts the run's Config.
type tb struct{ testing.TB }

func (tb) Config() *properties.Config { return &cfg }

func load(t *testing.T, path string) *binding.Binding {
	t.Helper()
	b, err := binding.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorder is a rapid.TB that keeps a contract's failure instead of
// failing the test: the wrong bindings below must be falsified.
type recorder struct {
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (r *recorder) Helper()                    {}
func (r *recorder) Config() *properties.Config { return &cfg }
func (r *recorder) Name() string               { return "wrong-binding" }
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Log(args ...any)                   { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recorder) Skipf(format string, args ...any)  { r.Logf(format, args...); runtime.Goexit() }
func (r *recorder) Skip(args ...any)                  { r.Log(args...); runtime.Goexit() }
func (r *recorder) SkipNow()                          { runtime.Goexit() }
func (r *recorder) Errorf(format string, args ...any) { r.Logf(format, args...); r.Fail() }
func (r *recorder) Error(args ...any)                 { r.Log(args...); r.Fail() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *recorder) Fail()                             { r.mu.Lock(); r.failed = true; r.mu.Unlock() }
func (r *recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }

// falsified runs contract against a recorder and returns its log, failing
// t if the contract held.
func falsified(t *testing.T, contract func(properties.TB)) string {
	t.Helper()
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("rapid.nofailfile", "false")
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		contract(r)
	}()
	<-done
	if !r.Failed() {
		t.Fatalf("the contract held for a wrong binding")
	}
	log := strings.Join(r.msgs, "\n")
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
			t.Run(path+"/"+j.ID, func(t *testing.T) { j.Contract(tb{t}) })
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
		t.Run(j.ID, func(t *testing.T) { j.Contract(tb{t}) })
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
