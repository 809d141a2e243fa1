package outcome

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptxprop/ptxprop/reports"
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
	NotClaimed   Status = "not_claimed"  // the kernel makes no such claim; Reason says where
)

var statusRank = map[Status]int{"": 0, NotRun: 1, Skipped: 2, NotClaimed: 3, Discharged: 4, Inconclusive: 5, Errored: 6, Falsified: 7}

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
	// Impls are the implementations the contract runs checked, as a report
	// names them (kernels of ours by their descriptors, a binding's, a
	// user's by its name or Go type); none for a contract of no
	// implementation (the oracle's own).
	Impls []reports.Kernel
	// Search is what the targeted search found (nil: none ran, or no check
	// observed a ratio).
	Search *Search
}

// ImplNames returns the names of impls.
func ImplNames(impls []reports.Kernel) []string {
	var names []string
	for _, k := range impls {
		names = append(names, k.Name)
	}
	return names
}

// addImpls adds to dst the impls it does not name yet.
func addImpls(dst, impls []reports.Kernel) []reports.Kernel {
	for _, k := range impls {
		if !slices.ContainsFunc(dst, func(d reports.Kernel) bool { return d.Name == k.Name }) {
			dst = append(dst, k)
		}
	}
	return dst
}

// ErrorStats summarises observed error over every check of a prediction.
// Each maximum is taken over the comparisons it describes, counted beside
// it; a maximum over none is not a measurement (a report leaves it out).
type ErrorStats struct {
	Compared int     // elements compared with the oracle (properties.Obs.Within, Identical)
	MaxAbs   float64 // max |got − want| over the Compared elements
	// RelCompared counts the elements MaxRel and MaxULP are taken over: those
	// whose bound is at most half |want| (see Scaled). Where the bound
	// allows more — want near zero, as where a rotation cancels — a relative
	// error or a ULP count measures how small want is, not the result.
	RelCompared int
	MaxRel      float64 // max |got − want| / |want| over the RelCompared elements
	MaxULP      float64 // max float32 ULP distance between got and float32(want) over them
	Scalars     int     // scalar comparisons made by the caller (properties.Obs.Ratio), in MaxRatio only
	MaxRatio    float64 // max |err| / tolerance over every comparison: the prediction's margin
	// NaiveMaxRatio is the same ratio for a naive float32 CPU evaluation of
	// the formula on the same inputs and tolerance (0 when not measured); the
	// yardstick MaxRatio/NaiveMaxRatio says how the kernel compares with the
	// simplest float32 implementation.
	NaiveMaxRatio float64
	// Sizes is MaxRatio per size bucket: Sizes[k] holds the checks whose
	// size (the row length of the checked shape, the hidden size: the
	// cols of properties.Obs.Context) is in [2^k, 2^(k+1)). A check that
	// gave no size is in none. An array, not a map, so that ErrorStats
	// stays a value that copies without sharing.
	Sizes [SizeBuckets]SizeBucket
}

// SizeBuckets is the number of size buckets: sizes up to 2^32−1.
const SizeBuckets = 32

// SizeBucket is the checks of one size bucket and their worst ratio.
type SizeBucket struct {
	Checks   int
	MaxRatio float64
}

// SizeBucketOf returns the bucket of a positive size, and false for a
// size of 0 or less (none given); a size beyond the last bucket is in it.
func SizeBucketOf(size int) (int, bool) {
	if size <= 0 {
		return 0, false
	}
	return min(bits.Len(uint(size))-1, SizeBuckets-1), true
}

// AddSize counts one check of size whose worst ratio was ratio.
func (s *ErrorStats) AddSize(size int, ratio float64) {
	if k, ok := SizeBucketOf(size); ok {
		s.Sizes[k].Checks++
		s.Sizes[k].MaxRatio = math.Max(s.Sizes[k].MaxRatio, ratio)
	}
}

// Scaled reports whether an element with oracle value w and bound t enters
// the relative and ULP statistics: 2t ≤ |w| and w ≠ 0, so that every result
// within the bound has w's sign and lies within [|w|/2, 3|w|/2].
func Scaled(w, t float64) bool { return 2*t <= math.Abs(w) && w != 0 }

// Merge adds o's counts to s and takes the larger of each maximum.
func (s *ErrorStats) Merge(o ErrorStats) {
	s.Compared += o.Compared
	s.RelCompared += o.RelCompared
	s.Scalars += o.Scalars
	s.MaxAbs = math.Max(s.MaxAbs, o.MaxAbs)
	s.MaxRel = math.Max(s.MaxRel, o.MaxRel)
	s.MaxULP = math.Max(s.MaxULP, o.MaxULP)
	s.MaxRatio = math.Max(s.MaxRatio, o.MaxRatio)
	s.NaiveMaxRatio = math.Max(s.NaiveMaxRatio, o.NaiveMaxRatio)
	for k := range s.Sizes {
		s.Sizes[k].Checks += o.Sizes[k].Checks
		s.Sizes[k].MaxRatio = math.Max(s.Sizes[k].MaxRatio, o.Sizes[k].MaxRatio)
	}
}

// Failure is one failing contract run of a prediction.
type Failure struct {
	Run            string   // the contract run (test name)
	Reason         string   // the failure message of the minimal case
	Ratio          float64  // |err|/tol of the failing comparison (0: not a bound)
	Counterexample []string // "label: value" lines of the minimal failing case
	Repro          string
	Failfile       string
	Impls          []string // the names of the implementations the run checked (Outcome.Impls)
}

// Recorder collects the outcomes of contract runs, merging the runs of one
// prediction, and knows the runs in progress. A runner makes one per run and
// hands it to contracts through properties.Config.Recorder. Safe for
// concurrent use; a nil Recorder drops what it is given.
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

// LiveRun is a contract run in progress (Recorder.Begin).
type LiveRun struct {
	ID, Name string
	Start    time.Time
	Impls    []reports.Kernel // what the run checks (Outcome.Impls)
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

// Pass counts one more passed check, with its statistics.
func (l *LiveRun) Pass(s ErrorStats) {
	l.mu.Lock()
	l.stats.Merge(s)
	l.passed++
	l.mu.Unlock()
}

// Begin starts the contract run name of prediction id on impls, now: Live
// lists it until End.
func (r *Recorder) Begin(id, name string, impls ...reports.Kernel) *LiveRun {
	l := &LiveRun{ID: id, Name: name, Start: time.Now(), Impls: impls}
	if r == nil {
		return l
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[*LiveRun]struct{}{}
	}
	r.live[l] = struct{}{}
	return l
}

// End ends the run l, recording its outcome o.
func (r *Recorder) End(l *LiveRun, o Outcome) {
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
		c.Impls = addImpls(nil, o.Impls)
		r.outcomes[o.ID] = &c
		return
	}
	cur.Impls = addImpls(cur.Impls, o.Impls)
	cur.Checks += o.Checks
	cur.Failed += o.Failed
	cur.Duration += o.Duration
	cur.Stats.Merge(o.Stats)
	cur.Runs = append(cur.Runs, o.Runs...)
	cur.Notes = append(cur.Notes, o.Notes...)
	cur.Failures = append(cur.Failures, o.Failures...)
	cur.Search = MergeSearch(cur.Search, o.Search)
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
			Duration: time.Since(l.Start), Runs: []string{l.Name}, Impls: l.Impls,
			Reason: fmt.Sprintf("%s (%s had passed %d checks)", reason, l.Name, n)})
	}
}
