package properties

import (
	"flag"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
)

func init() {
	Register(Prediction{ID: "TEST-HARNESS-PASS", Title: "harness self-test (passing)", Statement: "x·1 = x"})
	Register(Prediction{ID: "TEST-HARNESS-FAIL", Title: "harness self-test (failing)", Statement: "every n < 1000"})
}

// The harness must see a failure, keep the minimal counterexample rapid drew
// and the command that reproduces it — and must not report a pass as one.
func TestHarnessRecordsOutcomes(t *testing.T) {
	ResetOutcomes()
	t.Cleanup(ResetOutcomes)
	// The deliberately failing property must not leave a fail file behind.
	old := flag.Lookup("rapid.nofailfile").Value.String()
	flag.Set("rapid.nofailfile", "true")
	t.Cleanup(func() { flag.Set("rapid.nofailfile", old) })
	pass := RunQuiet("TestPass", func(tb TB) {
		Check(tb, "TEST-HARNESS-PASS", func(rt *rapid.T, o *Obs) {
			x := rapid.Float32Range(-10, 10).Draw(rt, "x")
			o.Within("x", []float32{x * 1}, []float64{float64(x)}, []float64{0})
		})
	})
	fail := RunQuiet("TestFail", func(tb TB) {
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
	out := Outcomes()
	p, f := out["TEST-HARNESS-PASS"], out["TEST-HARNESS-FAIL"]
	if p.Status != Discharged || p.Checks == 0 || p.Stats.Compared != p.Checks {
		t.Errorf("pass outcome = %+v", p)
	}
	if f.Status != Falsified {
		t.Fatalf("fail outcome status = %q, reason %q", f.Status, f.Reason)
	}
	if len(f.Counterexample) != 1 || f.Counterexample[0] != "n: 1000" {
		t.Errorf("counterexample = %q, want the shrunk draw [n: 1000]", f.Counterexample)
	}
	if !strings.Contains(f.Repro, "-run=") || !strings.Contains(f.Repro, "rapid.") {
		t.Errorf("repro = %q", f.Repro)
	}
	if !strings.Contains(f.Reason, "n too large") {
		t.Errorf("reason = %q", f.Reason)
	}
}

// A contract run still in progress when -deadline passes is reported
// inconclusive with the checks it had passed and their statistics.
func TestRecordLive(t *testing.T) {
	ResetOutcomes()
	t.Cleanup(ResetOutcomes)
	reached, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		RunQuiet("TestLive", func(tb TB) {
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
		t.Skip("-rapid.checks below 3: the run ended before it could be cut")
	}
	runs, n := Progress()
	RecordLive("cut short")
	o := Outcomes()["TEST-HARNESS-PASS"]
	close(release)
	<-done
	if o.Status != Inconclusive || o.Checks != 2 || o.Stats.Compared != 2 || !strings.Contains(o.Reason, "cut short (TestLive had passed 2 checks)") {
		t.Errorf("outcome recorded at the deadline = %+v", o)
	}
	if n != 1 || runs != "TestLive 2" {
		t.Errorf("Progress() = %q, %d; want \"TestLive 2\", 1", runs, n)
	}
}

// A binary built by make gpu-bin reports the commit it was built from, not
// whatever checkout it happens to run in.
func TestRunCommitFromBuild(t *testing.T) {
	old := BuildCommit
	t.Cleanup(func() { BuildCommit = old })
	BuildCommit = "0123abcd-dirty"
	if got := NewRun(cudart.Info{Backend: "emu"}, time.Now()).GitCommit; got != BuildCommit {
		t.Errorf("GitCommit = %q, want the build's %q", got, BuildCommit)
	}
}
