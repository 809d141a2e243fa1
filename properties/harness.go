package properties

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"
)

// Status is the verdict on a prediction, as the contract report spells it.
type Status string

// Verdicts.
const (
	Discharged   Status = "discharged"   // every check passed
	Falsified    Status = "falsified"    // a check failed and the failure reproduced
	Inconclusive Status = "inconclusive" // e.g. a failure that did not reproduce
	Skipped      Status = "skipped"      // could not run here; Reason says why
	Errored      Status = "error"        // the harness itself failed
	NotRun       Status = "not_run"      // the run ended before it started
)

var statusRank = map[Status]int{"": 0, NotRun: 1, Skipped: 2, Discharged: 3, Inconclusive: 4, Errored: 5, Falsified: 6}

// Outcome is what running a prediction's contracts produced. Several contract
// runs for one ID (e.g. two backward designs) merge into one Outcome.
type Outcome struct {
	ID               string
	Status           Status
	Reason           string
	Checks           int      // checks rapid ran (valid test cases)
	Failed           int      // contract runs that failed
	Counterexample   []string // "label: value" lines of the minimal failing case
	Repro            string   // exact command line that replays the failure
	Failfile         string
	NonDeterministic string // set when a failure did not reproduce on replay
	Stats            ErrorStats
	Duration         time.Duration
	Runs             []string  // names of the contract runs merged here
	Notes            []string  // free-form observations worth reporting
	Failures         []Failure // every failing contract run, in the order recorded
}

// ErrorStats summarises observed error over every check of a prediction.
// Each maximum is taken over the comparisons it describes, counted beside
// it; a maximum over none is not a measurement (a report leaves it out).
type ErrorStats struct {
	Compared int     // elements compared with the oracle (Within, Identical)
	MaxAbs   float64 // max |got − want| over the Compared elements
	// RelCompared counts the elements MaxRel and MaxULP are taken over: those
	// whose bound is at most half |want| (see Scaled). Where the bound
	// allows more — want near zero, as where a rotation cancels — a relative
	// error or a ULP count measures how small want is, not the result.
	RelCompared int
	MaxRel      float64 // max |got − want| / |want| over the RelCompared elements
	MaxULP      float64 // max float32 ULP distance between got and float32(want) over them
	Scalars     int     // scalar comparisons made by the caller (Obs.Ratio), in MaxRatio only
	MaxRatio    float64 // max |err| / tolerance over every comparison: the prediction's margin
	// NaiveMaxRatio is the same ratio for a naive float32 CPU evaluation of
	// the formula on the same inputs and tolerance (0 when not measured); the
	// yardstick MaxRatio/NaiveMaxRatio says how the kernel compares with the
	// simplest float32 implementation.
	NaiveMaxRatio float64
}

// Scaled reports whether an element with oracle value w and bound t enters
// the relative and ULP statistics: 2t ≤ |w| and w ≠ 0, so that every result
// within the bound has w's sign and lies within [|w|/2, 3|w|/2].
func Scaled(w, t float64) bool { return 2*t <= math.Abs(w) && w != 0 }

func (s *ErrorStats) merge(o ErrorStats) {
	s.Compared += o.Compared
	s.RelCompared += o.RelCompared
	s.Scalars += o.Scalars
	s.MaxAbs = math.Max(s.MaxAbs, o.MaxAbs)
	s.MaxRel = math.Max(s.MaxRel, o.MaxRel)
	s.MaxULP = math.Max(s.MaxULP, o.MaxULP)
	s.MaxRatio = math.Max(s.MaxRatio, o.MaxRatio)
	s.NaiveMaxRatio = math.Max(s.NaiveMaxRatio, o.NaiveMaxRatio)
}

// Failure is one failing contract run of a prediction.
type Failure struct {
	Run            string   // the contract run (test name)
	Reason         string   // the failure message of the minimal case
	Ratio          float64  // |err|/tol of the failing comparison (0: not a bound)
	Counterexample []string // "label: value" lines of the minimal failing case
	Repro          string
	Failfile       string
}

// Recorder collects the outcomes of contract runs, merging the runs of one
// prediction, and knows the runs in progress. A runner makes one per run and
// hands it to contracts through Config.Recorder. Safe for concurrent use.
type Recorder struct {
	// Repro returns the command that replays a failing run from the
	// failing check's seed and rapid's fail file (either may be empty); nil
	// is the go test arguments alone.
	Repro func(run string, seed uint64, failfile string) string
	// Rerun, when not nil, returns the whole command that replays the
	// first checks checks of run from the base seed; nil is Repro's
	// command with -rapid.checks.
	Rerun func(run string, seed uint64, checks int) string

	mu       sync.Mutex
	outcomes map[string]*Outcome
	live     map[*LiveRun]struct{}
}

// LiveRun is a contract run in progress.
type LiveRun struct {
	ID, Name string
	Start    time.Time
	mu       sync.Mutex
	passed   int
	stats    ErrorStats
}

// Progress returns the checks the run has passed so far and their
// statistics.
func (l *LiveRun) Progress() (int, ErrorStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.passed, l.stats
}

func (l *LiveRun) pass(s ErrorStats) {
	l.mu.Lock()
	l.stats.merge(s)
	l.passed++
	l.mu.Unlock()
}

func (r *Recorder) begin(l *LiveRun) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[*LiveRun]struct{}{}
	}
	r.live[l] = struct{}{}
}

func (r *Recorder) end(l *LiveRun, o Outcome) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.live, l)
	r.mu.Unlock()
	r.Record(o)
}

// Live returns the contract runs in progress, in order of name.
func (r *Recorder) Live() []*LiveRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := make([]*LiveRun, 0, len(r.live))
	for l := range r.live {
		runs = append(runs, l)
	}
	slices.SortFunc(runs, func(a, b *LiveRun) int { return strings.Compare(a.Name, b.Name) })
	return runs
}

// Outcomes returns a snapshot of every outcome recorded.
func (r *Recorder) Outcomes() map[string]Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]Outcome, len(r.outcomes))
	for k, v := range r.outcomes {
		c := *v
		c.Failures = slices.Clone(v.Failures)
		m[k] = c
	}
	return m
}

// Record merges o into the outcome for o.ID.
func (r *Recorder) Record(o Outcome) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outcomes == nil {
		r.outcomes = map[string]*Outcome{}
	}
	cur, ok := r.outcomes[o.ID]
	if !ok {
		c := o
		r.outcomes[o.ID] = &c
		return
	}
	cur.Checks += o.Checks
	cur.Failed += o.Failed
	cur.Duration += o.Duration
	cur.Stats.merge(o.Stats)
	cur.Runs = append(cur.Runs, o.Runs...)
	cur.Notes = append(cur.Notes, o.Notes...)
	cur.Failures = append(cur.Failures, o.Failures...)
	if statusRank[o.Status] > statusRank[cur.Status] {
		cur.Status, cur.Reason = o.Status, o.Reason
		cur.Counterexample, cur.Repro, cur.Failfile = o.Counterexample, o.Repro, o.Failfile
	}
	if o.NonDeterministic != "" {
		cur.NonDeterministic = o.NonDeterministic
	}
}

// RecordLive records every contract run still in progress as an
// inconclusive outcome with reason, the checks it has passed so far and
// their error statistics.
func (r *Recorder) RecordLive(reason string) {
	for _, l := range r.Live() {
		n, st := l.Progress()
		r.Record(Outcome{ID: l.ID, Status: Inconclusive, Checks: n, Stats: st,
			Duration: time.Since(l.Start), Runs: []string{l.Name},
			Reason: fmt.Sprintf("%s (%s had passed %d checks)", reason, l.Name, n)})
	}
}

// Skip records that prediction id could not run here and skips t.
func Skip(t TB, id, reason string) {
	t.Helper()
	t.Config().Recorder.Record(Outcome{ID: id, Status: Skipped, Reason: reason, Runs: []string{t.Name()}})
	t.Skipf("%s skipped: %s", id, reason)
}

// Check runs prop as a rapid property on behalf of prediction id and records
// the outcome. prop gets an Obs through which it compares results; a
// violated bound fails the check with the full case printed.
func Check(t TB, id string, prop func(rt *rapid.T, o *Obs)) {
	t.Helper()
	if _, ok := Lookup(id); !ok {
		t.Fatalf("properties: unknown prediction %q", id)
		return
	}
	cfg := t.Config()
	rec := cfg.Recorder
	if err := cfg.stopped(); err != nil {
		rec.Record(Outcome{ID: id, Status: NotRun, Reason: "not started: " + err.Error(), Runs: []string{t.Name()}})
		t.Skipf("%s not started: %v", id, err)
		return
	}
	ct := &captureTB{TB: t}
	lr := &LiveRun{ID: id, Name: t.Name(), Start: time.Now()}
	rec.begin(lr)
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
			status      Status
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
		n, stats := lr.Progress()
		o := Outcome{ID: id, Duration: time.Since(lr.Start), Runs: []string{t.Name()}, Checks: n, Stats: stats}
		log := ct.log()
		mu.Lock()
		reason, ratio, stopped, failedYet, ended := last.msg, last.ratio, stop, failedYet, ended
		mu.Unlock()
		if reason == "" {
			reason = log.failure
		}
		if ended != nil && failedYet && ended.status == Errored {
			// A set-up failure while rapid shrank a wrong result: the
			// result is the finding.
			o.Notes = append(o.Notes, t.Name()+": shrinking ended by "+ended.reason)
			ended = nil
		}
		switch {
		case p != nil:
			o.Status = Errored
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
			o.Failures = []Failure{{Run: t.Name(), Reason: o.Reason, Counterexample: o.Counterexample, Repro: o.Repro}}
		case stopped != nil && !failedYet:
			o.Status = Inconclusive
			o.Reason = fmt.Sprintf("%v (%s had passed %d checks)", stopped, t.Name(), n)
		case log.flaky:
			o.Status = Inconclusive
			o.NonDeterministic = "a failure did not reproduce on replay: " + reason
			o.Reason = o.NonDeterministic
		case failedYet || log.failed || t.Failed():
			o.Status = Falsified
			o.Reason = reason
			if !failedYet && !log.failed {
				o.Reason = "test failed outside the property"
				o.Status = Errored
			}
		case ct.skipped:
			o.Status = Skipped
			o.Reason = ct.skipReason
		case n == 0:
			// Nothing was checked (rapid's check count is 0, e.g. -short
			// with fewer than 5 checks): no evidence either way.
			o.Status = Inconclusive
			o.Reason = "no check ran (rapid ran 0 checks; under -short it runs a fifth of -rapid.checks)"
		default:
			o.Status = Discharged
		}
		if ended == nil && (o.Status == Falsified || (o.Status == Inconclusive && o.NonDeterministic != "")) {
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
			o.Failures = []Failure{{Run: t.Name(), Reason: o.Reason, Ratio: ratio, Counterexample: o.Counterexample,
				Repro: o.Repro, Failfile: o.Failfile}}
		}
		rec.end(lr, o)
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
		o.abort = func(status Status, reason string) {
			mu.Lock()
			ended = &struct {
				status      Status
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
			lr.pass(o.stats)
		}
	})
}

// rerun returns the command that replays the first checks checks of the
// contract run name from the run's base seed (cfg.Seed), or "" when the
// seed is unknown.
func rerun(cfg *Config, rec *Recorder, name string, checks int) string {
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
