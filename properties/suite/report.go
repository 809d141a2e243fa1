package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/reports"
)

// DefaultReportPath is out/contract-report.json at the root of the module
// containing the working directory (or in the working directory, outside a
// module): where go test, make and the ptxprop command all look.
func DefaultReportPath() string {
	return filepath.Join(moduleRoot(), "out", "contract-report.json")
}

// moduleRoot returns the directory holding the go.mod above the working
// directory, or the working directory.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// ReportPath resolves c.Report: "" is DefaultReportPath(), "off" is none ("").
func (c Config) ReportPath() string {
	switch c.Report {
	case "":
		return DefaultReportPath()
	case "off":
		return ""
	}
	return c.Report
}

// BuildCommit is the commit the binary was built from, set at link time
// (make gpu-bin: -ldflags -X …/properties/suite.BuildCommit=<commit>[-dirty]):
// a test binary carried to another machine cannot ask git there. Empty in a
// plain go test build, which runs in the checkout it was built from.
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

// NewRun describes a run for the report: backend and device facts from
// info, rapid's seed and checks, the commit and the command line.
func NewRun(info cudart.Info, start time.Time) reports.Run {
	run := reports.NewRun(reportBackend(info))
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
	seed := rapidUint("seed")
	run.RapidSeed = &seed
	run.RapidChecks = rapidInt("checks")
	run.GitCommit = commit()
	return run
}

// PredictionReport converts the registered prediction p and its outcome (ok
// false when it never ran) into the report's form.
func PredictionReport(p *properties.Prediction, o outcome.Outcome, ok bool, notRun string) reports.Prediction {
	rp := reports.Prediction{ID: p.ID, Title: p.Title, Statement: p.Statement, Kernels: p.Kernels}
	if !ok {
		rp.Status = reports.NotRun
		rp.Reason = notRun
		return rp
	}
	rp.Status = reports.PredictionStatus(o.Status)
	rp.Reason = o.Reason
	if len(o.Failures) > 1 {
		// Every failing run, each with its own ratio.
		var parts []string
		for _, f := range o.Failures {
			parts = append(parts, failureText(f))
		}
		rp.Reason = fmt.Sprintf("%d contract runs failed: %s", len(o.Failures), strings.Join(parts, "; "))
	} else if len(o.Failures) == 1 && o.Failures[0].Ratio > 0 {
		rp.Reason = failureText(o.Failures[0])
	}
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
	if s := o.Stats; s.Compared > 0 || s.Scalars > 0 || s.MaxRatio > 0 {
		// A maximum over no comparison is no measurement: left out.
		es := &reports.ErrorStats{MaxRatio: s.MaxRatio, ToleranceFormula: p.Tolerance}
		if s.Compared > 0 {
			es.MaxAbs = new(s.MaxAbs)
		}
		if s.RelCompared > 0 {
			es.MaxRel, es.MaxULP = new(s.MaxRel), new(s.MaxULP)
		}
		if o.Stats.NaiveMaxRatio > 0 {
			r := o.Stats.MaxRatio / o.Stats.NaiveMaxRatio
			es.NaiveRatio = &r
		}
		for k, b := range s.Sizes {
			if b.Checks > 0 {
				lo := 1 << k
				es.BySize = append(es.BySize, reports.SizeStat{SizeMin: lo, SizeMax: 2*lo - 1, Checks: b.Checks, MaxRatio: b.MaxRatio})
			}
		}
		rp.ErrorStats = es
	}
	rp.Search = searchReport(o.Search)
	if o.NonDeterministic != "" {
		rp.NonDeterministic = o.NonDeterministic
		rp.SetFlag(reports.FlagNonDeterministic)
	}
	return rp
}

func failureText(f outcome.Failure) string {
	s := f.Run + ": " + f.Reason
	if len(f.Impls) > 0 {
		s = f.Run + " (" + strings.Join(f.Impls, ", ") + "): " + f.Reason
	}
	if f.Ratio > 0 && !strings.Contains(f.Reason, "ratio") {
		s += fmt.Sprintf(" (err/tol %.4g)", f.Ratio)
	}
	return s
}

// buildReport makes the report of one run: every prediction a contract run
// recorded, and each of expect (the predictions the run's tests check:
// Config.Predictions) that none did, as not run (notRun is why), except the
// harness's self-tests. kernels is the report's kernels section: a
// prediction's kernels are the implementations its contract runs checked,
// else those of its registered kernels that the section lists. rerun, when
// not nil, gives the command that reruns the named contract runs.
func buildReport(run reports.Run, out map[string]outcome.Outcome, expect []string, kernels []reports.Kernel, notRun string, rerun func(runs []string) string) *reports.Report {
	r := reports.New(run)
	for _, k := range kernels {
		r.UpsertKernel(k)
	}
	ids := slices.Collect(maps.Keys(out))
	for _, id := range expect {
		if _, ok := out[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if strings.HasPrefix(id, "TEST-") {
			continue
		}
		p, ok := properties.Lookup(id)
		if !ok {
			p = &properties.Prediction{ID: id}
		}
		o, ok := out[id]
		rp := PredictionReport(p, o, ok, notRun)
		rp.Kernels = creditedKernels(r, p, o)
		if ok && rerun != nil && len(o.Runs) > 0 {
			rp.Rerun = rerun(o.Runs)
		}
		r.UpsertPrediction(rp)
	}
	return r
}

// creditedKernels names the kernels of r that prediction p's outcome o is
// about: the implementations its contract runs checked, else those of p's
// registered kernels that r lists (ptxprop's own, in its own run).
func creditedKernels(r *reports.Report, p *properties.Prediction, o outcome.Outcome) []string {
	if len(o.Impls) > 0 {
		return outcome.ImplNames(o.Impls)
	}
	var ks []string
	for _, k := range p.Kernels {
		if r.Kernel(k) != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// writeReport writes r to path: replacing what is there, or, with merge,
// merging into the report of the same run (commit and backend) already
// there. A file it may not merge into is left as it is, r is written beside
// it and the error names both.
func writeReport(path string, r *reports.Report, ran map[string]outcome.Outcome, merge bool) error {
	if !merge {
		return reports.Write(path, r)
	}
	err := reports.Update(path, func(old *reports.Report) error {
		if old.Run.Start.IsZero() {
			*old = *r
			return nil
		}
		if why := differentRun(old.Run, r.Run); why != "" {
			return errRefuse{why}
		}
		if err := old.Run.AddDevices(r.Run.Devices); err != nil {
			return errRefuse{"its devices are not this run's: " + err.Error()}
		}
		old.Run.End = r.Run.End
		old.Run.Notes = append(old.Run.Notes, "merged: "+strings.Join(r.Run.CommandLine, " "))
		for _, p := range r.Predictions {
			if _, ok := ran[p.ID]; ok || old.Prediction(p.ID) == nil {
				old.UpsertPrediction(p)
			}
		}
		for _, k := range r.Kernels { // those the predictions taken name
			if old.Kernel(k.Name) == nil {
				old.UpsertKernel(k)
			}
		}
		mergeCosts(old, r.Costs)
		for _, c := range r.Coverage {
			old.AddCoverage(c)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var refuse errRefuse
	why := "it cannot be read: " + err.Error()
	if errors.As(err, &refuse) {
		why = refuse.why
	} else if errors.Is(err, fs.ErrPermission) {
		return err
	}
	alt := besidePath(path, r.Run.Start)
	if werr := reports.Write(alt, r); werr != nil {
		return fmt.Errorf("not merging into %s (%s), and writing this run's report to %s failed: %w", path, why, alt, werr)
	}
	return fmt.Errorf("not merging into %s: %s; it is left as it was and this run's report is %s", path, why, alt)
}

type errRefuse struct{ why string }

func (e errRefuse) Error() string { return e.why }

// differentRun says why a report of run a may not take the predictions of
// run b ("" when it may): another commit or another backend or device.
func differentRun(a, b reports.Run) string {
	switch {
	case a.GitCommit != b.GitCommit:
		return fmt.Sprintf("it is the report of commit %q, this run is of %q", a.GitCommit, b.GitCommit)
	case a.Backend != b.Backend || a.Device != b.Device:
		return fmt.Sprintf("it is the report of a run on %s %s, this run is on %s %s", a.Backend, a.Device, b.Backend, b.Device)
	}
	return ""
}

// besidePath is where a report that may not go to path is written:
// path's name with the run's start time inserted before the extension.
func besidePath(path string, start time.Time) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + start.UTC().Format("20060102T150405Z") + ext
}

// DeviceLoad describes how busy a device was over wall: its launches and
// hand-offs, the share of the wall time some call was at it, how long
// callers waited for it and, where the backend has a one-at-a-time
// section (held > 0: the GPU backend's, see cudart/gpu), the share of the
// wall time that section was held. A share near 100% names what limits a
// run: a section held all along is its serial part, while calls in
// progress all along may overlap (a GPU batch waits for the device
// outside the section).
func DeviceLoad(s cudart.Stats, held, wall time.Duration) string {
	per := time.Duration(0)
	if s.Handoffs > 0 {
		per = s.Busy / time.Duration(s.Handoffs)
	}
	line := fmt.Sprintf("device: %d launches, %d calls (%v each), busy %v = %.0f%% of %v, callers waited %v for it",
		s.Launches, s.Handoffs, per.Round(time.Microsecond), s.Busy.Round(time.Millisecond),
		100*s.Busy.Seconds()/wall.Seconds(), wall.Round(time.Millisecond), s.LockWait.Round(time.Millisecond))
	if held > 0 {
		line += fmt.Sprintf("; one-at-a-time section held %v = %.0f%%", held.Round(time.Millisecond), 100*held.Seconds()/wall.Seconds())
	}
	return line
}

// HostLoad describes the process's CPU time over wall against the cores
// Go runs on: near 100%, the host's CPUs limit the run.
func HostLoad(cpu time.Duration, procs int, wall time.Duration) string {
	return fmt.Sprintf("host: %v of CPU = %.0f%% of %d cores over %v", cpu.Round(time.Second),
		100*cpu.Seconds()/(float64(procs)*wall.Seconds()), procs, wall.Round(time.Millisecond))
}

// heldBy is how long b's one-at-a-time section has been held, for a
// backend that tells (the GPU backend's Held), else 0.
func heldBy(b cudart.Backend) time.Duration {
	if h, ok := b.(interface{ Held() time.Duration }); ok {
		return h.Held()
	}
	return 0
}

// searchReport is the report's form of a targeted search's result.
func searchReport(s *outcome.Search) *reports.Search {
	if s == nil {
		return nil
	}
	worst := func(w outcome.Worst) *reports.SearchWorst {
		if w.Ratio <= 0 {
			return nil
		}
		return &reports.SearchWorst{Ratio: w.Ratio, Input: w.Input, Replay: w.Repro, Run: w.Run}
	}
	return &reports.Search{Share: s.Share, TargetedChecks: s.TargetedChecks, Improved: s.Improved,
		Random: worst(s.Random), Targeted: worst(s.Targeted)}
}
