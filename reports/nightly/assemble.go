// Package nightly assembles the nightly job's one contract report from what
// its stages leave in a directory (scripts/gpu-nightly.sh writes them;
// ptxprop nightly-merge calls Assemble): the property suite's, the
// mutation analysis's and the foreign bindings' reports, merged; the
// emulator's own checks and compute-sanitizer's findings as the sanitizer
// section; the kernel benchmarks beside torch as ratios; the environment
// and every stage's outcome, a skipped stage with its reason.
package nightly

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

// The files of a nightly directory. Each is optional: a stage that did not
// run leaves none, and its line in StagesFile says why.
const (
	StagesFile        = "stages.tsv"           // one stage a line: name, status, exit status, seconds, reason (tab-separated)
	EnvironmentFile   = "environment.txt"      // KEY=VALUE lines: tool versions, settings
	ContractReport    = "contract-report.json" // the property suite on the device
	MutantsReport     = "mutants-report.json"  // the mutation analysis (kill matrix)
	ForeignReport     = "foreign-report.json"  // ptxprop verify over the committed bindings
	EmuReport         = "emu-report.json"      // the property suite on the emulator with its checks
	EmuForeignReport  = "emu-foreign-report.json"
	BenchLog          = "bench.log"           // go test -bench output of package kernels
	TorchFile         = "torch-kernels.jsonl" // scripts/torch_baseline.py --kernels
	SanitizerDir      = "sanitizer"           // <tool>-<target>.log per compute-sanitizer run
	PlantedTarget     = "planted"             // the target whose bugs are planted
	EmuTool           = "emulator"            // the sanitizer tool name of the emulator's checks (emu-checks stage)
	plantedOOBKernel  = "planted_oob_write"
	plantedRaceKernel = "planted_smem_race"
)

// Stage is one stage's outcome.
type Stage struct {
	Name    string
	Status  string // ok, failed or skipped
	Exit    int
	Seconds int
	Reason  string // why it failed or was skipped
}

func (s Stage) String() string {
	switch s.Status {
	case "skipped":
		return "skipped: " + s.Reason
	case "ok":
		return fmt.Sprintf("ok in %d s", s.Seconds)
	}
	t := fmt.Sprintf("%s (exit %d) after %d s", s.Status, s.Exit, s.Seconds)
	if s.Reason != "" {
		t += ": " + s.Reason
	}
	return t
}

// Result is what Assemble made: the report, and the problems that make
// the nightly fail beyond the stages' own exit statuses (a report that
// could not be merged, a planted bug not found).
type Result struct {
	Report   *reports.Report
	Stages   []Stage
	Problems []string
}

// Assemble reads the nightly directory dir and returns its one report. It
// fails only when no stage left a contract report to build on.
func Assemble(dir string) (*Result, error) {
	res := &Result{}
	stages, err := readStages(filepath.Join(dir, StagesFile))
	if err != nil {
		return nil, err
	}
	res.Stages = stages

	// The device's reports are parts of one run (one commit, one device):
	// merged as shards are, the mutants' placeholders (not_run) giving way
	// to the suite's verdicts.
	var base *reports.Report
	var parts []string
	for _, name := range []string{ContractReport, ForeignReport, MutantsReport} {
		r, err := readOptional(filepath.Join(dir, name))
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
			continue
		}
		if r == nil {
			continue
		}
		if base == nil {
			base, parts = r, []string{name}
			continue
		}
		m, err := reports.Merge(base, r)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s not merged: %v", name, err))
			continue
		}
		base, parts = m, append(parts, name)
	}
	if base == nil {
		// The emulator stage alone (NIGHTLY_BACKEND=emu without a contract
		// stage) still gives a report.
		for _, name := range []string{EmuReport, EmuForeignReport} {
			if r, err := readOptional(filepath.Join(dir, name)); err == nil && r != nil {
				base, parts = r, []string{name}
				break
			}
		}
	}
	if base == nil {
		return nil, fmt.Errorf("nightly: %s holds no contract report (%s, %s or %s): nothing to build on", dir, ContractReport, ForeignReport, MutantsReport)
	}
	out := base
	if len(out.Mutants) > 0 {
		// Only our kernels' predictions can kill our mutants: a foreign
		// binding's verdict is neither proven nor unproven by them.
		out.MarkUnproven()
		for i := range out.Predictions {
			if out.Predictions[i].Binding != "" {
				out.Predictions[i].ClearFlag(reports.FlagUnproven)
			}
		}
	}
	if c, err := readOptional(filepath.Join(dir, ContractReport)); err == nil && c != nil {
		out.Run.RapidChecks = c.Run.RapidChecks // the suite's checks per prediction, not a sum over the parts
		out.Run.CommandLine = c.Run.CommandLine
	}
	out.Run.Notes = append(out.Run.Notes, "nightly: merged "+strings.Join(parts, ", "))
	if out.Run.Environment == nil {
		out.Run.Environment = map[string]string{}
	}
	env, err := readEnvironment(filepath.Join(dir, EnvironmentFile))
	if err != nil {
		return nil, err
	}
	for k, v := range env {
		out.Run.Environment[k] = v
	}
	// The night's span: from its start (the script records it) through
	// its stages, which run one after the other; the parts' own reports
	// span only the stages that wrote them.
	if start, err := time.Parse(time.RFC3339, env["nightly.start"]); err == nil {
		total := 0
		for _, s := range stages {
			total += s.Seconds
		}
		out.Run.Start = start
		out.Run.End = start.Add(time.Duration(total) * time.Second)
	}
	for _, s := range stages {
		out.Run.Environment["stage."+s.Name] = s.String()
		if s.Status == "skipped" {
			out.Run.Notes = append(out.Run.Notes, fmt.Sprintf("stage %s skipped: %s", s.Name, s.Reason))
		}
	}

	if err := benchmarks(dir, out); err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	san := &reports.Sanitizer{}
	for _, name := range []string{EmuReport, EmuForeignReport} {
		if skip := slices.Contains(parts, name); skip {
			continue // it is the report itself: its verdicts are there
		}
		r, err := readOptional(filepath.Join(dir, name))
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
			continue
		}
		if r == nil {
			continue
		}
		if !slices.Contains(san.Tools, EmuTool) {
			san.Tools = append(san.Tools, EmuTool)
		}
		san.Findings = append(san.Findings, EmuFindings(r)...)
		out.Run.Environment[EmuTool+"."+strings.TrimSuffix(name, ".json")] = verdictCounts(r)
		takeEmulatorCounts(out, r)
	}
	probs, err := sanitizerLogs(filepath.Join(dir, SanitizerDir), san)
	if err != nil {
		return nil, err
	}
	res.Problems = append(res.Problems, probs...)
	if len(san.Tools) > 0 {
		out.Sanitizer = san
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("nightly: the assembled report: %w", err)
	}
	res.Report = out
	return res, nil
}

// takeEmulatorCounts puts into out what only a run on the emulator counts:
// each kernel's branch coverage, united with what the GPU run's emulator
// side (PARITY-001) covered of it, and the instruction and byte counts per
// kernel and shape, where out has none of the kernel and shape.
func takeEmulatorCounts(out, emu *reports.Report) {
	for _, c := range emu.Coverage {
		if out.Kernel(c.Kernel) != nil {
			out.AddCoverage(c)
		}
	}
	for _, c := range emu.Costs {
		if !slices.ContainsFunc(out.Costs, func(x reports.Cost) bool { return x.Kernel == c.Kernel && x.Shape == c.Shape }) && out.Kernel(c.Kernel) != nil {
			out.Costs = append(out.Costs, c)
		}
	}
}

// Failed reports whether the nightly failed: a stage failed, or a problem
// was found in assembling.
func (r *Result) Failed() bool {
	for _, s := range r.Stages {
		if s.Status == "failed" {
			return true
		}
	}
	return len(r.Problems) > 0
}

func readOptional(path string) (*reports.Report, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	r, err := reports.Read(path)
	if err != nil {
		return nil, fmt.Errorf("nightly: %w", err)
	}
	return r, nil
}

func readStages(path string) ([]Stage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nightly: %w", err)
	}
	var out []Stage
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 5)
		if len(f) < 4 {
			return nil, fmt.Errorf("nightly: %s:%d: want name, status, exit, seconds[, reason] separated by tabs, got %q", path, i+1, line)
		}
		s := Stage{Name: f[0], Status: f[1]}
		var e1, e2 error
		s.Exit, e1 = strconv.Atoi(f[2])
		s.Seconds, e2 = strconv.Atoi(f[3])
		if e1 != nil || e2 != nil || !slices.Contains([]string{"ok", "failed", "skipped"}, s.Status) {
			return nil, fmt.Errorf("nightly: %s:%d: bad stage line %q (status ok, failed or skipped; exit and seconds integers)", path, i+1, line)
		}
		if len(f) == 5 {
			s.Reason = f[4]
		}
		// A stage run again (a retried job) counts as its last run.
		if j := slices.IndexFunc(out, func(t Stage) bool { return t.Name == s.Name }); j >= 0 {
			out = slices.Delete(out, j, j+1)
		}
		out = append(out, s)
	}
	return out, nil
}

func readEnvironment(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nightly: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			continue
		}
		env[k] = strings.TrimSpace(v)
	}
	return env, sc.Err()
}

func benchmarks(dir string, out *reports.Report) error {
	f, err := os.Open(filepath.Join(dir, BenchLog))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nightly: %w", err)
	}
	defer f.Close()
	runs, err := ParseBench(f)
	if err != nil {
		return err
	}
	var torch []TorchTiming
	if t, err := os.Open(filepath.Join(dir, TorchFile)); err == nil {
		torch, err = ParseTorch(t)
		t.Close()
		if err != nil {
			return err
		}
	}
	bms, notes := Benchmarks(runs, torch)
	out.Benchmarks = append(out.Benchmarks, bms...)
	out.Run.Notes = append(out.Run.Notes, notes...)
	return nil
}

// verdictCounts is e.g. "41 predictions: 40 discharged, 1 falsified".
func verdictCounts(r *reports.Report) string {
	n := map[reports.PredictionStatus]int{}
	var order []reports.PredictionStatus
	for _, p := range r.Predictions {
		if n[p.Status] == 0 {
			order = append(order, p.Status)
		}
		n[p.Status]++
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
	}
	return fmt.Sprintf("%d predictions: %s", len(r.Predictions), strings.Join(parts, ", "))
}

var ptxLineRe = regexp.MustCompile(`PTX line (\d+)`)

// EmuFindings turns the predictions the emulator's checked run did not
// discharge into findings of tool EmuTool: a race, an uninitialised read,
// an out-of-bounds access, a guard band or input overwritten (what a GPU
// run does not see), or any other failure there. The kernel is the
// prediction's first, the PTX line the emulator's fault's.
func EmuFindings(r *reports.Report) []reports.SanitizerFinding {
	var out []reports.SanitizerFinding
	for _, p := range r.Predictions {
		switch p.Status {
		case reports.Falsified, reports.Error, reports.Inconclusive:
		default:
			continue
		}
		f := reports.SanitizerFinding{Tool: EmuTool, Kind: emuKind(p), Message: p.ID + ": " + p.Reason}
		if len(p.Kernels) > 0 {
			f.Kernel = p.Kernels[0]
		}
		if m := ptxLineRe.FindStringSubmatch(p.Reason); m != nil {
			f.PTXLine, _ = strconv.Atoi(m[1])
		}
		out = append(out, f)
	}
	return out
}

func emuKind(p reports.Prediction) string {
	low := strings.ToLower(p.Reason)
	for _, k := range []struct{ needle, kind string }{
		{"data race", "data race"},
		{"uninitialised", "uninitialised read"},
		{"out-of-bounds", "out-of-bounds access"},
		{"guard band", "guard band overwritten"},
		{"input buffer modified", "input modified"},
		{"deadlock", "deadlock"},
	} {
		if strings.Contains(low, k.needle) {
			return k.kind
		}
	}
	return "prediction " + string(p.Status) + " on the emulator"
}

// sanitizerLogs parses every <tool>-<target>.log of dir into san. The
// planted target's logs are the pass's own test: the planted
// out-of-bounds write must be found by memcheck and the planted race by
// racecheck; they are not findings of the code under test, and a planted
// bug not found is a problem. Any other finding in them is kept.
func sanitizerLogs(dir string, san *reports.Sanitizer) (problems []string, err error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(logs)
	planted := map[string]bool{} // tool ran on the planted target
	found := map[string]bool{}
	for _, path := range logs {
		tool, target, ok := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".log"), "-")
		if !ok || !slices.Contains(SanitizerTools, tool) {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("nightly: %w", err)
		}
		fs, perr := ParseSanitizer(f, tool)
		f.Close()
		if perr != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, perr))
			continue
		}
		if !slices.Contains(san.Tools, tool) {
			san.Tools = append(san.Tools, tool)
		}
		if target == PlantedTarget {
			planted[tool] = true
		}
		device := -1          // the log's last device error: in san.Findings, or planted (-2)
		lost := map[int]int{} // API calls failed after each device error
		for _, x := range fs {
			if x.Kind == lostContext && device != -1 {
				// After a device error the context is lost, and every
				// later API call of the process fails with it: the
				// device error's consequence, not a finding of its own.
				lost[device]++
				continue
			}
			if target == PlantedTarget && expectedPlanted(x) {
				found[tool] = true
				device = -2
				continue
			}
			san.Findings = append(san.Findings, x)
			if !apiError(x) {
				device = len(san.Findings) - 1
			}
		}
		for i, n := range lost {
			if i >= 0 {
				san.Findings[i].Message += fmt.Sprintf("\n(then %d API calls failed with %s: the context is lost)", n, lostContext)
			}
		}
	}
	for _, pk := range [][2]string{{"memcheck", plantedOOBKernel}, {"racecheck", plantedRaceKernel}} {
		tool, kernel := pk[0], pk[1]
		if planted[tool] && !found[tool] {
			problems = append(problems, fmt.Sprintf("sanitizer: %s did not find the bug planted in %s: the pass cannot be trusted", tool, kernel))
			san.Findings = append(san.Findings, reports.SanitizerFinding{Tool: tool, Kernel: kernel, Kind: "planted bug not found",
				Message: fmt.Sprintf("%s ran on the planted kernels and reported nothing in %s", tool, kernel)})
		}
	}
	return problems, nil
}

// lostContext is the error every API call returns after a device error
// has destroyed the context (compute-sanitizer's default on a precise
// device error, as the driver's on a fault).
const lostContext = "CUDA_ERROR_LAUNCH_FAILED"

// apiError reports whether x is an API call's error (ParseSanitizer's kind
// for "Program hit CUDA_ERROR_…"), not a device-side error.
func apiError(x reports.SanitizerFinding) bool {
	return x.Kernel == "" && strings.HasPrefix(x.Kind, "CUDA_ERROR_")
}

// expectedPlanted reports whether x is the bug planted for its tool.
func expectedPlanted(x reports.SanitizerFinding) bool {
	switch x.Tool {
	case "memcheck":
		return x.Kernel == plantedOOBKernel && strings.HasPrefix(x.Kind, "Invalid __global__ write")
	case "racecheck":
		return x.Kernel == plantedRaceKernel && (strings.HasPrefix(x.Kind, "race") || strings.Contains(x.Kind, "hazard"))
	}
	return false
}
