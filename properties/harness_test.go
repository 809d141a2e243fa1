package properties

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

func init() {
	Register(Prediction{ID: "TEST-HARNESS-PASS", Title: "harness self-test (passing)", Statement: "x·1 = x"})
	Register(Prediction{ID: "TEST-HARNESS-FAIL", Title: "harness self-test (failing)", Statement: "every n < 1000"})
	Register(Prediction{ID: "TEST-HARNESS-SETUP", Title: "harness self-test (set-up error)", Statement: "the implementation sets every n up"})
	Register(Prediction{ID: "TEST-HARNESS-RATIO", Title: "harness self-test (failing ratio)", Statement: "x ≤ 1"})
	Register(Prediction{ID: "TEST-HARNESS-PANIC", Title: "harness self-test (harness panics)", Statement: "x·1 = x"})
	Register(Prediction{ID: "TEST-HARNESS-ZERO", Title: "harness self-test (no checks)", Statement: "x·1 = x"})
}

// noFailFile keeps a deliberately failing property from leaving a fail file.
func noFailFile(t *testing.T) { setRapid(t, "nofailfile", "true") }

// setRapid sets rapid's flag -rapid.name to v for the test: the harness's
// own tests need a known setting whatever the command line says.
func setRapid(t *testing.T, name, v string) {
	old := flag.Lookup("rapid." + name).Value.String()
	flag.Set("rapid."+name, v)
	t.Cleanup(func() { flag.Set("rapid."+name, old) })
}

// The harness must see a failure, keep the minimal counterexample rapid drew
// and the command that reproduces it — and must not report a pass as one.
func TestHarnessRecordsOutcomes(t *testing.T) {
	noFailFile(t)
	rec := &outcome.Recorder{}
	cfg := Config{Recorder: rec}
	pass := RunQuiet("TestPass", cfg, func(tb TB) {
		Check(tb, "TEST-HARNESS-PASS", func(rt *rapid.T, o *Obs) {
			x := rapid.Float32Range(-10, 10).Draw(rt, "x")
			o.Within("x", []float32{x * 1}, []float64{float64(x)}, []float64{0})
		})
	})
	fail := RunQuiet("TestFail", cfg, func(tb TB) {
		Check(tb, "TEST-HARNESS-FAIL", func(rt *rapid.T, o *Obs) {
			n := rapid.IntRange(0, 1<<20).Draw(rt, "n")
			o.Context(0, "n=%d", n)
			if n >= 1000 {
				o.Fatalf("n too large")
			}
		})
	})
	if pass.Failed() {
		t.Fatalf("passing property reported failed: %v", pass.Logs())
	}
	if !fail.Failed() {
		t.Fatalf("failing property not reported failed")
	}
	out := rec.Outcomes()
	p, f := out["TEST-HARNESS-PASS"], out["TEST-HARNESS-FAIL"]
	if p.Status != outcome.Discharged || p.Checks == 0 || p.Stats.Compared != p.Checks {
		t.Errorf("pass outcome = %+v", p)
	}
	if f.Status != outcome.Falsified {
		t.Fatalf("fail outcome status = %q, reason %q", f.Status, f.Reason)
	}
	if len(f.Counterexample) != 1 || f.Counterexample[0] != "n: 1000" {
		t.Errorf("counterexample = %q, want the shrunk draw [n: 1000]", f.Counterexample)
	}
	// No fail file: the failing check's seed, with the test's name anchored.
	if !strings.HasPrefix(f.Repro, "-run '^TestFail$' -rapid.seed=") || strings.Contains(f.Repro, "(or") {
		t.Errorf("repro = %q, want -run '^TestFail$' -rapid.seed=N", f.Repro)
	}
	if !strings.Contains(f.Reason, "n too large") {
		t.Errorf("reason = %q", f.Reason)
	}
	if f.Checks < 1 || f.Failed != 1 || len(f.Failures) != 1 {
		t.Errorf("fail outcome: checks %d, failed %d, failures %d", f.Checks, f.Failed, len(f.Failures))
	}
}

// An implementation error wrapping ErrSetup (a binding file at fault at
// the drawn shape) ends the contract run with the status error, its
// message as the reason, never falsified.
func TestHarnessSetupErrorIsError(t *testing.T) {
	noFailFile(t)
	rec := &outcome.Recorder{}
	RunQuiet("TestSetup", Config{Recorder: rec}, func(tb TB) {
		Check(tb, "TEST-HARNESS-SETUP", func(rt *rapid.T, o *Obs) {
			n := rapid.IntRange(0, 1<<20).Draw(rt, "n")
			o.Context(0, "n=%d", n)
			if n%7 == 0 {
				o.Check("impl", fmt.Errorf("case.yaml:9: size at n=%d: division by zero: %w", n, ErrSetup))
			}
		})
	})
	got := rec.Outcomes()["TEST-HARNESS-SETUP"]
	if got.Status != outcome.Errored || !strings.Contains(got.Reason, "case.yaml:9: size at n=") {
		t.Fatalf("outcome %s (%s), want error with the file:line", got.Status, got.Reason)
	}
}

// A panic out of rapid.Check itself (rapid calls testing.Short, which
// panics outside an initialised go test) is the harness's error, with the
// panic's message, and a run of zero checks is not discharged: either used
// to be recorded DISCHARGED with 0 checks.
func TestHarnessPanicAndZeroChecks(t *testing.T) {
	noFailFile(t)
	rec := &outcome.Recorder{}
	cfg := Config{Recorder: rec}
	q := RunQuiet("TestPanicky", cfg, func(tb TB) {
		Check(&panickyTB{TB: tb}, "TEST-HARNESS-PANIC", func(rt *rapid.T, o *Obs) {
			o.Within("x", []float32{1}, []float64{1}, []float64{0})
		})
	})
	if o := rec.Outcomes()["TEST-HARNESS-PANIC"]; o.Status != outcome.Errored || !strings.Contains(o.Reason, "harness panicked: testing: Short called") {
		t.Errorf("panicking harness: %s (%q), want error naming the panic", o.Status, o.Reason)
	}
	if !q.Failed() {
		t.Errorf("the contract run did not fail: %v", q.Logs())
	}
	setRapid(t, "checks", "0")
	RunQuiet("TestZero", cfg, func(tb TB) {
		Check(tb, "TEST-HARNESS-ZERO", func(rt *rapid.T, o *Obs) {
			o.Within("x", []float32{1}, []float64{1}, []float64{0})
		})
	})
	if o := rec.Outcomes()["TEST-HARNESS-ZERO"]; o.Status == outcome.Discharged || o.Checks != 0 {
		t.Errorf("zero checks: %s after %d checks (%q), want not discharged", o.Status, o.Checks, o.Reason)
	}
}

// panickyTB panics where rapid.Check first calls its TB (Helper), before
// any check, as testing.Short does in a program that never called
// testing.Init.
type panickyTB struct{ TB }

func (p *panickyTB) Helper() {
	pcs := make([]uintptr, 8)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for f, more := frames.Next(); more; f, more = frames.Next() {
		if strings.HasPrefix(f.Function, "pgregory.net/rapid.") {
			panic("testing: Short called before Init")
		}
	}
}

// A falsified prediction carries the ratio of its failing comparison, and
// every failing run of one ID is kept (issue: the best run's ratio was shown,
// and only the first failing run).
func TestHarnessKeepsFailingRatio(t *testing.T) {
	noFailFile(t)
	rec := &outcome.Recorder{}
	cfg := Config{Recorder: rec}
	for _, name := range []string{"TestRatioA", "TestRatioB"} {
		RunQuiet(name, cfg, func(tb TB) {
			Check(tb, "TEST-HARNESS-RATIO", func(rt *rapid.T, o *Obs) {
				x := rapid.Float64Range(2, 4).Draw(rt, "x")
				o.Ratio("x", x, 1)
			})
		})
	}
	o := rec.Outcomes()["TEST-HARNESS-RATIO"]
	if o.Status != outcome.Falsified || len(o.Failures) != 2 || o.Failed != 2 {
		t.Fatalf("outcome = %+v, want falsified by both runs", o)
	}
	for _, f := range o.Failures {
		if !(f.Ratio > 1) {
			t.Errorf("%s: failing ratio %g, want > 1", f.Run, f.Ratio)
		}
	}
	if !(o.Stats.MaxRatio > 1) {
		t.Errorf("MaxRatio = %g, want the failing ratio (> 1)", o.Stats.MaxRatio)
	}
}

// A contract run in progress when the run is ended (deadline, Ctrl-C) stops
// before its next check, inconclusive with the checks it passed and their
// statistics; one that starts afterwards is skipped.
func TestHarnessStopsOnContext(t *testing.T) {
	setRapid(t, "checks", "100")
	rec := &outcome.Recorder{}
	ctx, cancel := context.WithCancelCause(context.Background())
	cfg := Config{Recorder: rec, Context: ctx}
	reached, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var q *QuietTB
	go func() {
		defer close(done)
		q = RunQuiet("TestLive", cfg, func(tb TB) {
			n := 0
			Check(tb, "TEST-HARNESS-PASS", func(rt *rapid.T, o *Obs) {
				x := rapid.Float32Range(-10, 10).Draw(rt, "x")
				o.Within("x", []float32{x}, []float64{float64(x)}, []float64{0})
				if n++; n == 3 {
					close(reached)
					<-release
				}
			})
		})
	}()
	select {
	case <-reached:
	case <-done:
		t.Fatal("the run ended before its third check")
	}
	live := rec.Live()
	if len(live) != 1 || live[0].Name != "TestLive" {
		t.Fatalf("Live() = %v, want TestLive", live)
	}
	if n, _ := live[0].Progress(); n != 2 {
		t.Errorf("progress = %d checks, want 2", n)
	}
	cancel(errors.New("cut short"))
	close(release)
	<-done
	o := rec.Outcomes()["TEST-HARNESS-PASS"]
	if o.Status != outcome.Inconclusive || o.Checks != 3 || o.Stats.Compared != 3 || !strings.Contains(o.Reason, "cut short (TestLive had passed 3 checks)") {
		t.Errorf("outcome after the stop = %+v", o)
	}
	if !q.Failed() || len(rec.Live()) != 0 {
		t.Errorf("stopped run: failed %v, live %v", q.Failed(), rec.Live())
	}
	late := RunQuiet("TestLate", cfg, func(tb TB) {
		Check(tb, "TEST-HARNESS-FAIL", func(rt *rapid.T, o *Obs) { t.Error("a check ran after the stop") })
	})
	if lo := rec.Outcomes()["TEST-HARNESS-FAIL"]; !late.Skipped() || lo.Status != outcome.NotRun || !strings.Contains(lo.Reason, "cut short") {
		t.Errorf("run started after the stop: skipped %v, outcome %+v", late.Skipped(), lo)
	}
}

// The reproduction's -run pattern selects exactly the failing test: each
// element anchored, so TestX does not also run TestXFD, subtests included.
func TestReproArgs(t *testing.T) {
	for name, want := range map[string]string{
		"TestRMSNormBackwardRowWarp": "-run '^TestRMSNormBackwardRowWarp$' -rapid.seed=3",
		"TestA/sub_1":                "-run '^TestA$/^sub_1$' -rapid.seed=3",
		"TestB/x.y(1)":               `-run '^TestB$/^x\.y\(1\)$' -rapid.seed=3`,
	} {
		if got := reproArgs(name, 3, ""); got != want {
			t.Errorf("reproArgs(%q) = %q, want %q", name, got, want)
		}
	}
	if got := reproArgs("TestA/b", 0, "testdata/rapid/TestA/b.fail"); got != "-run '^TestA$/^b$' -rapid.failfile='testdata/rapid/TestA/b.fail'" {
		t.Errorf("reproArgs = %q", got)
	}
}

func init() {
	Register(Prediction{ID: "TEST-HARNESS-STORAGE", Title: "harness self-test (16-bit storage)", Statement: "stored outputs within their bound"})
}

// With Config.Storage, inputs drawn for a 16-bit role are rounded to it,
// an output compared under a 16-bit role's name is allowed the format's
// rounding (oracle.StorageTol) on top of its bound, and an output compared
// bit for bit is compared with the rounded value; other roles are not.
func TestHarnessStorage(t *testing.T) {
	noFailFile(t)
	cfg := Config{Recorder: &outcome.Recorder{}, Storage: map[string]oracle.Storage{"x": oracle.StorageBFloat16, "y": oracle.StorageBFloat16, "residual_out": oracle.StorageFloat16}}
	lim := cfg.Limits()
	run := func(prop func(rt *rapid.T, o *Obs)) outcome.Outcome {
		cfg.Recorder = &outcome.Recorder{}
		RunQuiet("TestStorage", cfg, func(tb TB) { Check(tb, "TEST-HARNESS-STORAGE", prop) })
		return cfg.Recorder.Outcomes()["TEST-HARNESS-STORAGE"]
	}
	o := run(func(rt *rapid.T, o *Obs) {
		x := lim.Values(rt, "x", 2, 8, gen.Normal)
		for _, v := range x.Data {
			if oracle.StorageBFloat16.Round(v) != v {
				o.Fatalf("x = %g is not a bfloat16", v)
			}
		}
		w := rapid.Float64Range(1, 2).Draw(rt, "w")
		y := oracle.StorageBFloat16.Round(float32(w)) // the stored result of an exact kernel
		o.Within("y", []float32{y}, []float64{w}, []float64{0})
		o.Identical("residual_out", []float32{oracle.StorageFloat16.Round(float32(w))}, []float32{float32(w)})
	})
	if o.Status != outcome.Discharged {
		t.Errorf("16-bit roles: %s (%s), want discharged", o.Status, o.Reason)
	}
	o = run(func(rt *rapid.T, o *Obs) {
		w := rapid.Float64Range(1, 2).Draw(rt, "w")
		o.Within("rms", []float32{oracle.StorageBFloat16.Round(float32(w))}, []float64{w}, []float64{0})
	})
	if o.Status != outcome.Falsified {
		t.Errorf("a float32 role allowed 16-bit rounding: %s", o.Status)
	}
}
