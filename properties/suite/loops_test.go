package suite_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

const idLoops = "SELF-LOOPS"

func init() {
	properties.Register(properties.Prediction{ID: idLoops, Title: "suite self-test (rapid loops)", Statement: "n is not the chosen value"})
}

// A plan's checks sum to the run's (a fifth of -rapid.checks under
// -short), loop 0 starts from the base seed and every loop from a seed of
// its own; the default gives each loop at least 50 checks and replays a
// fail file in one loop.
func TestPlanLoops(t *testing.T) {
	for _, c := range []struct {
		n, checks       int
		short, failfile bool
		procs, loops    int
	}{
		{0, 100, false, false, 16, 2},
		{0, 10000, false, false, 16, 4},
		{0, 10000, false, true, 16, 1},
		{0, 10000, true, false, 16, 4},
		{0, 10000, false, false, 64, 16},
		{0, 10000, false, false, 4, 2},
		{0, 10000, false, false, 1, 2},
		{0, 49, false, false, 16, 1},
		{0, 300, false, false, 2, 2},
		{3, 31, false, false, 1, 3},
		{4, 3, false, false, 8, 3},
		{3, 50, true, false, 8, 3},
		{5, 0, false, false, 8, 1},
	} {
		plan := suite.PlanLoops(c.n, c.checks, 42, c.short, c.failfile, c.procs)
		want := c.checks
		if c.short {
			want /= 5
		}
		sum, seeds := 0, map[uint64]bool{}
		for _, l := range plan {
			sum += l.Checks
			seeds[l.Seed] = true
		}
		if len(plan) == 1 && plan[0].Checks == 0 {
			sum = want // one loop under rapid's settings as they are
		}
		if len(plan) != c.loops || sum != want || plan[0].Seed != 42 || len(seeds) != len(plan) {
			t.Errorf("PlanLoops(%d loops, %d checks, short %v, failfile %v, %d procs) = %+v: want %d loops of %d checks in all, loop 0 from seed 42, distinct seeds",
				c.n, c.checks, c.short, c.failfile, c.procs, plan, c.loops, want)
		}
	}
}

// loopsConfig is a Run of checks checks over loops rapid loops from seed,
// on the emulator, writing no report.
func loopsConfig(t *testing.T, loops, checks int, seed uint64) suite.Config {
	c := testConfig(t)
	c.Report, c.Loops, c.Checks, c.Seed = "off", loops, checks, seed
	return c
}

// draws runs a contract run under c whose property draws n and calls fail
// (if not nil) with it, and returns every n its passing checks drew,
// sorted, and the prediction's report.
func draws(t *testing.T, c suite.Config, fail func(o *properties.Obs, n uint64)) ([]uint64, *reports.Prediction) {
	t.Helper()
	var (
		mu sync.Mutex
		ns []uint64
	)
	rep, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestLoops", Run: func(tb properties.TB) {
		properties.Check(tb, idLoops, func(rt *rapid.T, o *properties.Obs) {
			n := rapid.Uint64().Draw(rt, "n")
			o.Context(0, "n=%d", n)
			if fail != nil {
				fail(o, n)
			}
			mu.Lock()
			ns = append(ns, n)
			mu.Unlock()
			o.Ratio("n", float64(n%1000), 1000)
		})
	}}})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Prediction(idLoops)
	if p == nil {
		t.Fatal("no outcome")
	}
	slices.Sort(ns)
	return ns, p
}

// The cases of a run split over loops are a function of its base seed
// (and loop count): two runs draw the same ones, their number is the
// checks asked for, loop 0 draws what a single loop of its share does,
// and the other loops draw cases of their own. The statistics are every
// loop's.
func TestLoopsDeterministicAndMerged(t *testing.T) {
	defer shortOff()()
	const seed = 0x5eed
	a, pa := draws(t, loopsConfig(t, 3, 31, seed), nil)
	b, _ := draws(t, loopsConfig(t, 3, 31, seed), nil)
	if !slices.Equal(a, b) {
		t.Errorf("two runs from seed %d over 3 loops drew different cases:\n%v\n%v", seed, a, b)
	}
	if len(a) != 31 || pa.Checks != 31 || pa.Status != reports.Discharged {
		t.Errorf("%d cases drawn, %d checks reported (%s), want the 31 asked for", len(a), pa.Checks, pa.Status)
	}
	// Loop 0 runs 11 checks from the base seed itself.
	zero, _ := draws(t, loopsConfig(t, 1, 11, seed), nil)
	if rest := without(a, zero); len(rest) != 20 {
		t.Errorf("loop 0's 11 cases %v are not among the 31 of 3 loops %v, or the other loops repeat them", zero, a)
	}
	worst := 0.0
	for _, n := range a {
		worst = math.Max(worst, float64(n%1000)/1000)
	}
	if pa.ErrorStats == nil || pa.ErrorStats.MaxRatio != worst {
		t.Errorf("merged worst ratio %+v, want %g, the worst over every loop's cases", pa.ErrorStats, worst)
	}
}

// without returns a less one of each of b's values.
func without(a, b []uint64) []uint64 {
	rest := slices.Clone(a)
	for _, v := range b {
		if i := slices.Index(rest, v); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
		}
	}
	return rest
}

// A failure that only a loop after the first reaches is reported with that
// loop's case, shrunk, and a reproduction that, run, fails with that case.
func TestLoopFailureReproduces(t *testing.T) {
	const seed = 0xfa11
	v := loopOnlyValue(t, seed)
	only := func(o *properties.Obs, n uint64) {
		if n == v {
			o.Fatalf("n is %d", n)
		}
	}
	hex := fmt.Sprintf("%#x", v) // as rapid prints a uint64 it drew
	c := loopsConfig(t, 3, 30, seed)
	c.Command = "prog"
	_, p := draws(t, c, only)
	if p.Status != reports.Falsified || p.Counterexample == nil || len(p.Counterexample.Draws) != 1 ||
		p.Counterexample.Draws[0].Value != hex {
		t.Fatalf("a failure at n=%d only loops 1 and 2 draw: %s, %+v, want falsified with that n", v, p.Status, p.Counterexample)
	}
	if p.Reproduction == nil {
		t.Fatal("no reproduction")
	}
	// Run the reproduction: its flags, parsed as the command parses them.
	args := strings.Fields(p.Reproduction.Command)
	if args[0] != "prog" {
		t.Fatalf("reproduction %q is not the run's command", p.Reproduction.Command)
	}
	r := suite.Default()
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	suite.RegisterFlags(fs, &r)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("reproduction %q: %v", p.Reproduction.Command, err)
	}
	r.Report, r.Summary, r.Progress, r.Checks = "off", false, 0, 30
	_, rp := draws(t, r, only)
	if rp.Status != reports.Falsified || rp.Counterexample == nil || rp.Counterexample.Draws[0].Value != hex || rp.Checks != 1 {
		t.Errorf("reproduction %q: %s with %+v in %d checks, want the failure at n=%d, at the first check", p.Reproduction.Command, rp.Status, rp.Counterexample, rp.Checks, v)
	}
}

// The loops run at once: checks of different loops overlap.
func TestLoopsRunInParallel(t *testing.T) {
	defer shortOff()()
	var in, most atomic.Int32
	_, err := suite.Run(context.Background(), loopsConfig(t, 2, 4, 7), []suite.Job{{Name: "TestParallel", Run: func(tb properties.TB) {
		properties.Check(tb, idLoops, func(rt *rapid.T, o *properties.Obs) {
			n := in.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond)
			in.Add(-1)
			o.Ratio("n", 0, 1)
		})
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if most.Load() < 2 {
		t.Errorf("at most %d checks at once over 2 loops, want 2", most.Load())
	}
}

// shortOff runs a test at the check counts it asks for under go test
// -short too, where rapid would run a fifth of them (TestLoopsUnderShort
// covers that cut); it returns the function that restores -short.
func shortOff() (restore func()) {
	old := flag.Lookup("test.short").Value.String()
	flag.Set("test.short", "false")
	return func() { flag.Set("test.short", old) }
}

// Under go test -short rapid runs a fifth of -rapid.checks: the loops'
// checks still sum to that fifth.
func TestLoopsUnderShort(t *testing.T) {
	old := flag.Lookup("test.short").Value.String()
	flag.Set("test.short", "true")
	defer flag.Set("test.short", old)
	ns, p := draws(t, loopsConfig(t, 3, 50, 9), nil)
	if len(ns) != 10 || p.Checks != 10 {
		t.Errorf("-short, 50 checks over 3 loops: %d cases, %d checks reported, want 10", len(ns), p.Checks)
	}
}

// loopOnlyValue returns a value that loops 1 and 2 of a 3-loop run of 30
// checks from seed draw and loop 0 does not.
func loopOnlyValue(t *testing.T, seed uint64) uint64 {
	t.Helper()
	all, _ := draws(t, loopsConfig(t, 3, 30, seed), nil)
	zero, _ := draws(t, loopsConfig(t, 1, 10, seed), nil)
	rest := without(all, zero)
	if len(rest) == 0 {
		t.Fatal("loops 1 and 2 drew nothing loop 0 did not")
	}
	return rest[len(rest)/2]
}

// A check that ends the run without shrinking (a set-up error) in a loop
// after the first gives the command that replays that loop's checks up to
// it; run, it ends at the same check with the same case.
func TestLoopSetupErrorReruns(t *testing.T) {
	defer shortOff()()
	v := loopOnlyValue(t, 0x5e7)
	setup := func(o *properties.Obs, n uint64) {
		if n == v {
			o.Check("impl", fmt.Errorf("n=%d: %w", n, properties.ErrSetup))
		}
	}
	c := loopsConfig(t, 3, 30, 0x5e7)
	c.Command = "prog"
	_, p := draws(t, c, setup)
	want := fmt.Sprintf("n=%d", v)
	if p.Status != reports.Error || p.Counterexample == nil || p.Counterexample.Draws[0].Value != want || p.Reproduction == nil {
		t.Fatalf("a set-up error at n=%d only loops 1 and 2 draw: %s, %+v, %+v, want an error with that case and a rerun", v, p.Status, p.Counterexample, p.Reproduction)
	}
	args := strings.Fields(p.Reproduction.Command)
	r := suite.Default()
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	suite.RegisterFlags(fs, &r)
	if err := fs.Parse(args[1:]); err != nil || args[0] != "prog" {
		t.Fatalf("rerun %q: %v", p.Reproduction.Command, err)
	}
	r.Report, r.Summary, r.Progress = "off", false, 0
	_, rp := draws(t, r, setup)
	if rp.Status != reports.Error || rp.Counterexample == nil || rp.Counterexample.Draws[0].Value != want || rp.Checks != r.Checks {
		t.Errorf("rerun %q: %s with %+v after %d checks, want the error at n=%d at check %d", p.Reproduction.Command, rp.Status, rp.Counterexample, rp.Checks, v, r.Checks)
	}
}

// A run ended early (a deadline, Ctrl-C) ends every loop at its next
// check: the prediction is inconclusive with the checks all loops passed.
func TestLoopsStop(t *testing.T) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, fmt.Errorf("time is up"))
	defer cancel()
	start := time.Now()
	rep, err := suite.Run(ctx, loopsConfig(t, 3, 3000, 11), []suite.Job{{Name: "TestStop", Run: func(tb properties.TB) {
		properties.Check(tb, idLoops, func(rt *rapid.T, o *properties.Obs) {
			time.Sleep(5 * time.Millisecond)
			o.Ratio("n", 0, 1)
		})
	}}})
	if err == nil || !strings.Contains(err.Error(), "time is up") {
		t.Errorf("Run: %v, want the cause", err)
	}
	p := rep.Prediction(idLoops)
	if took := time.Since(start); p == nil || p.Status != reports.Inconclusive || p.Checks == 0 || p.Checks >= 3000 || took > 5*time.Second {
		t.Errorf("stopped after %v: %+v, want inconclusive with the checks passed", took, p)
	}
	if strings.Count(p.Reason, "time is up") != 1 {
		t.Errorf("reason %q, want the cause once", p.Reason)
	}
}
