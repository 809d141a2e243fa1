package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Diff describes how b differs from a, one line per change, for nightly CI:
// the run's settings (backend, devices, rapid's checks and seed, the
// -ptxprop, -rapid and -test.short settings of its command line); then
// predictions whose status changed, that appeared or disappeared, gained or
// lost a flag, ran other checks (fewer is flagged: weaker evidence) or whose
// worst error/tolerance ratio moved (RatioMoved); mutants likewise, and
// their killers; kernels whose hashes changed; and the mutation score.
// Lines come in that order, each group in b's order followed by what only a
// has, e.g.
//
//	run: rapid_checks 100 -> 50 (fewer)
//	run: -ptxprop.max-elements 4096 -> (unset)
//	prediction FALSIFY-DIM-001: discharged -> falsified
//	prediction FALSIFY-RMS-003: checks 100 -> 50 (fewer)
//	prediction FALSIFY-RMS-003: worst err/tol 0.31 -> 0.62 (+100%)
//	prediction FALSIFY-RMS-004: added (discharged)
//	prediction FALSIFY-RMS-002: flag unproven set
//	mutant drop-eps: killed -> survived
//	kernel rmsnorm_bwd: ptx_sha256 changed
//	mutation score: 7/9 = 77.8% -> 6/9 = 66.7%
//
// A nil report is an empty one, with no run to compare. Reports of equal
// runs give no lines: what differs from run to run whatever was run (id,
// times, host, commit, notes) is not a change.
func Diff(a, b *Report) []string {
	cs := Compare(a, b)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

// Class says what a Change means for the code under test.
type Class int

const (
	// Changed is a change that is neither better nor worse in itself:
	// other settings, a prediction added, a kernel's hash.
	Changed Class = iota
	// Regression is a change for the worse (Compare lists which).
	Regression
	// Improvement is the converse of a regression.
	Improvement
)

func (c Class) String() string {
	switch c {
	case Regression:
		return "regression"
	case Improvement:
		return "improvement"
	}
	return "change"
}

// Change is one line of Compare: what changed, and whether for the worse.
type Change struct {
	Class Class
	Text  string // as Diff prints it, e.g. "prediction P-1: discharged -> falsified"
}

// Compare is Diff with each line classed. These are regressions, and
// their converses improvements:
//
//   - a prediction that was discharged and is not (falsified, an error,
//     inconclusive, not run, or gone), or one added that failed;
//   - a named mutant surviving that was killed or did not exist;
//   - a lower mutation score (over every mutant, Score.Ratio);
//   - a kernel's branch coverage fraction lower;
//   - a kernel's bandwidth ratio (Benchmark.CopyRatio) down by more than
//     its noise: see BandwidthDropped;
//   - a sanitizer finding not in a (by tool, kernel, PTX line and kind,
//     counted: two where there was one is a new one);
//   - a kernel's emulator instructions or bytes per element grown at a
//     shape: the emulator counts exactly, so any growth is real.
//
// Everything else Diff lists is Changed.
func Compare(a, b *Report) []Change {
	var out []Change
	add := func(c Class, format string, args ...any) {
		out = append(out, Change{c, fmt.Sprintf(format, args...)})
	}
	if a != nil && b != nil {
		diffRun(&a.Run, &b.Run, func(format string, args ...any) { add(Changed, format, args...) })
	}
	if a == nil {
		a = &Report{}
	}
	if b == nil {
		b = &Report{}
	}

	for _, q := range b.Predictions {
		p := a.Prediction(q.ID)
		if p == nil {
			c := Changed
			if _, failed := ranFailed(q.Status); failed {
				c = Regression
			}
			add(c, "prediction %s: added (%s)", q.ID, q.Status)
			continue
		}
		if p.Status != q.Status {
			c := Changed
			switch {
			case p.Status == Discharged:
				c = Regression
			case q.Status == Discharged:
				c = Improvement
			}
			add(c, "prediction %s: %s -> %s", q.ID, p.Status, q.Status)
		}
		for _, f := range flags {
			switch was, is := p.HasFlag(f), q.HasFlag(f); {
			case !was && is:
				add(Changed, "prediction %s: flag %s set", q.ID, f)
			case was && !is:
				add(Changed, "prediction %s: flag %s cleared", q.ID, f)
			}
		}
		if p.Checks != q.Checks {
			add(Changed, "prediction %s: checks %d -> %d%s", q.ID, p.Checks, q.Checks, fewer(p.Checks, q.Checks))
		}
		if was, is := worstRatio(p), worstRatio(&q); RatioMoved(was, is) {
			add(Changed, "prediction %s: worst err/tol %s -> %s%s", q.ID, ratioText(was), ratioText(is), ratioChange(was, is))
		}
	}
	for _, p := range a.Predictions {
		if b.Prediction(p.ID) == nil {
			c := Changed
			if p.Status == Discharged {
				c = Regression
			}
			add(c, "prediction %s: removed (was %s)", p.ID, p.Status)
		}
	}

	for _, n := range b.Mutants {
		m := a.Mutant(n.Name)
		c := Changed
		if n.Kind == MutantNamed {
			switch {
			case n.Status == MutantSurvived && (m == nil || m.Status != MutantSurvived):
				c = Regression
			case m != nil && m.Status == MutantSurvived && n.Status == MutantKilled:
				c = Improvement
			}
		}
		switch {
		case m == nil:
			add(c, "mutant %s: added (%s%s)", n.Name, n.Status, by(n))
		case m.Status != n.Status:
			add(c, "mutant %s: %s -> %s%s", n.Name, m.Status, n.Status, by(n))
		case m.Status == MutantKilled && m.KilledBy != n.KilledBy:
			add(Changed, "mutant %s: killed by %s -> %s", n.Name, m.KilledBy, n.KilledBy)
		}
	}
	for _, m := range a.Mutants {
		if b.Mutant(m.Name) == nil {
			add(Changed, "mutant %s: removed (was %s)", m.Name, m.Status)
		}
	}

	for _, l := range b.Kernels {
		k := a.Kernel(l.Name)
		if k == nil {
			add(Changed, "kernel %s: added", l.Name)
			continue
		}
		if k.PTXSHA256 != l.PTXSHA256 {
			add(Changed, "kernel %s: ptx_sha256 changed", l.Name)
		}
		if k.SourceSHA256 != l.SourceSHA256 {
			add(Changed, "kernel %s: source_sha256 changed", l.Name)
		}
	}
	for _, k := range a.Kernels {
		if !slices.ContainsFunc(b.Kernels, func(l Kernel) bool { return l.Name == k.Name }) {
			add(Changed, "kernel %s: removed", k.Name)
		}
	}

	as, bs := a.MutationScore(""), b.MutationScore("")
	if as.Killed != bs.Killed || as.Counted() != bs.Counted() {
		c := Changed
		x, okx := as.Ratio()
		y, oky := bs.Ratio()
		switch {
		case okx && oky && y < x:
			c = Regression
		case okx && oky && y > x:
			c = Improvement
		}
		add(c, "mutation score: %s -> %s", as, bs)
	}
	compareNightly(a, b, add)
	return out
}

// ranFailed is outcome's classification: whether status s ran, and
// whether it ran and was not discharged.
func ranFailed(s PredictionStatus) (ran, failed bool) {
	switch s {
	case Discharged:
		return true, false
	case Falsified, Inconclusive, Error:
		return true, true
	}
	return false, false
}

func by(m Mutant) string {
	if m.Status == MutantKilled && m.KilledBy != "" {
		return " by " + m.KilledBy
	}
	return ""
}

// RatioMoveThreshold is the relative move of a prediction's worst
// error/tolerance ratio that Diff reports: more than this share of the
// larger of the two. Ratios of one prediction vary from run to run with
// the inputs drawn; a move of a tenth or more is worth a look.
const RatioMoveThreshold = 0.10

// RatioFloor is the ratio below which Diff ignores moves: both ratios under
// a hundredth of the tolerance are far from failing whatever their quotient.
const RatioFloor = 0.01

// RatioMoved reports whether a worst ratio moved enough from was to is to
// be reported (nil: not measured): measured in one report only, finite in
// one only, or both finite and apart by more than RatioMoveThreshold of the
// larger while that is at least RatioFloor. NaN equals NaN here.
func RatioMoved(was, is *float64) bool {
	switch {
	case was == nil || is == nil:
		return (was == nil) != (is == nil)
	case math.IsNaN(*was) || math.IsNaN(*is):
		return math.IsNaN(*was) != math.IsNaN(*is)
	case math.IsInf(*was, 0) || math.IsInf(*is, 0):
		return *was != *is
	}
	hi := math.Max(*was, *is)
	return hi >= RatioFloor && math.Abs(*is-*was) > RatioMoveThreshold*hi
}

func worstRatio(p *Prediction) *float64 {
	if p.ErrorStats == nil {
		return nil
	}
	return &p.ErrorStats.MaxRatio
}

func ratioText(x *float64) string {
	if x == nil {
		return "(none)"
	}
	return fmt.Sprintf("%.3g", *x)
}

// ratioChange is the relative move " (+100%)", or "" where it means nothing.
func ratioChange(was, is *float64) string {
	if was == nil || is == nil || *was == 0 || math.IsNaN(*was) || math.IsNaN(*is) || math.IsInf(*was, 0) || math.IsInf(*is, 0) {
		return ""
	}
	return fmt.Sprintf(" (%+.0f%%)", 100*(*is-*was) / *was)
}

// fewer flags a count that fell: fewer checks are weaker evidence.
func fewer(was, is int) string {
	if is < was {
		return " (fewer)"
	}
	return ""
}

// diffRun reports how run b's settings differ from a's.
func diffRun(a, b *Run, add func(string, ...any)) {
	if a.Backend != b.Backend {
		add("run: backend %s -> %s", orNone(string(a.Backend)), orNone(string(b.Backend)))
	}
	if a.Device != b.Device {
		add("run: device %s -> %s", orNone(a.Device), orNone(b.Device))
	}
	if da, db := deviceList(a.Devices), deviceList(b.Devices); da != db {
		add("run: devices %s -> %s", da, db)
	}
	if a.DriverVersion != b.DriverVersion || a.CUDAVersion != b.CUDAVersion {
		add("run: driver %s CUDA %s -> driver %s CUDA %s", orNone(a.DriverVersion), orNone(a.CUDAVersion), orNone(b.DriverVersion), orNone(b.CUDAVersion))
	}
	if a.RapidChecks != b.RapidChecks {
		add("run: rapid_checks %d -> %d%s", a.RapidChecks, b.RapidChecks, fewer(a.RapidChecks, b.RapidChecks))
	}
	if sa, sb := seedText(a.RapidSeed), seedText(b.RapidSeed); sa != sb {
		add("run: rapid_seed %s -> %s", sa, sb)
	}
	sa, sb := CommandSettings(a.CommandLine), CommandSettings(b.CommandLine)
	var names []string
	for n := range sa {
		names = append(names, n)
	}
	for n := range sb {
		if _, ok := sa[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		va, oka := sa[n]
		vb, okb := sb[n]
		if oka != okb || va != vb {
			add("run: -%s %s -> %s", n, unset(va, oka), unset(vb, okb))
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func unset(v string, ok bool) string {
	if !ok {
		return "(unset)"
	}
	return v
}

func seedText(s *uint64) string {
	if s == nil {
		return "(none)"
	}
	return fmt.Sprint(*s)
}

// deviceList is e.g. "[gpu 0 NVIDIA H200, gpu 1 NVIDIA H200]".
func deviceList(ds []Device) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s %d %s", d.Backend, d.Ordinal, d.Name)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// outputSettings are command-line settings that say where a run's output
// goes, not what it checked: Diff leaves them out.
var outputSettings = []string{"ptxprop.report", "ptxprop.progress", "ptxprop.summary", "ptxprop.merge"}

// boolSettings are the boolean flags among those CommandSettings reads: a
// bool flag alone means true, and the argument after it is not its value.
var boolSettings = []string{"test.short", "ptxprop.merge", "ptxprop.summary", "ptxprop.equivalence", "ptxprop.record", "ptxprop.child",
	"rapid.nofailfile", "rapid.v", "rapid.debug", "rapid.debugvis"}

// CommandSettings returns the settings a command line (Run.CommandLine)
// gives: each -ptxprop.NAME and -rapid.NAME flag and -test.short, by name
// without the dash, as written (-name=value, -name value, or -name for
// true), the last of a repeated flag winning; output settings are left
// out. Settings given through the environment are not on the command line
// and not here (the run's rapid_checks and rapid_seed hold rapid's).
func CommandSettings(args []string) map[string]string {
	out := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(strings.TrimPrefix(a, "-"), "-")
		if !ok {
			name, ok = strings.CutPrefix(a, "-")
		}
		if !ok {
			continue
		}
		name, value, hasValue := strings.Cut(name, "=")
		if !strings.HasPrefix(name, "ptxprop.") && !strings.HasPrefix(name, "rapid.") && name != "test.short" {
			continue
		}
		if !hasValue {
			value = "true"
			if !slices.Contains(boolSettings, name) && i+1 < len(args) {
				i++
				value = args[i]
			}
		}
		if !slices.Contains(outputSettings, name) {
			out[name] = value
		}
	}
	return out
}
