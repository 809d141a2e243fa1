package properties

import (
	"fmt"
	"math"
	"runtime"
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
// skipped. The checks may run on several rapid loops at once
// (Config.Loops): what prop's checks change that outlives a check (a
// device's schedule, a counter) must be safe for concurrent use, or one
// per loop.
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
	lim := cfg.LimitsFor(id) // the checks' tensor offsets (Obs.offsets)
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
	starter := cfg.Loops
	if starter == nil {
		starter = oneLoop{cfg.Seed}
	}
	plan := starter.Plan()
	if len(plan) == 0 {
		plan = []RapidLoop{{Seed: cfg.Seed}}
	}
	loops := make([]*loopRun, len(plan))
	for k, l := range plan {
		loops[k] = &loopRun{RapidLoop: l, k: k, tb: &loopTB{out: t}}
	}
	lr := rec.Begin(id, t.Name(), impls...)
	climb := newSearch(cfg.Target)            // target.go
	guide := newGuided(cfg.Guide, cfg.Target) // guided.go
	// Checks that passed before a loop's first failure are counted by the
	// property itself; rapid's shrinking and replays run it again, and
	// the last failing call is the minimal case's replay.
	var (
		mu   sync.Mutex
		stop error // why the run was ended before its checks were done
		// decisive is the first loop whose property failed or ended the
		// run: its outcome is the run's, and the other loops halt at their
		// next check.
		decisive *loopRun
		// ended: the verdict of a check that ended the run without
		// shrinking (Obs.Check: liveness, set-up), and that check's context.
		ended *struct {
			status      outcome.Status
			reason, ctx string
		}
		notes []string
		// refusal is the last draw the implementation refused
		// (ErrShapeRefused), for a run that ends with too few valid draws.
		refusal string
	)
	// A failed run ends the contract run with t.FailNow, which never
	// returns: record in a deferred function so the outcome is kept either
	// way.
	defer func() {
		// A panic out of rapid.Check is the harness's own failure (rapid
		// ends a failed property with runtime.Goexit, which recover does
		// not see): recorded as an error with its message, never as a run.
		p := recover()
		impls := credit()
		n, stats := lr.Progress()
		o := outcome.Outcome{ID: id, Duration: time.Since(lr.Start), Runs: []string{t.Name()}, Checks: n, Stats: stats, Impls: impls,
			Search: climb.result()}
		mu.Lock()
		d, stopped, ended := decisive, stop, ended
		o.Notes = append(o.Notes, notes...)
		var (
			reason    string
			ratio     float64
			failedYet bool
			log       rapidLog
			passed    int
			skipped   string
		)
		if d != nil {
			reason, ratio, failedYet, passed = d.msg, d.ratio, d.failedYet, d.passed
		}
		mu.Unlock()
		var tooFew string // rapid's reason when draws were too often invalid
		valid, total := 0, 0
		for _, l := range loops {
			if why, ok := l.tb.skip(); ok && skipped == "" {
				skipped = why
			}
			if ll := l.tb.log(); ll.tooFew != "" {
				if tooFew == "" {
					tooFew = ll.tooFew
				}
				valid, total = valid+ll.valid, total+ll.total
			}
			if ll := l.tb.log(); l == d || (d == nil && (ll.failed || ll.flaky) && !log.failed && !log.flaky) {
				log = ll
			}
		}
		if reason == "" {
			reason = log.failure
		}
		if d != nil && len(loops) > 1 {
			o.Notes = append(o.Notes, fmt.Sprintf("%s: its checks were split over %d rapid loops; loop %d (base seed %d) failed first, the others stopped",
				t.Name(), len(loops), d.k, d.Seed))
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
			if o.Status == outcome.Inconclusive {
				// A check ends a run inconclusive only for a non-determinism
				// it found (PARITY-001: a GPU that does not repeat its bits).
				o.NonDeterministic = ended.reason
			}
			o.Checks++ // the check that ended the run
			o.Failed = 1
			if ended.ctx != "" {
				o.Counterexample = []string{"case: " + ended.ctx}
			}
			// rapid replays checks 1…n+1 of the loop's base seed: the last
			// is this one.
			o.Repro = rerun(rec, t.Name(), d.Seed, passed+1)
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
				if tooFew != "" {
					// Too many draws were invalid: the generators did not
					// reach what the implementation accepts often enough.
					o.Reason = fmt.Sprintf("%s: %d of %d draws valid (acceptance %.1f%%)", tooFew, valid, total, 100*float64(valid)/float64(max(total, 1)))
					mu.Lock()
					if refusal != "" {
						o.Reason += "; the last draw refused: " + refusal
					}
					mu.Unlock()
				}
			}
		case skipped != "":
			o.Status = outcome.Skipped
			o.Reason = skipped
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
	p := runLoops(starter, plan, func(k int) rapid.TB { return loops[k].tb }, func(k int, rt *rapid.T) {
		l := loops[k]
		if err := cfg.stopped(); err != nil {
			mu.Lock()
			first := stop == nil
			stop = err
			mu.Unlock()
			if !first {
				runtime.Goexit() // another loop said why
			}
			// Ends the loop (runtime.Goexit); the contract run ends once
			// every loop has.
			l.tb.Fatalf("%s: stopped: %v", id, err)
		}
		mu.Lock()
		halt := decisive != nil && decisive != l
		mu.Unlock()
		if halt {
			runtime.Goexit() // another loop failed: its outcome is the run's
		}
		o := &Obs{rt: rt, storage: cfg.Storage, loop: k, lim: lim}
		o.refused = func(why string) {
			mu.Lock()
			refusal = why
			mu.Unlock()
		}
		o.abort = func(status outcome.Status, reason string) {
			mu.Lock()
			if decisive == nil {
				decisive = l
			}
			if decisive != l {
				// Another loop's failure is the finding; this loop ends
				// beside it.
				notes = append(notes, fmt.Sprintf("%s: rapid loop %d also ended: %s: %s", t.Name(), k, status, reason))
				mu.Unlock()
				runtime.Goexit()
			}
			ended = &struct {
				status      outcome.Status
				reason, ctx string
			}{status, reason, o.ctx}
			mu.Unlock()
			// Ends the loop as a stop does, so that rapid neither shrinks
			// nor replays the case.
			l.tb.Fatalf("%s: %s: %s", id, status, reason)
		}
		done := false
		if climb != nil || guide != nil {
			mu.Lock()
			wasFailed := l.failedYet
			mu.Unlock()
			ch := climb.begin(k, l.Seed, rt)
			gc := guide.begin(k, l.Seed, rt, ch)
			// Runs after the deferred function below has recorded a
			// failure of this call.
			defer func() {
				mu.Lock()
				failed := !wasFailed && l.failedYet
				checks := l.passed
				mu.Unlock()
				ratio := o.stats.MaxRatio
				if failed {
					ratio, checks = o.failRatio, checks+1
				}
				climb.end(k, rt, ch, ratio, o.ctx, failed, !done && !failed,
					func() string { return rerun(rec, t.Name(), l.Seed, checks) }, t.Name())
				guide.end(k, rt, gc, failed, !done && !failed)
			}()
		}
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
				if decisive == nil {
					decisive = l
				}
				l.failedYet = true
				l.ratio = o.failRatio
				if r != nil {
					l.msg = firstLine(fmt.Sprint(r))
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
		counting := !l.failedYet
		if counting && !rt.Failed() {
			l.passed++
		}
		mu.Unlock()
		if counting && !rt.Failed() {
			s := outcome.ErrorStats(o.stats)
			s.AddSize(o.size, s.MaxRatio)
			lr.Pass(s)
		}
	})
	if p != nil {
		panic(p) // recorded as the harness's failure, above
	}
	mu.Lock()
	end := decisive != nil || stop != nil || ended != nil
	mu.Unlock()
	for _, l := range loops {
		end = end || l.tb.Failed()
	}
	if end {
		// The loops failed t already; the contract run ends here, as when
		// rapid.Check ran on its goroutine.
		t.FailNow()
	}
}

// loopRun is one rapid loop of a contract run and what its property saw.
type loopRun struct {
	RapidLoop
	k         int
	tb        *loopTB
	passed    int  // checks passed before its first failure
	failedYet bool // a call of its property failed
	msg       string
	ratio     float64 // |err|/tol of its last failing call
}

// rerun returns the command that replays the first checks checks of the
// contract run name from the base seed seed (its rapid loop's), or "" when
// the seed is unknown.
func rerun(rec *outcome.Recorder, name string, seed uint64, checks int) string {
	if seed == 0 || checks <= 0 {
		return ""
	}
	if rec != nil && rec.Rerun != nil {
		return rec.Rerun(name, seed, checks)
	}
	cmd := reproArgs(name, seed, "")
	if rec != nil && rec.Repro != nil {
		cmd = rec.Repro(name, seed, "")
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
