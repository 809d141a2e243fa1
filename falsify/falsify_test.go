package falsify

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

var (
	session   *Session
	suiteWall time.Time
	opts      Options // -ptxprop.X and PTXPROP_X: falsify's settings and the runner's
)

// TestMain runs the package's tests under the runner (suite.Main): it
// reads falsify's settings with the runner's, and writes no contract report
// of its own: the kill matrix is recorded at the report path (record).
func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, suite.WithSettings(settings, &opts, configure), suite.WithoutReport(), suite.WithCleanup(closeSession)))
}

// configure completes opts once the runner has read the settings: the
// runner's own, the mutants' base seed (-ptxprop.mutant-seed, else the
// run's) and the command that reruns one mutant.
func configure(run suite.Config) error {
	d := DefaultOptions()
	opts.MaxInstructions, opts.Watchdog, opts.Run = d.MaxInstructions, d.Watchdog, run
	if opts.Seed == 0 {
		opts.Seed = run.Seed
	}
	opts.Repro = opts.ReproCommand()
	suiteWall = time.Now()
	return nil
}

// closeSession releases the shared session once the tests have ended.
func closeSession() {
	if session != nil {
		session.Close()
	}
}

// getSession opens the shared session on the run's devices (suite.Main
// opened them), or skips t without a device.
func getSession(t *testing.T) *Session {
	t.Helper()
	if session == nil {
		s, err := SessionOn(opts, *suite.T(t).Config())
		if err != nil {
			t.Skipf("no device backend: %v", err)
		}
		session = s
	}
	return session
}

// record merges results into the mutation report (Options.ReportPath) in a
// full run, unless -ptxprop.record=false. A quick run's kill matrix is in
// the test log only: it covers a few generic mutants.
func record(t *testing.T, s *Session, results []Result, replace reports.MutantKind) {
	t.Helper()
	if !opts.Record || !opts.Full {
		return
	}
	path := opts.ReportPath()
	if path == "" {
		return
	}
	unproven, err := Record(path, results, replace, s.Devices(), suiteWall)
	if err != nil {
		t.Errorf("recording the kill matrix in %s: %v", path, err)
		return
	}
	t.Logf("kill matrix recorded in %s; predictions that killed no mutant (unproven): %s", path, strings.Join(unproven, ", "))
}

// unsafeDevice reports whether mutants run in-process on a GPU, where a
// kernel fault would poison CUDA for every later mutant.
func unsafeDevice(s *Session) bool {
	return s.Device().Info().Backend == "gpu" && workers(s) == 0
}

func logBlock(t *testing.T, title, text string) {
	t.Helper()
	t.Logf("%s\n%s", title, text)
}

// TestNamedMutants runs every named mutant; each must be killed by one of
// the predictions expected to kill it.
func TestNamedMutants(t *testing.T) {
	s := getSession(t)
	start := time.Now()
	var ms []Mutant
	skipped := map[string]string{}
	for _, n := range NamedMutants() {
		if n.Faults && unsafeDevice(s) {
			skipped[n.Name] = "it may make a GPU kernel fault, which leaves CUDA unusable in the whole process; run with -ptxprop.isolate=auto or always"
			continue
		}
		ms = append(ms, n)
	}
	results := runMutants(t, s, ms, func(Result) {})
	for _, n := range NamedMutants() {
		if why, ok := skipped[n.Name]; ok {
			results = append(results, Result{Mutant: n.Name, Kind: n.Kind(), Kernel: n.Kernel, Description: n.What,
				Expected: n.Killers, Status: reports.MutantSkipped, Reason: why})
			t.Run(n.Name, func(t *testing.T) { t.Skip(why) })
		}
	}
	for i, r := range results[:len(ms)] {
		n := ms[i].(Named)
		t.Run(n.Name, func(t *testing.T) {
			switch {
			case r.Status == reports.MutantSkipped:
				t.Skip(r.Reason)
			case !r.Killed():
				t.Errorf("%s survived: %s (%s)", n.Name, r.Status, r.Reason)
			case !slices.Contains(n.Killers, r.KilledBy):
				t.Errorf("%s was killed by %s (%s), not by an expected killer (%s)", n.Name, r.KilledBy, r.Contract, strings.Join(n.Killers, ", "))
			default:
				t.Logf("killed by %s (%s) after %d checks in %v: %s", r.KilledBy, r.Contract, r.Checks, r.Duration.Round(time.Millisecond), r.Failure)
				if len(r.Counterexample) > 0 {
					t.Logf("counterexample: %s", strings.Join(r.Counterexample, "; "))
				}
			}
		})
	}
	logBlock(t, "falsify: kill matrix (named mutants)", Summary(results, nil, time.Since(start)))
	record(t, s, results, "")
}

// TestGenericMutants runs a few generic mutants, spread over the kernels
// and operators, and wants each to get a verdict of the mutant's own (no
// harness error); with -ptxprop.mutants=full it runs the sample of
// -ptxprop.generic-per-op per kernel·operator (every site with 0) and fails
// when its mutation score (reports.ScoreOf) is below -ptxprop.min-score.
func TestGenericMutants(t *testing.T) {
	if testing.Short() && !opts.Full {
		t.Skip("-short: the generic mutants run without it, or with -ptxprop.mutants=full")
	}
	s := getSession(t)
	if unsafeDevice(s) {
		t.Skip("on a GPU without isolation any generic mutant may make a kernel fault, which leaves CUDA unusable in the whole process; run with -ptxprop.isolate=auto or always")
	}
	start := time.Now()
	all, sites, err := GenericMutants()
	if err != nil {
		t.Fatal(err)
	}
	run := Spread(Sample(all, 1, opts.Seed), opts.Quick)
	how := fmt.Sprintf("quick: %d spread over the kernels and operators, seed %d; -ptxprop.mutants=full runs the sample", opts.Quick, opts.Seed)
	if opts.Full {
		run = Sample(all, opts.PerOp, opts.Seed)
		how = fmt.Sprintf("%d per kernel·operator, seed %d; -ptxprop.generic-per-op=0 runs every one", opts.PerOp, opts.Seed)
		if opts.PerOp == 0 {
			how = "all"
		}
	}
	t.Logf("%d generic sites, running %d (%s)", len(all), len(run), how)
	ms := make([]Mutant, len(run))
	for i, g := range run {
		ms[i] = g
	}
	results := runMutants(t, s, ms, func(r Result) {
		if testing.Verbose() {
			what := r.Reason
			if r.Killed() {
				what = fmt.Sprintf("%s (%d checks)", r.KilledBy, r.Checks)
			}
			t.Logf("%-44s %-10s %6.2fs  %s", r.Mutant, r.Status, r.Duration.Seconds(), what)
		}
	})
	logBlock(t, "falsify: kill matrix (generic mutants)", Summary(results, sites, time.Since(start)))
	if !opts.Full {
		// A few mutants give no score worth gating on; each must still
		// reach a verdict about itself.
		for _, r := range results {
			if r.Status == reports.MutantError {
				t.Errorf("%s: error: %s", r.Mutant, r.Reason)
			}
		}
		return
	}
	record(t, s, results, reports.MutantGeneric)
	sc := reports.ScoreOf(Mutants(results), reports.MutantGeneric)
	switch x, ok := sc.Ratio(); {
	case !ok:
		t.Errorf("no generic mutant counts towards the score (%d run: all equivalent, not exercised or skipped)", sc.Total())
	case x < opts.MinScore:
		t.Errorf("generic mutation score %s, want at least %.0f%% (survivors listed above)", sc, 100*opts.MinScore)
	}
}

// TestEveryKernelExercised: every kernel is launched by some contract, so
// that a bug in it can be caught at all. Mutants of a kernel no contract
// launches survive whatever they do.
func TestEveryKernelExercised(t *testing.T) {
	s := getSession(t)
	for _, k := range kernels.All() {
		if why := s.Exercised(k.Name); why != "" {
			t.Errorf("%s: %s", k.Name, why)
		}
	}
}

// TestMutant runs the mutants named by -ptxprop.mutant (the rerun command
// every kill-matrix row prints).
func TestMutant(t *testing.T) {
	if opts.Names == "" {
		t.Skip("no -ptxprop.mutant given")
	}
	s := getSession(t)
	var results []Result
	for _, name := range strings.Split(opts.Names, ",") {
		m, err := ParseMutant(strings.TrimSpace(name))
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run(m)
		results = append(results, r)
		t.Logf("%s: %s %s after %d checks (%s) %s", r.Mutant, r.Status, r.KilledBy, r.Checks, r.Contract, r.Reason)
		if r.Failure != "" {
			t.Logf("failure: %s", r.Failure)
		}
		for _, pr := range r.Runs {
			t.Logf("  %-40s %-13s %4d checks %v", pr.Contract, pr.Status, pr.Checks, pr.Duration.Round(time.Millisecond))
		}
		if len(r.Counterexample) > 0 {
			t.Logf("counterexample: %s", strings.Join(r.Counterexample, "; "))
		}
	}
	record(t, s, results, "")
}
