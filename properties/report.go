package properties

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/reports"
)

// ReportFlag is where TestMain writes the contract report.
var ReportFlag = flag.String("report", "", "contract report path (default: out/contract-report.json at the module root)")

// DeadlineFlag bounds a run: when it passes, the report is written with the
// predictions that finished and the rest marked inconclusive, and the process
// exits 1 — a long run on a shared machine still leaves its evidence.
var DeadlineFlag = flag.Duration("deadline", 0, "write the report and exit after this long (0: no deadline)")

// MaxElementsFlag caps the elements of a generated tensor (0: the backend's
// default limits).
var MaxElementsFlag = flag.Int("max-elements", 0, "cap on the elements of one generated tensor (0: backend default)")

// KernelsForReport lists the kernels the report's kernels[] section names; it
// is set by the package that knows them (the test binary wires in package
// kernels) so that properties itself stays independent of them.
var KernelsForReport func() []reports.Kernel

// ReportPath returns the -report flag or the default: out/contract-report.json
// at the root of the module containing the working directory.
func ReportPath() string {
	if *ReportFlag != "" {
		return *ReportFlag
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("out", "contract-report.json")
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "out", "contract-report.json")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "out", "contract-report.json")
		}
	}
}

// BuildCommit is the commit the binary was built from, set at link time
// (make gpu-bin: -ldflags -X …/properties.BuildCommit=<commit>[-dirty]): a
// test binary carried to another machine cannot ask git there, where the
// checkout, if any, may be at another commit. Empty in a plain go test
// build, which runs in the checkout it was built from.
var BuildCommit string

// commit returns the commit of the code under test: BuildCommit, else the
// checkout's HEAD, marked -dirty when tracked files differ from it.
func commit() string {
	if BuildCommit != "" {
		return BuildCommit
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

// NewRun describes this process's run for the report: backend and device
// facts from info, rapid's seed and checks, the commit (see commit).
func NewRun(info cudart.Info, start time.Time) reports.Run {
	backend := reports.BackendEmu
	if info.Backend == "gpu" {
		backend = reports.BackendGPU
	}
	run := reports.NewRun(backend)
	run.Start = start.UTC()
	run.End = time.Now().UTC()
	run.Device = info.Name
	run.ComputeCapability = info.ComputeCapability
	run.DriverVersion = info.Driver
	run.CUDAVersion = info.CUDA
	run.SMCount = info.SMs
	if info.CopyBandwidth > 0 {
		bw := info.CopyBandwidth
		run.CopyBandwidth = &bw
	}
	if f := flag.Lookup("rapid.seed"); f != nil {
		if s, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil {
			run.RapidSeed = &s
		}
	}
	if f := flag.Lookup("rapid.checks"); f != nil {
		run.RapidChecks, _ = strconv.Atoi(f.Value.String())
	}
	run.GitCommit = commit()
	return run
}

// PredictionReport converts the registered prediction p and its outcome (ok
// false when it never ran) into the report's form.
func PredictionReport(p *Prediction, o Outcome, ok bool, notRun string) reports.Prediction {
	rp := reports.Prediction{ID: p.ID, Title: p.Title, Statement: p.Statement, Kernels: p.Kernels}
	if !ok {
		rp.Status = reports.Skipped
		rp.Reason = notRun
		return rp
	}
	rp.Status = reports.PredictionStatus(o.Status)
	rp.Reason = o.Reason
	rp.Checks = o.Checks
	rp.ChecksFailed = o.Failed
	rp.Duration = o.Duration.Seconds()
	if o.Duration > 0 && o.Checks > 0 {
		rp.ChecksPerSecond = float64(o.Checks) / o.Duration.Seconds()
	}
	if len(o.Counterexample) > 0 {
		ce := &reports.Counterexample{}
		for _, d := range o.Counterexample {
			label, value, _ := strings.Cut(d, ": ")
			ce.Draws = append(ce.Draws, reports.Draw{Label: label, Value: value})
		}
		rp.Counterexample = ce
	}
	if o.Repro != "" {
		rp.Reproduction = &reports.Reproduction{Command: o.Repro, FailFile: o.Failfile}
	}
	if o.Stats.Compared > 0 {
		es := &reports.ErrorStats{MaxAbs: new(o.Stats.MaxAbs), MaxRel: new(o.Stats.MaxRel), MaxULP: new(o.Stats.MaxULP),
			MaxRatio: o.Stats.MaxRatio, ToleranceFormula: p.Tolerance}
		if o.Stats.NaiveMaxRatio > 0 {
			r := o.Stats.MaxRatio / o.Stats.NaiveMaxRatio
			es.NaiveRatio = &r
		}
		rp.ErrorStats = es
	}
	if o.NonDeterministic != "" {
		rp.NonDeterministic = o.NonDeterministic
		rp.SetFlag(reports.FlagNonDeterministic)
	}
	return rp
}

// WriteReport writes every registered prediction — run or not — with the
// outcomes of this process into the report at path, keeping the mutants a
// falsify run recorded there. notRun is the reason given to predictions that
// did not run (e.g. filtered out by -run).
func WriteReport(path string, run reports.Run, notRun string) error {
	out := Outcomes()
	return reports.Update(path, func(r *reports.Report) error {
		r.Run = run
		r.Predictions = nil
		for _, p := range All() {
			o, ok := out[p.ID]
			if strings.HasPrefix(p.ID, "TEST-") || (strings.HasPrefix(p.ID, "BENCH-") && !ok) {
				continue // the harness's own test, or a benchmark that did not run
			}
			rp := PredictionReport(p, o, ok, notRun)
			r.UpsertPrediction(rp)
		}
		if KernelsForReport != nil {
			r.Kernels = KernelsForReport()
		}
		return nil
	})
}

// ProgressFlag sets how often a run prints its progress.
var ProgressFlag = flag.Duration("progress", time.Minute, "print the checks each contract run in progress has passed this often (0: never)")

// StartProgress prints, every -progress, the contract runs in progress with
// the checks each has passed, and how busy the device has been, so that a
// long run (a soak) shows how far it has got. It stops when the returned
// function is called.
func StartProgress(w io.Writer, start time.Time) (stop func()) {
	if *ProgressFlag <= 0 {
		return func() {}
	}
	t := time.NewTicker(*ProgressFlag)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			runs, n := Progress()
			if n == 0 {
				continue
			}
			of := ""
			if f := flag.Lookup("rapid.checks"); f != nil {
				of = " of " + f.Value.String()
			}
			line := fmt.Sprintf("ptxprop: %v: %d contract runs in progress (checks passed%s): %s", time.Since(start).Round(time.Second), n, of, runs)
			if d, err := Device(); err == nil {
				line += "; " + DeviceLoad(d.Stats(), time.Since(start))
			}
			fmt.Fprintln(w, line)
		}
	}()
	return func() {
		t.Stop()
		close(done)
	}
}

// StartDeadline arms -deadline: when it passes, the report is written from the
// outcomes recorded so far (predictions still running are marked
// inconclusive, with the checks they had passed and those checks' error
// statistics; those that never started, skipped) and the process exits with
// status 1.
func StartDeadline(w io.Writer, start time.Time) {
	if *DeadlineFlag <= 0 {
		return
	}
	time.AfterFunc(*DeadlineFlag, func() {
		info := cudart.Info{Backend: "emu"}
		if d, err := Device(); err == nil {
			info = d.Info()
		}
		path := ReportPath()
		RecordLive(fmt.Sprintf("did not finish within -deadline=%v", *DeadlineFlag))
		// Every contract test starts at once (they run in parallel) and is
		// live from then on: one that is neither live nor done never ran.
		notRun := fmt.Sprintf("not run in this invocation (filtered out by -run or -skip, or not started within -deadline=%v)", *DeadlineFlag)
		if err := WriteReport(path, NewRun(info, start), notRun); err != nil {
			fmt.Fprintln(w, "ptxprop:", err)
		}
		fmt.Fprintf(w, "ptxprop: deadline %v reached; partial contract report written to %s\n", *DeadlineFlag, path)
		if d, err := Device(); err == nil {
			fmt.Fprintln(w, "ptxprop:", DeviceLoad(d.Stats(), time.Since(start)))
		}
		pprof.StopCPUProfile() // -test.cpuprofile: flush what was sampled before exiting
		os.Exit(1)
	})
}

// Finish is what a TestMain calls after m.Run: it writes the report, prints
// the summary and where the report went. It returns an error only when the
// report could not be written.
func Finish(w io.Writer, start time.Time) error {
	info := cudart.Info{Backend: "emu"}
	if d, err := Device(); err == nil {
		info = d.Info()
	}
	path := ReportPath()
	if err := WriteReport(path, NewRun(info, start), "not run in this invocation (filtered out by -run, or its test was skipped before recording)"); err != nil {
		return fmt.Errorf("ptxprop: writing the contract report: %w", err)
	}
	r, err := reports.Read(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := reports.Summary(w, r); err != nil {
		return err
	}
	fmt.Fprintf(w, "ptxprop: contract report written to %s\n", path)
	if d, err := Device(); err == nil {
		fmt.Fprintln(w, "ptxprop:", DeviceLoad(d.Stats(), time.Since(start)))
	}
	return nil
}

// DeviceLoad describes how busy a device was over wall: its launches and
// hand-offs, the share of the wall time it spent in calls (the serial part of
// a run), and how long callers waited for it.
func DeviceLoad(s cudart.Stats, wall time.Duration) string {
	per := time.Duration(0)
	if s.Handoffs > 0 {
		per = s.Busy / time.Duration(s.Handoffs)
	}
	return fmt.Sprintf("device: %d launches, %d calls (%v each), busy %v = %.0f%% of %v, callers waited %v for it",
		s.Launches, s.Handoffs, per.Round(time.Microsecond), s.Busy.Round(time.Millisecond),
		100*s.Busy.Seconds()/wall.Seconds(), wall.Round(time.Millisecond), s.LockWait.Round(time.Millisecond))
}
