package properties

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"
)

// TB is what a contract needs from its test. *testing.T satisfies it;
// falsify passes its own implementation to run a contract against a mutant
// without failing the surrounding test.
type TB = rapid.TB

// Status is the verdict on a prediction, as the contract report spells it.
type Status string

// Verdicts.
const (
	Discharged   Status = "discharged"   // every check passed
	Falsified    Status = "falsified"    // a check failed and the failure reproduced
	Inconclusive Status = "inconclusive" // e.g. a failure that did not reproduce
	Skipped      Status = "skipped"      // could not run here; Reason says why
	Errored      Status = "error"        // the harness itself failed
)

var statusRank = map[Status]int{"": 0, Skipped: 1, Discharged: 2, Inconclusive: 3, Errored: 4, Falsified: 5}

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
	Runs             []string // names of the contract runs merged here
	Notes            []string // free-form observations worth reporting
}

// ErrorStats summarises observed error over every check of a prediction.
type ErrorStats struct {
	Compared int     // elements compared
	MaxAbs   float64 // max |got − want|
	MaxRel   float64 // max |got − want| / |want| over want ≠ 0
	MaxULP   float64 // max float32 ULP distance between got and float32(want)
	MaxRatio float64 // max |got − want| / tolerance: the prediction's margin
	// NaiveMaxRatio is the same ratio for a naive float32 CPU evaluation of
	// the formula on the same inputs and tolerance (0 when not measured); the
	// yardstick MaxRatio/NaiveMaxRatio says how the kernel compares with the
	// simplest float32 implementation.
	NaiveMaxRatio float64
}

func (s *ErrorStats) merge(o ErrorStats) {
	s.Compared += o.Compared
	s.MaxAbs = math.Max(s.MaxAbs, o.MaxAbs)
	s.MaxRel = math.Max(s.MaxRel, o.MaxRel)
	s.MaxULP = math.Max(s.MaxULP, o.MaxULP)
	s.MaxRatio = math.Max(s.MaxRatio, o.MaxRatio)
	s.NaiveMaxRatio = math.Max(s.NaiveMaxRatio, o.NaiveMaxRatio)
}

var (
	outMu    sync.Mutex
	outcomes = map[string]*Outcome{}
)

// Outcomes returns a snapshot of every outcome recorded in this process.
func Outcomes() map[string]Outcome {
	outMu.Lock()
	defer outMu.Unlock()
	m := make(map[string]Outcome, len(outcomes))
	for k, v := range outcomes {
		m[k] = *v
	}
	return m
}

// ResetOutcomes forgets every recorded outcome (falsify runs each mutant
// against a clean slate).
func ResetOutcomes() {
	outMu.Lock()
	defer outMu.Unlock()
	outcomes = map[string]*Outcome{}
}

// Record merges o into the outcome for o.ID.
func Record(o Outcome) {
	outMu.Lock()
	defer outMu.Unlock()
	cur, ok := outcomes[o.ID]
	if !ok {
		c := o
		outcomes[o.ID] = &c
		return
	}
	cur.Checks += o.Checks
	cur.Failed += o.Failed
	cur.Duration += o.Duration
	cur.Stats.merge(o.Stats)
	cur.Runs = append(cur.Runs, o.Runs...)
	cur.Notes = append(cur.Notes, o.Notes...)
	if statusRank[o.Status] > statusRank[cur.Status] {
		cur.Status, cur.Reason = o.Status, o.Reason
		cur.Counterexample, cur.Repro, cur.Failfile = o.Counterexample, o.Repro, o.Failfile
	}
	if o.NonDeterministic != "" {
		cur.NonDeterministic = o.NonDeterministic
	}
}

// Skip records that prediction id could not run here and skips t.
func Skip(t TB, id, reason string) {
	t.Helper()
	Record(Outcome{ID: id, Status: Skipped, Reason: reason, Runs: []string{t.Name()}})
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
	ct := &captureTB{TB: t}
	var stats ErrorStats
	var mu sync.Mutex
	start := time.Now()
	lr := &liveRun{id: id, name: t.Name(), start: start, mu: &mu, stats: &stats}
	liveMu.Lock()
	live[lr] = struct{}{}
	liveMu.Unlock()
	// rapid ends a failed run with t.FailNow, which never returns: record in
	// a deferred function so the outcome is kept either way.
	defer func() {
		liveMu.Lock()
		delete(live, lr)
		liveMu.Unlock()
		o := Outcome{ID: id, Duration: time.Since(start), Runs: []string{t.Name()}}
		mu.Lock()
		o.Stats = stats
		mu.Unlock()
		ct.mu.Lock()
		defer ct.mu.Unlock()
		o.Checks = ct.checks
		o.Counterexample = ct.draws
		o.Repro, o.Failfile = ct.repro, ct.failfile
		switch {
		case ct.flaky:
			o.Status = Inconclusive
			o.Failed = 1
			o.NonDeterministic = "a failure did not reproduce on replay: " + ct.failure
			o.Reason = o.NonDeterministic
		case ct.failed || t.Failed():
			o.Status = Falsified
			o.Failed = 1
			o.Reason = ct.failure
			if o.Reason == "" {
				o.Reason = "test failed outside the property"
				o.Status = Errored
			}
		case ct.skipped:
			o.Status = Skipped
			o.Reason = ct.skipReason
		default:
			o.Status = Discharged
		}
		Record(o)
	}()
	rapid.Check(ct, func(rt *rapid.T) {
		o := &Obs{rt: rt}
		prop(rt, o)
		mu.Lock()
		stats.merge(o.stats)
		lr.passed++
		mu.Unlock()
	})
}

// liveRun is a contract run in progress, so that a report written when
// -deadline passes says how far each got.
type liveRun struct {
	id, name string
	start    time.Time
	mu       *sync.Mutex // guards stats and passed
	stats    *ErrorStats
	passed   int
}

var (
	liveMu sync.Mutex
	live   = map[*liveRun]struct{}{}
)

// liveRuns returns the contract runs in progress.
func liveRuns() []*liveRun {
	liveMu.Lock()
	defer liveMu.Unlock()
	runs := make([]*liveRun, 0, len(live))
	for lr := range live {
		runs = append(runs, lr)
	}
	return runs
}

// Progress describes the contract runs in progress: "TestX 1234, TestY 567"
// (checks passed so far, in order of name), and how many there are.
func Progress() (string, int) {
	var parts []string
	for _, lr := range liveRuns() {
		lr.mu.Lock()
		parts = append(parts, fmt.Sprintf("%s %d", lr.name, lr.passed))
		lr.mu.Unlock()
	}
	slices.Sort(parts)
	return strings.Join(parts, ", "), len(parts)
}

// RecordLive records every contract run still in progress as an
// inconclusive outcome with reason, the checks it has passed so far and
// their error statistics.
func RecordLive(reason string) {
	for _, lr := range liveRuns() {
		lr.mu.Lock()
		o := Outcome{ID: lr.id, Status: Inconclusive, Checks: lr.passed, Stats: *lr.stats,
			Duration: time.Since(lr.start), Runs: []string{lr.name},
			Reason: fmt.Sprintf("%s (%s had passed %d checks)", reason, lr.name, lr.passed)}
		lr.mu.Unlock()
		Record(o)
	}
}

// captureTB forwards everything to the real TB and keeps what rapid says:
// the number of checks, the reproduction command and the draws of the
// minimal failing case.
type captureTB struct {
	TB
	mu         sync.Mutex
	checks     int
	failed     bool
	flaky      bool
	skipped    bool
	skipReason string
	failure    string
	repro      string
	failfile   string
	draws      []string
	replaying  bool
}

var (
	reOK       = regexp.MustCompile(`^\[rapid\] OK, passed (\d+) tests`)
	reFailed   = regexp.MustCompile(`(?s)^\[rapid\] (?:failed|panic) after (\d+) tests: (.*?)\nTo reproduce, specify (-run=.*?)\n`)
	reFlaky    = regexp.MustCompile(`(?s)^\[rapid\] flaky test, can not reproduce a failure\nTo try to reproduce, specify (-run=.*?)\n`)
	reFailfile = regexp.MustCompile(`-rapid\.failfile="([^"]*)"`)
	reDraw     = regexp.MustCompile(`^\[rapid\] draw (.*?): (.*)$`)
)

func (c *captureTB) note(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := reOK.FindStringSubmatch(msg); m != nil {
		c.checks, _ = strconv.Atoi(m[1])
		return
	}
	if m := reFailed.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1]) // checks that passed before the failing one
		c.checks = n + 1
		c.failed = true
		c.failure = firstLine(m[2])
		c.setRepro(m[3])
		c.replaying, c.draws = true, nil
		return
	}
	if m := reFlaky.FindStringSubmatch(msg); m != nil {
		c.flaky = true
		c.failure = firstLine(msg[strings.Index(msg, "Traceback"):])
		c.setRepro(m[1])
		c.replaying, c.draws = true, nil
		return
	}
	if c.replaying {
		if m := reDraw.FindStringSubmatch(msg); m != nil {
			c.draws = append(c.draws, m[1]+": "+m[2])
		} else if !strings.HasPrefix(msg, "[rapid]") && c.failure == "" {
			c.failure = firstLine(msg)
		}
	}
}

func (c *captureTB) setRepro(s string) {
	if m := reFailfile.FindStringSubmatch(s); m != nil {
		c.failfile = m[1]
	}
	c.repro = "go test " + packageArg() + " " + s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (c *captureTB) Logf(format string, args ...any) {
	c.TB.Helper()
	c.note(fmt.Sprintf(format, args...))
	c.TB.Logf(format, args...)
}

func (c *captureTB) Errorf(format string, args ...any) {
	c.TB.Helper()
	c.note(fmt.Sprintf(format, args...))
	c.TB.Errorf(format, args...)
}

func (c *captureTB) Fatalf(format string, args ...any) {
	c.TB.Helper()
	c.note(fmt.Sprintf(format, args...))
	c.TB.Fatalf(format, args...)
}

func (c *captureTB) Skipf(format string, args ...any) {
	c.mu.Lock()
	c.skipped, c.skipReason = true, fmt.Sprintf(format, args...)
	c.mu.Unlock()
	c.TB.Skipf(format, args...)
}

// packageArg names the package for a reproduction command.
var packageArg = func() string { return "./properties" }
