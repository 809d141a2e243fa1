package falsify

import (
	"flag"
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
	flagChecks   = flag.Int("falsify.checks", 200, "rapid checks per contract run on a named mutant")
	flagGChecks  = flag.Int("falsify.gchecks", 100, "rapid checks in a generic mutant's first (sharpest) contract run")
	flagG2Checks = flag.Int("falsify.gchecks2", 25, "rapid checks in a generic mutant's other contract runs (0: -falsify.gchecks)")
	flagSeed     = flag.Uint64("falsify.seed", 1, "base seed of the mutants' rapid seeds (0: rapid's -rapid.seed or a random one)")
	flagPerOp    = flag.Int("falsify.perop", 2, "generic mutants sampled per (kernel, operator); see -falsify.all")
	flagAll      = flag.Bool("falsify.all", false, "run every generic mutant instead of a sample")
	flagMutant   = flag.String("falsify.mutant", "", "TestMutant runs the mutants of this comma-separated list of names")
	flagEquiv    = flag.Bool("falsify.equiv", true, "rerun surviving generic mutants beside the original to tell equivalents from gaps")
	flagMinScore = flag.Float64("falsify.minscore", 0.90, "TestGenericMutants fails below this share of non-equivalent mutants killed")
	flagShrink   = flag.Duration("falsify.shrink", 2*time.Second, "rapid's shrink time per killing contract run (named mutants)")
	flagGShrink  = flag.Duration("falsify.gshrink", time.Second, "rapid's shrink time per killing contract run (generic mutants)")
	flagRecord   = flag.Bool("falsify.record", true, "record the kill matrix in the contract report (-report)")
)

var (
	session   *Session
	suiteWall time.Time
	runConfig suite.Config // -ptxprop.X and PTXPROP_X: backend, report, …
)

func TestMain(m *testing.M) {
	c, err := suite.Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(suite.ExitUsage)
	}
	runConfig = c
	suite.RegisterFlags(flag.CommandLine, &runConfig)
	flag.Parse()
	suiteWall = time.Now()
	code := m.Run()
	if session != nil {
		session.Close()
	}
	os.Exit(code)
}

// options returns the run options from the flags.
func options() Options {
	o := DefaultOptions()
	o.Checks, o.GenericChecks, o.SecondaryChecks = *flagChecks, *flagGChecks, *flagG2Checks
	o.Seed = *flagSeed
	if o.Seed == 0 {
		if f := flag.Lookup("rapid.seed"); f != nil {
			fmt.Sscan(f.Value.String(), &o.Seed)
		}
	}
	o.ShrinkTime, o.GenericShrinkTime = *flagShrink, *flagGShrink
	o.Equivalence = *flagEquiv
	o.Run = runConfig
	o.Repro = fmt.Sprintf("go test ./falsify -run 'TestMutant$' -falsify.seed=%d -falsify.checks=%d -falsify.gchecks=%d -falsify.gchecks2=%d -falsify.mutant=",
		o.Seed, o.Checks, o.GenericChecks, o.SecondaryChecks)
	return o
}

// getSession opens the shared session, or skips t without a device.
func getSession(t *testing.T) *Session {
	t.Helper()
	if session == nil {
		s, err := NewSession(options())
		if err != nil {
			t.Skipf("no device backend: %v", err)
		}
		session = s
	}
	return session
}

// record writes results into the report unless -falsify.record=false.
func record(t *testing.T, s *Session, results []Result, replace reports.MutantKind) {
	t.Helper()
	if !*flagRecord {
		return
	}
	path := runConfig.ReportPath()
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
			skipped[n.Name] = "it may make a GPU kernel fault, which leaves CUDA unusable in the whole process; run with -falsify.isolate=auto or always"
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

// TestGenericMutants runs a sample of the generic mutants (all of them with
// -falsify.all) and fails when fewer than -falsify.minscore of the
// non-equivalent ones are killed.
func TestGenericMutants(t *testing.T) {
	s := getSession(t)
	if unsafeDevice(s) {
		t.Skip("on a GPU without isolation any generic mutant may make a kernel fault, which leaves CUDA unusable in the whole process; run with -falsify.isolate=auto or always")
	}
	start := time.Now()
	all, sites, err := GenericMutants()
	if err != nil {
		t.Fatal(err)
	}
	run := all
	how := "all"
	if !*flagAll {
		run = Sample(all, *flagPerOp, *flagSeed)
		how = fmt.Sprintf("%d per kernel·operator, seed %d; -falsify.all runs every one", *flagPerOp, *flagSeed)
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
	record(t, s, results, reports.MutantGeneric)
	sc := reports.ScoreOf(Mutants(results), reports.MutantGeneric)
	switch x, ok := sc.Ratio(); {
	case !ok:
		t.Errorf("no generic mutant counts towards the score (%d run: all equivalent, not exercised or skipped)", sc.Total())
	case x < *flagMinScore:
		t.Errorf("generic mutation score %s, want at least %.0f%% (survivors listed above)", sc, 100**flagMinScore)
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

// TestMutant runs the mutants named by -falsify.mutant (the rerun command
// every kill-matrix row prints).
func TestMutant(t *testing.T) {
	if *flagMutant == "" {
		t.Skip("no -falsify.mutant given")
	}
	s := getSession(t)
	var results []Result
	for _, name := range strings.Split(*flagMutant, ",") {
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
