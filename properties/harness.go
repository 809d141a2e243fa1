package properties

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/reports"
)

// skip records that prediction id could not run here and skips t.
func skip(t TB, id, reason string) {
	t.Helper()
	t.Config().Recorder.Record(outcome.Outcome{ID: id, Status: outcome.Skipped, Reason: reason, Runs: []string{t.Name()}})
	t.Skipf("%s skipped: %s", id, reason)
}

// NotClaimed records that the implementation t would check makes no claim
// of prediction id (reason says where it says so) and skips t: the report
// lists the prediction as not_claimed, never leaves it out.
func NotClaimed(t TB, id, reason string) {
	t.Helper()
	t.Config().Recorder.Record(outcome.Outcome{ID: id, Status: outcome.NotClaimed, Reason: reason, Runs: []string{t.Name()}})
	t.Skipf("%s not claimed: %s", id, reason)
}

// Check runs prop as a rapid property on behalf of prediction id and records
// the outcome. prop gets an Obs through which it compares results; a
// violated bound fails the check with the full case printed. The outcome
// names no implementation: CheckImpls credits the ones prop runs. A
// prediction that the Recorder already holds falsified by a liveness
// failure is not checked again (its kernel hangs: another run would only
// wait the watchdog again): the run is recorded not_run, with a note, and
// skipped.
func Check(t TB, id string, prop func(rt *rapid.T, o *Obs)) {
	t.Helper()
	check(t, id, nil, prop)
}

// CheckImpls is Check of prop on the implementations impls (as
// ImplKernels describes them): the report credits the outcome, a failure
// included, to them.
func CheckImpls(t TB, id string, impls []any, prop func(rt *rapid.T, o *Obs)) {
	t.Helper()
	check(t, id, ImplKernels(impls...), prop)
}

func check(t TB, id string, impls []reports.Kernel, prop func(rt *rapid.T, o *Obs)) {
	t.Helper()
	checkCredited(t, id, func() []reports.Kernel { return impls }, prop)
}

// checkCredited is check with the implementations credited known only as
// the run goes (the kernels a contract launched): credit is called as the
// run begins and again when it ends, for its outcome.
func checkCredited(t TB, id string, credit func() []reports.Kernel, prop func(rt *rapid.T, o *Obs)) {
	t.Helper()
	impls := credit()
	if _, ok := Lookup(id); !ok {
		t.Fatalf("properties: unknown prediction %q", id)
		return
	}
	cfg := t.Config()
	rec := cfg.Recorder
	if err := cfg.stopped(); err != nil {
		rec.Record(outcome.Outcome{ID: id, Status: outcome.NotRun, Reason: "not started: " + err.Error(), Runs: []string{t.Name()}, Impls: impls})
		t.Skipf("%s not started: %v", id, err)
		return
	}
	if why := hung(rec, id); why != "" {
		// Its kernel hangs: another run would wait the watchdog again to
		// learn nothing new.
		rec.Record(outcome.Outcome{ID: id, Status: outcome.NotRun, Reason: "not started: " + why, Runs: []string{t.Name()},
			Notes: []string{t.Name() + ": not started: " + why}})
		t.Skipf("%s not started: %s", id, why)
		return
	}
	rp, ok := begin(t, id, impls) // shard and failure database: replay.go
	if !ok {
		return
	}
	defer rp.end()
	ct := &captureTB{TB: t}
	lr := rec.Begin(id, t.Name(), impls...)
	// Checks that passed before the first failure are counted by the
	// property itself; rapid's shrinking and replays run it again, and
	// the last failing call is the minimal case's replay.
	var (
		mu        sync.Mutex
		stop      error // why the run was ended before its checks were done
		failedYet bool
		last      struct {
			msg   string
			ratio float64
		}
		// ended: the verdict of a check that ended the run without
		// shrinking (Obs.Check: liveness, set-up), and that check's context.
		ended *struct {
			status      outcome.Status
			reason, ctx string
		}
	)
	// rapid ends a failed run with t.FailNow, which never returns: record in
	// a deferred function so the outcome is kept either way.
	defer func() {
		// A panic out of rapid.Check is the harness's own failure (rapid
		// ends a failed property with runtime.Goexit, which recover does
		// not see): recorded as an error with its message, never as a run.
		p := recover()
		impls := credit()
		n, stats := lr.Progress()
		o := outcome.Outcome{ID: id, Duration: time.Since(lr.Start), Runs: []string{t.Name()}, Checks: n, Stats: stats, Impls: impls}
		log := ct.log()
		mu.Lock()
		reason, ratio, stopped, failedYet, ended := last.msg, last.ratio, stop, failedYet, ended
		mu.Unlock()
		if reason == "" {
			reason = log.failure
		}
		if ended != nil && failedYet && ended.status == outcome.Errored {
			// A set-up failure while rapid shrank a wrong result: the
			// result is the finding.
			o.Notes = append(o.Notes, t.Name()+": shrinking ended by "+ended.reason)
			ended = nil
		}
		switch {
		case p != nil:
			o.Status = outcome.Errored
			o.Reason = "the harness panicked: " + firstLine(fmt.Sprint(p))
		case ended != nil:
			o.Status, o.Reason = ended.status, ended.reason
			o.Checks++ // the check that ended the run
			o.Failed = 1
			if ended.ctx != "" {
				o.Counterexample = []string{"case: " + ended.ctx}
			}
			// rapid replays checks 1…n+1 of the base seed: the last is this one.
			o.Repro = rerun(cfg, rec, t.Name(), n+1)
			o.Failures = []outcome.Failure{{Run: t.Name(), Reason: o.Reason, Counterexample: o.Counterexample, Repro: o.Repro,
				Impls: outcome.ImplNames(impls)}}
		case stopped != nil && !failedYet:
			o.Status = outcome.Inconclusive
			o.Reason = fmt.Sprintf("%v (%s had passed %d checks)", stopped, t.Name(), n)
		case log.flaky:
			o.Status = outcome.Inconclusive
			o.NonDeterministic = "a failure did not reproduce on replay: " + reason
			o.Reason = o.NonDeterministic
		case failedYet || log.failed || t.Failed():
			o.Status = outcome.Falsified
			o.Reason = reason
			if !failedYet && !log.failed {
				o.Reason = "test failed outside the property"
				o.Status = outcome.Errored
			}
		case ct.skipped:
			o.Status = outcome.Skipped
			o.Reason = ct.skipReason
		case n == 0:
			// Nothing was checked (rapid's check count is 0, e.g. -short
			// with fewer than 5 checks): no evidence either way.
			o.Status = outcome.Inconclusive
			o.Reason = "no check ran (rapid ran 0 checks; under -short it runs a fifth of -rapid.checks)"
		default:
			o.Status = outcome.Discharged
		}
		if ended == nil && (o.Status == outcome.Falsified || (o.Status == outcome.Inconclusive && o.NonDeterministic != "")) {
			o.Checks++ // the failing check
			o.Failed = 1
			if !math.IsNaN(ratio) && !math.IsInf(ratio, 0) {
				o.Stats.MaxRatio = math.Max(o.Stats.MaxRatio, ratio)
			} else {
				ratio = 0
			}
			o.Counterexample = log.draws
			o.Failfile = log.failfile
			if log.failfile != "" || log.seed != 0 {
				if rec != nil && rec.Repro != nil {
					o.Repro = rec.Repro(t.Name(), log.seed, log.failfile)
				} else {
					o.Repro = reproArgs(t.Name(), log.seed, log.failfile)
				}
			}
			o.Failures = []outcome.Failure{{Run: t.Name(), Reason: o.Reason, Ratio: ratio, Counterexample: o.Counterexample,
				Repro: o.Repro, Failfile: o.Failfile, Impls: outcome.ImplNames(impls)}}
		}
		o = rp.finish(t, o, log)
		rec.End(lr, o)
		if p != nil {
			t.Fatalf("%s: %s", id, o.Reason)
		}
	}()
	rapid.Check(ct, func(rt *rapid.T) {
		if err := cfg.stopped(); err != nil {
			mu.Lock()
			stop = err
			mu.Unlock()
			// Ends the contract run (runtime.Goexit) through rapid's
			// deferred calls to the deferred record above.
			t.Fatalf("%s: stopped: %v", id, err)
		}
		o := &Obs{rt: rt, storage: cfg.Storage}
		o.abort = func(status outcome.Status, reason string) {
			mu.Lock()
			ended = &struct {
				status      outcome.Status
				reason, ctx string
			}{status, reason, o.ctx}
			mu.Unlock()
			// Ends the contract run as a stop does, so that rapid neither
			// shrinks nor replays the case.
			t.Fatalf("%s: %s: %s", id, status, reason)
		}
		done := false
		defer func() {
			if done && !rt.Failed() {
				return
			}
			// A failing call: a violated bound (rt.Fatalf), rt.Errorf, or a
			// panic that is not rapid's own control flow (an invalid draw).
			r := recover()
			if r != nil || rt.Failed() {
				if fromRapid(r) && !rt.Failed() {
					panic(r)
				}
				mu.Lock()
				failedYet = true
				last.ratio = o.failRatio
				if r != nil {
					last.msg = firstLine(fmt.Sprint(r))
				}
				mu.Unlock()
			}
			if r != nil {
				panic(r)
			}
		}()
		prop(rt, o)
		done = true
		mu.Lock()
		counting := !failedYet
		mu.Unlock()
		if counting && !rt.Failed() {
			s := outcome.ErrorStats(o.stats)
			s.AddSize(o.size, s.MaxRatio)
			lr.Pass(s)
		}
	})
}

// rerun returns the command that replays the first checks checks of the
// contract run name from the run's base seed (cfg.Seed), or "" when the
// seed is unknown.
func rerun(cfg *Config, rec *outcome.Recorder, name string, checks int) string {
	if cfg.Seed == 0 || checks <= 0 {
		return ""
	}
	if rec != nil && rec.Rerun != nil {
		return rec.Rerun(name, cfg.Seed, checks)
	}
	cmd := reproArgs(name, cfg.Seed, "")
	if rec != nil && rec.Repro != nil {
		cmd = rec.Repro(name, cfg.Seed, "")
	}
	return fmt.Sprintf("%s -rapid.checks=%d", cmd, checks)
}

// hung says why prediction id, already falsified in rec by a liveness
// failure, is not checked again ("" when it is not).
func hung(rec *outcome.Recorder, id string) string {
	if rec == nil {
		return ""
	}
	o, ok := rec.Outcomes()[id]
	if !ok || o.Status != outcome.Falsified || !strings.HasPrefix(o.Reason, "liveness: ") {
		return ""
	}
	by := ""
	if len(o.Failures) > 0 {
		by = " in " + o.Failures[0].Run
	}
	return fmt.Sprintf("%s is already falsified by a liveness failure%s", id, by)
}
