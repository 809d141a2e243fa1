package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/reports"
)

// Exit codes of Main.
const (
	ExitOK          = 0   // every test passed and the report was written
	ExitFailed      = 1   // a test failed, the deadline passed, or the report could not be written
	ExitUsage       = 2   // a setting is invalid
	ExitInterrupted = 130 // ended by SIGINT or SIGTERM; the report holds what was done
)

// runner is one run: its settings, device, recorder, output and the
// context that ends it.
type runner struct {
	cfg       Config
	pcfg      properties.Config
	rec       *outcome.Recorder
	devs      []cudart.Device // the run's devices, one context each
	spread    *spread         // which test runs on which device
	start     time.Time
	cpuStart  time.Duration // ProcessCPU at start
	out       io.Writer     // summary and notices
	ctx       context.Context
	cancel    context.CancelCauseFunc
	signaled  atomic.Bool
	finishing atomic.Bool   // finish has begun: it prints the summary
	ended     atomic.Bool   // end has cancelled ctx
	abandonMu sync.Mutex    // one abandon exits the process
	id        string        // the run's identity in its report
	watchdog  time.Duration // the device's bound on one launch
	reproCmd  string        // command prefix that replays a contract run
	outside   bool          // a Run outside go test: reproductions are cfg.Command's
	cmdline   []string      // the command line recorded in the report
	reportMu  sync.Mutex
	shard     *sharding // nil: not sharded
	// jobs are a Run's; when each names its Prediction, the report lists
	// exactly theirs. subjects holds the outcomes of jobs with a Subject,
	// one Recorder per subject, so that one prediction checked on several
	// bindings is several entries.
	jobs       []Job
	subjectsMu sync.Mutex
	subjects   map[string]*outcome.Recorder
}

// subject returns the Recorder of the jobs on subject ("" is the run's).
func (r *runner) subject(name string) *outcome.Recorder {
	if name == "" {
		return r.rec
	}
	r.subjectsMu.Lock()
	defer r.subjectsMu.Unlock()
	rec, ok := r.subjects[name]
	if !ok {
		if r.subjects == nil {
			r.subjects = map[string]*outcome.Recorder{}
		}
		rec = &outcome.Recorder{Repro: r.repro, Rerun: r.rerunChecks}
		r.subjects[name] = rec
	}
	return rec
}

// recorders returns the run's Recorder and every subject's.
func (r *runner) recorders() []*outcome.Recorder {
	r.subjectsMu.Lock()
	defer r.subjectsMu.Unlock()
	recs := []*outcome.Recorder{r.rec}
	for _, name := range slices.Sorted(maps.Keys(r.subjects)) {
		recs = append(recs, r.subjects[name])
	}
	return recs
}

// current is the run Main started; T hands it to the tests.
var current atomic.Pointer[runner]

// Main runs a test binary's tests as a ptxprop run and returns its exit
// code: it reads the settings (flags -ptxprop.X, else PTXPROP_X, else the
// default), opens the device, runs m, writes the contract report and prints
// its summary. A deadline or SIGINT/SIGTERM ends the run early with the
// report of what was done. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
func Main(m *testing.M, opts ...Option) int {
	c, err := Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptxprop:", err)
		return ExitUsage
	}
	for _, o := range opts {
		o(&c)
	}
	for _, x := range c.extra {
		if err := x.load(os.LookupEnv); err != nil {
			fmt.Fprintln(os.Stderr, "ptxprop:", err)
			return ExitUsage
		}
		x.register(flag.CommandLine)
	}
	RegisterFlags(flag.CommandLine, &c)
	flag.Parse()
	if err := checkShares(c); err != nil {
		fmt.Fprintln(os.Stderr, "ptxprop:", err)
		return ExitUsage
	}
	rr, sh, err := shardRapid(c, rapidForRun(c, os.LookupEnv).with(c.Rapid), os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptxprop:", err)
		return ExitUsage
	}
	restore := SetRapid(rr)
	defer restore()
	run := c
	run.Seed = rapidUint("seed") // the base seed SetRapid set: given, or drawn
	for _, x := range c.extra {
		if x.parsed == nil {
			continue
		}
		if err := x.parsed(run); err != nil {
			fmt.Fprintln(os.Stderr, "ptxprop:", err)
			return ExitUsage
		}
	}
	if c.noReport {
		c.Report = "off"
	}
	r := newRunner(c, os.Stdout)
	r.shard = sh
	r.reproCmd, r.cmdline = goTestCommand(os.Args, moduleRoot())
	r.open()
	current.Store(r)
	defer current.Store(nil)
	stopSignals := r.handleSignals(os.Exit)
	defer stopSignals()
	stopTimers := r.arm()
	code := m.Run()
	stopTimers()
	for _, f := range c.cleanups {
		f()
	}
	return r.finish(code)
}

// T returns the TB through which a test's (or benchmark's) contracts reach the run Main
// started.
func T(t testing.TB) properties.TB {
	t.Helper()
	r := current.Load()
	if r == nil {
		t.Fatal("suite.T needs the run suite.Main starts: func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }")
	}
	if cause := r.stopCause(); cause != nil {
		// A test that starts after the run ended does nothing: its
		// predictions are reported not started.
		t.Skipf("not started: %v", cause)
	}
	if r.spread == nil {
		return &testTB{TB: t, cfg: &r.pcfg}
	}
	a := r.spread.assign(t.Name(), r.openPrivate)
	t.Cleanup(func() { r.spread.release(a) })
	return &testTB{TB: t, cfg: &a.cfg}
}

// testTB is a *testing.T that carries its run's Config.
type testTB struct {
	testing.TB
	cfg *properties.Config
}

func (t *testTB) Config() *properties.Config { return t.cfg }

// Job is one named contract run for Run.
type Job struct {
	Name string
	Run  func(t properties.TB)
	// Prediction is the ID the job checks, Subject what it checks it on
	// (a binding's name: outcomes are kept per subject, and the report's
	// entry is "ID@Subject" with its binding field set) and Kernels the
	// names, in Config.Kernels, of the kernels it runs. When every job of a
	// Run names its Prediction, the report lists exactly the jobs'
	// predictions, not every registered one.
	Prediction, Subject string
	Kernels             []string
}

// runMu serialises Runs and RunContracts: rapid's settings are the
// process's (see SetRapid).
var runMu sync.Mutex

// Run runs jobs as a ptxprop run outside go test (the ptxprop command runs
// contracts from a binding file this way), at most GOMAXPROCS at a time:
// it opens the device c names, runs every job on a TB that is not a
// *testing.T, writes the report to c.Report unless it is "off" and returns
// it. Notices, progress and the summary go to c.Output. rapid writes no
// fail files: a failure's reproduction is c.Command with the failing
// check's -ptxprop.seed. Cancelling ctx ends the run as a deadline does (use
// signal.NotifyContext for Ctrl-C); the error then says why. A job that
// fails outside any prediction is an error too; falsified predictions are
// not: they are in the report.
func Run(ctx context.Context, c Config, jobs []Job) (*reports.Report, error) {
	runMu.Lock()
	defer runMu.Unlock()
	initTesting()
	if err := checkShares(c); err != nil {
		return nil, err
	}
	rr, sh, err := shardRapid(c, rapidForRun(c, os.LookupEnv).with(c.Rapid), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	// Not into the caller's testdata/ (the seed replays), unless a failure
	// database keeps the shrunk input: it then removes rapid's file.
	rr.NoFailFile = c.FailDB == ""
	restore := SetRapid(rr)
	defer restore()
	out := c.Output
	if out == nil {
		out, c.Progress = io.Discard, 0 // nothing printed: not even to the terminal
	}
	r := newRunner(c, out)
	r.shard = sh
	r.cmdline, r.outside, r.jobs = os.Args, true, jobs
	r.open()
	stopCtx := context.AfterFunc(ctx, func() { r.stop(context.Cause(ctx)) })
	defer stopCtx()
	stopTimers := r.arm()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		tokens = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	for _, j := range jobs {
		wg.Add(1)
		tokens <- struct{}{}
		go func() {
			defer func() { <-tokens; wg.Done() }()
			cfg := r.pcfg
			if r.spread != nil {
				a := r.spread.assign(j.Name, r.openPrivate)
				defer r.spread.release(a)
				cfg = a.cfg
			}
			cfg.Recorder = r.subject(j.Subject)
			if cfg.FailDB != nil {
				db := *cfg.FailDB
				db.Binding = j.Subject
				cfg.FailDB = &db
			}
			q := properties.RunQuiet(j.Name, cfg, j.Run)
			if q.Failed() && !recordedBy(cfg.Recorder, j.Name) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s failed outside its predictions: %s", j.Name, strings.Join(q.Logs(), "; ")))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	stopTimers()
	rep, err := r.report()
	if err != nil {
		errs = append(errs, err)
	}
	if cause := r.stopCause(); cause != nil {
		errs = append(errs, cause)
	}
	if c.Summary && rep != nil {
		reports.Summary(out, rep)
	}
	r.closeDevice()
	return rep, errors.Join(errs...)
}

// initTesting makes the testing package usable outside go test: rapid
// calls testing.Short, which panics unless the testing flags are registered
// (testing.Init, a no-op when done) and the command line parsed. A program
// that has not parsed its flags yet is parsed with no arguments, which
// leaves every flag at its value.
func initTesting() {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil) // no arguments: cannot fail
	}
}

// recordedBy reports whether some outcome of rec came from the run named name.
func recordedBy(rec *outcome.Recorder, name string) bool {
	for _, o := range rec.Outcomes() {
		for _, n := range o.Runs {
			if n == name {
				return true
			}
		}
	}
	return false
}

func newRunner(c Config, out io.Writer) *runner {
	if c.Coverage && c.cov == nil {
		c.cov = emu.NewCoverage()
	}
	r := &runner{cfg: c, out: out, start: time.Now(), cpuStart: ProcessCPU(), rec: &outcome.Recorder{}, id: reports.NewRunID(), reproCmd: c.Command}
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	r.rec.Repro, r.rec.Rerun = r.repro, r.rerunChecks
	return r
}

// open opens the run's devices; without them, device predictions are
// skipped with the reason.
func (r *runner) open() {
	devs, note, err := OpenDevices(r.cfg)
	if note != "" {
		fmt.Fprintln(r.out, note)
	}
	var first cudart.Device
	if len(devs) > 0 {
		first = devs[0]
	}
	r.devs = devs
	r.pcfg = ContractConfig(r.cfg, first)
	r.pcfg.Recorder, r.pcfg.Context = r.rec, r.ctx
	r.pcfg.Loops = rapidLoops{r.cfg.Loops}
	r.pcfg.Seed = rapidUint("seed") // set by SetRapid before the runner opens
	r.pcfg.Shard, r.pcfg.FailDB = r.shardAndFailDB()
	if err != nil {
		r.pcfg.NoDevice = err.Error()
		return
	}
	if first != nil {
		r.watchdog = first.Options().Watchdog
	}
	r.spread = newSpread(devs, r.pcfg)
}

// openPrivate opens a fresh context on device ordinal of backend, for a
// contract that needs one of its own; same says backend is the run's.
func (r *runner) openPrivate(backend string, ordinal int, same bool) (cudart.Device, error) {
	return openPrivate(r.cfg, backend, ordinal, same)
}

// ContractConfig returns the properties.Config that contracts of a run of c
// on dev see: its limits and watchdog, and private devices opened as c
// says. Recorder and Context are left for the caller (nil: outcomes go to
// the TB's own recorder, and nothing ends the run early).
func ContractConfig(c Config, dev cudart.Device) properties.Config {
	// A share the setting refuses (outside [0, 1)) gives no search.
	target, _ := properties.NewTargeting(c.Targeted)
	return properties.Config{Device: dev, MaxElements: c.MaxElements, Watchdog: c.Watchdog, Target: target, Guide: guidance(c),
		Open: func(backend string) (cudart.Device, error) {
			if dev != nil && backend == dev.Info().Backend {
				return openPrivate(c, backend, dev.Info().Ordinal, true)
			}
			return openPrivate(c, backend, 0, false)
		}}
}

// openPrivate opens device ordinal of backend as c configures it, for a
// contract's private use; same says backend is the run's.
func openPrivate(c Config, backend string, ordinal int, same bool) (cudart.Device, error) {
	cc := c
	if !same {
		cc.EmuAdversarial, cc.EmuSchedule = 0, 0 // e.g. the emulator PARITY-001 sets beside a GPU
	}
	d, _, err := openOrdinal(cc, backend, ordinal)
	return d, err
}

func (r *runner) closeDevice() {
	for _, d := range r.devs {
		d.Close()
	}
}

// arm starts the deadline and the progress lines.
func (r *runner) arm() (stop func()) {
	var stops []func()
	if d := r.cfg.Deadline; d > 0 {
		t := time.AfterFunc(d, func() {
			r.stop(fmt.Errorf("did not finish within -ptxprop.deadline=%v", d))
		})
		stops = append(stops, func() { t.Stop() })
	}
	if every := progressOutput(r.cfg.Progress, r.out); every > 0 {
		stops = append(stops, r.progress(r.out, every))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// shutdownGrace is how long the run may take to end after the first
// SIGINT or SIGTERM before the process exits anyway: contract runs stop at
// their next check and tests not started skip at once, but a launch that
// hangs until its watchdog, a device that waits for such a kernel at
// Close, or a test that does not heed the stop would otherwise keep the
// terminal for as long as they take.
const shutdownGrace = 5 * time.Second

// handleSignals makes the first SIGINT or SIGTERM end the run, and keeps
// catching both until stop is called, so that a second one — timeout(1)
// signals its child and then the child's whole process group — cannot kill
// the process while it writes the report. A third signal, or the run not
// having ended shutdownGrace after the first, exits the process with
// ExitInterrupted through exit, after writing the report from what is
// known.
func (r *runner) handleSignals(exit func(int)) (stop func()) {
	ch := make(chan os.Signal, 3)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var grace *time.Timer
	var graceMu sync.Mutex
	go func() {
		for n := 1; ; n++ {
			var sig os.Signal
			select {
			case sig = <-ch:
			case <-done:
				return
			}
			name := "SIGTERM"
			if sig == syscall.SIGINT {
				name = "SIGINT"
			}
			switch n {
			case 1:
				r.signaled.Store(true)
				graceMu.Lock()
				grace = time.AfterFunc(shutdownGrace, func() {
					r.abandon(exit, fmt.Sprintf("the run had not ended %v after %s", shutdownGrace, name))
				})
				graceMu.Unlock()
				// The run ends now; the report is written beside the
				// loop, which goes on catching signals meanwhile.
				if cause := fmt.Errorf("interrupted by %s", name); r.end(cause) {
					go r.writePartial(cause, fmt.Sprintf("; the process exits within %v", shutdownGrace))
				}
			case 2:
				fmt.Fprintf(r.out, "ptxprop: %s again: still ending the run (a third signal exits at once)\n", name)
			default:
				go r.abandon(exit, fmt.Sprintf("%s a third time", name))
			}
		}
	}()
	return func() {
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
		signal.Stop(ch)
		close(done)
	}
}

// abandon exits the process with ExitInterrupted without waiting for the
// tests still running: it writes the report from what is known (after any
// write in progress, which completes: the report is replaced by a rename)
// and, unless finish has begun and prints it, the summary.
func (r *runner) abandon(exit func(int), why string) {
	r.abandonMu.Lock() // never unlocked: a second caller waits for the exit
	rep, err := r.report()
	fmt.Fprintf(r.out, "ptxprop: %s: exiting without waiting for the tests still running\n", why)
	if rep != nil && r.cfg.Summary && !r.finishing.Load() {
		fmt.Fprintln(r.out)
		reports.Summary(r.out, rep)
	}
	if err != nil {
		fmt.Fprintln(r.out, "ptxprop:", err)
	} else if path := r.cfg.ReportPath(); path != "" {
		fmt.Fprintf(r.out, "ptxprop: contract report written to %s\n", path)
	}
	exit(ExitInterrupted)
}

// stop ends the run: contract runs end before their next check, and the
// report is written at once from what is known, so that it exists even if a
// launch in progress never returns.
func (r *runner) stop(cause error) {
	if !r.end(cause) {
		return
	}
	wait := ""
	if r.watchdog > 0 {
		wait = fmt.Sprintf(" (a launch in progress returns within the watchdog, -ptxprop.watchdog=%v)", r.watchdog)
	}
	r.writePartial(cause, wait)
}

// end cancels the run's context with cause, and reports whether it was
// this call that did (false: the run had already ended).
func (r *runner) end(cause error) bool {
	if !r.ended.CompareAndSwap(false, true) {
		return false
	}
	r.cancel(cause)
	return true
}

// writePartial says why the run ends and writes the report of what is
// known; wait says how long what is in progress may still take.
func (r *runner) writePartial(cause error, wait string) {
	fmt.Fprintf(r.out, "ptxprop: %v after %v: ending the run; running contracts stop at their next check%s\n", cause, time.Since(r.start).Round(time.Second), wait)
	if path := r.cfg.ReportPath(); path != "" {
		if _, err := r.report(); err != nil {
			fmt.Fprintln(r.out, "ptxprop:", err)
		} else {
			fmt.Fprintf(r.out, "ptxprop: partial contract report written to %s\n", path)
		}
	}
}

func (r *runner) stopCause() error {
	if r.ctx.Err() == nil {
		return nil
	}
	return context.Cause(r.ctx)
}

// finish writes the report after m.Run and returns the exit code.
func (r *runner) finish(code int) int {
	r.finishing.Store(true)
	defer r.closeDevice()
	if len(r.rec.Outcomes()) == 0 && r.stopCause() == nil {
		// Only tests that are no contracts ran (-run picked others, or
		// -bench alone): the report at the path is left as it is.
		if !r.cfg.noReport {
			fmt.Fprintln(r.out, "ptxprop: no contract ran; no report written")
		}
		return code
	}
	rep, err := r.report()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptxprop:", err)
		if code == 0 {
			code = ExitFailed
		}
	}
	if rep != nil && r.cfg.Summary {
		fmt.Fprintln(r.out)
		reports.Summary(r.out, rep)
	}
	if path := r.cfg.ReportPath(); path != "" && err == nil {
		fmt.Fprintf(r.out, "ptxprop: contract report written to %s\n", path)
	}
	if rep != nil && r.cfg.coverageCheck {
		gaps, skip := r.coverageGaps(rep)
		if skip != "" {
			fmt.Fprintf(r.out, "ptxprop: branch coverage not checked: %s\n", skip)
		}
		for _, g := range gaps {
			fmt.Fprintf(os.Stderr, "ptxprop: branch coverage: %s\n", g)
		}
		if len(gaps) > 0 && code == 0 {
			code = ExitFailed
		}
	}
	wall := time.Since(r.start)
	if cpu := ProcessCPU(); cpu > 0 {
		fmt.Fprintln(r.out, "ptxprop:", HostLoad(cpu-r.cpuStart, runtime.GOMAXPROCS(0), wall))
	}
	for _, d := range r.devs {
		load := DeviceLoad(d.Stats(), heldBy(d.Backend()), wall)
		if len(r.devs) > 1 {
			load = strings.Replace(load, "device:", fmt.Sprintf("device %s %d:", d.Info().Backend, d.Info().Ordinal), 1)
		}
		fmt.Fprintln(r.out, "ptxprop:", load)
	}
	if cause := r.stopCause(); cause != nil {
		fmt.Fprintln(r.out, "ptxprop:", cause)
		if r.signaled.Load() {
			return ExitInterrupted
		}
		if code == 0 {
			code = ExitFailed
		}
	}
	return code
}

// report builds the run's report from the outcomes so far (runs still in
// progress as inconclusive, with their checks) and writes it unless the
// report is off.
func (r *runner) report() (*reports.Report, error) {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	out := r.snapshot(r.rec)
	info := cudart.Info{Backend: "emu"}
	if len(r.devs) > 0 {
		info = r.devs[0].Info()
	}
	run := NewRun(info, r.start)
	run.ID, run.CommandLine = r.id, r.cmdline
	run.Shard = r.shard.report()
	run.RapidLoops = len(rapidLoops{r.cfg.Loops}.Plan())
	used := func([]string) []int { return nil }
	if r.spread != nil {
		run.Devices = r.spread.devices()
		used = r.spread.used
	}
	notRun := "not run in this invocation (filtered out by -run, or its test was skipped before recording)"
	if cause := r.stopCause(); cause != nil {
		notRun = "not started before the run ended: " + cause.Error()
		run.Stopped = cause.Error()
	}
	var rep *reports.Report
	if claimed(r.jobs) {
		rep, out = r.jobsReport(run, notRun)
		for _, k := range append(slices.Clone(r.cfg.Kernels), usedKernels(out)...) {
			if rep.Kernel(k.Name) == nil {
				rep.UpsertKernel(k)
			}
		}
	} else {
		rep = buildReport(run, out, r.cfg.Predictions, append(slices.Clone(r.cfg.Kernels), usedKernels(out)...), notRun, r.rerun)
	}
	for i := range rep.Predictions {
		if o, ok := out[rep.Predictions[i].ID]; ok {
			rep.Predictions[i].Devices = used(o.Runs)
		}
	}
	r.addCosts(rep, info)
	r.addCoverage(rep)
	path := r.cfg.ReportPath()
	if path == "" {
		return rep, nil
	}
	if err := writeReport(path, rep, out, r.cfg.Merge); err != nil {
		return rep, fmt.Errorf("writing the contract report: %w", err)
	}
	return rep, nil
}

// snapshot returns rec's outcomes, the runs in progress among them as
// inconclusive with the checks they passed.
func (r *runner) snapshot(rec *outcome.Recorder) map[string]outcome.Outcome {
	snap := &outcome.Recorder{}
	for _, o := range rec.Outcomes() {
		snap.Record(o)
	}
	why := "did not finish"
	if cause := r.stopCause(); cause != nil {
		why = cause.Error()
	}
	for _, l := range rec.Live() {
		n, st := l.Progress()
		snap.Record(outcome.Outcome{ID: l.ID, Status: outcome.Inconclusive, Checks: n, Stats: st,
			Duration: time.Since(l.Start), Runs: []string{l.Name}, Impls: l.Impls,
			Reason: fmt.Sprintf("%s (%s had passed %d checks)", why, l.Name, n)})
	}
	return snap.Outcomes()
}

// usedKernels lists the implementations the outcomes' contract runs
// checked, in the order of their predictions.
func usedKernels(out map[string]outcome.Outcome) []reports.Kernel {
	var ks []reports.Kernel
	for _, id := range slices.Sorted(maps.Keys(out)) {
		ks = append(ks, out[id].Impls...)
	}
	return ks
}

// claimed reports whether every job names its prediction.
func claimed(jobs []Job) bool {
	for _, j := range jobs {
		if j.Prediction == "" {
			return false
		}
	}
	return len(jobs) > 0
}

// jobsReport is the report of a Run whose jobs name their predictions: one
// entry per (subject, prediction), keyed "ID@subject" when there is a
// subject, and the outcomes under those keys.
func (r *runner) jobsReport(run reports.Run, notRun string) (*reports.Report, map[string]outcome.Outcome) {
	rep := reports.New(run)
	ran := map[string]outcome.Outcome{}
	snaps := map[string]map[string]outcome.Outcome{}
	for _, j := range r.jobs {
		p, ok := properties.Lookup(j.Prediction)
		if !ok {
			p = &properties.Prediction{ID: j.Prediction}
		}
		outs, ok := snaps[j.Subject]
		if !ok {
			outs = r.snapshot(r.subject(j.Subject))
			snaps[j.Subject] = outs
		}
		o, ok := outs[j.Prediction]
		rp := PredictionReport(p, o, ok, notRun)
		if ok && len(o.Runs) > 0 {
			rp.Rerun = r.rerun(o.Runs)
		}
		if j.Subject != "" {
			rp.ID, rp.Binding = j.Prediction+"@"+j.Subject, j.Subject
		}
		if j.Kernels != nil {
			rp.Kernels = j.Kernels
		}
		if ok {
			ran[rp.ID] = o
		}
		rep.UpsertPrediction(rp)
	}
	return rep, ran
}

// repro is the Recorder's command that replays a failing contract run.
func (r *runner) repro(name string, seed uint64, failfile string) string {
	if r.outside && r.cfg.Command != "" {
		return r.command(seed, r.oneLoop(false)...)
	}
	args := r.testFlags(reproArgs(name, seed, failfile))
	return strings.Join(append([]string{r.withCommand(args)}, r.oneLoop(failfile != "")...), " ")
}

// oneLoop is the flag that makes a reproduction from a check's seed run one
// rapid loop, whose base seed it is: the failing loop alone, as it ran.
// Always given with a seed, since -ptxprop.loops is not carried (a
// reproduction may run where the default splits the checks otherwise);
// none for a fail file, which the default replays in one loop.
func (r *runner) oneLoop(failfile bool) []string {
	if failfile {
		return nil
	}
	return []string{"-ptxprop.loops=1"}
}

// rerunChecks is the Recorder's command that replays the first checks
// checks of a contract run from the base seed (a run ended at a check
// without shrinking: liveness, set-up).
func (r *runner) rerunChecks(name string, seed uint64, checks int) string {
	if r.outside && r.cfg.Command != "" {
		return r.command(seed, append(r.oneLoop(false), fmt.Sprintf("-ptxprop.checks=%d", checks))...)
	}
	return fmt.Sprintf("%s -rapid.checks=%d", r.repro(name, seed, ""), checks)
}

// caseFlags are the run's settings that may change a contract run's
// outcome and are not at their default (ReplayFlags): every reproduction
// and rerun carries them, whether a flag or the environment set them.
func (r *runner) caseFlags() []string { return ReplayFlags(r.cfg) }

// command is the command line of a Run's cfg.Command: its flags, the seed
// (0: none) and cfg.CommandArgs. The failing check's seed as the base seed
// makes it the first check of the rerun: the failure replays.
func (r *runner) command(seed uint64, flags ...string) string {
	parts := append([]string{r.cfg.Command}, r.caseFlags()...)
	if seed != 0 {
		parts = append(parts, fmt.Sprintf("-ptxprop.seed=%d", seed))
	}
	parts = append(parts, flags...)
	for _, a := range r.cfg.CommandArgs {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// rerun is the command that runs the named contract runs again.
func (r *runner) rerun(runs []string) string {
	var loops []string
	if r.cfg.Loops != 0 { // given: the same split of the checks
		loops = []string{fmt.Sprintf("-ptxprop.loops=%d", r.cfg.Loops)}
	}
	if r.outside && r.cfg.Command != "" {
		return r.command(0, loops...)
	}
	pattern := runPattern(runs[0])
	if len(runs) > 1 {
		var names []string
		for _, n := range runs {
			if strings.Contains(n, "/") { // subtests: the first run alone
				names = nil
				break
			}
			if q := regexp.QuoteMeta(n); !slices.Contains(names, q) {
				names = append(names, q)
			}
		}
		if len(names) > 1 {
			slices.Sort(names)
			pattern = "^(" + strings.Join(names, "|") + ")$"
		}
	}
	return strings.Join(append([]string{r.withCommand(r.testFlags("-run " + shellQuote(pattern)))}, loops...), " ")
}

// withCommand is the go test command (or the test binary; none when
// Config.Command is empty outside Main) with args and the run's settings
// that may change the outcome (caseFlags).
func (r *runner) withCommand(args string) string {
	parts := []string{args}
	if r.reproCmd != "" {
		parts = []string{r.reproCmd, args}
	}
	return strings.Join(append(parts, r.caseFlags()...), " ")
}

// testFlags spells go test's -run and -rapid.X for a test binary run
// directly (make gpu-bin's), which knows them as -test.run and -rapid.X.
func (r *runner) testFlags(args string) string {
	if r.reproCmd == "" || strings.HasPrefix(r.reproCmd, "go test ") {
		return args
	}
	return strings.Replace(args, "-run ", "-test.run ", 1)
}

// goTestCommand returns the command prefix that reruns this test binary's
// package ("go test ./properties", from the module root) and the command
// line to record: that prefix and the binary's arguments, less those go
// test adds itself. A binary built once and run elsewhere (make gpu-bin)
// is named as it was run.
func goTestCommand(args []string, root string) (prefix string, cmdline []string) {
	if len(args) == 0 {
		return "", nil
	}
	bin := args[0]
	if !strings.Contains(filepath.ToSlash(bin), "/go-build") {
		return bin, args
	}
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(root, wd); err == nil && !strings.HasPrefix(rel, "..") {
			pkg = "./" + filepath.ToSlash(rel)
		}
	}
	if pkg == "./." {
		pkg = "."
	}
	prefix = "go test " + pkg
	cmdline = []string{"go", "test", pkg}
	for _, a := range args[1:] {
		switch {
		case a == "-test.paniconexit0", strings.HasPrefix(a, "-test.timeout="), strings.HasPrefix(a, "-test.gocoverdir="):
			continue
		}
		cmdline = append(cmdline, a)
	}
	return prefix, cmdline
}
