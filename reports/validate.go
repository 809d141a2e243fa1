package reports

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every *ValidationError.
var ErrInvalid = errors.New("invalid report")

// ValidationError lists every way a report breaks the schema's rules.
type ValidationError struct {
	Problems []string // e.g. `predictions[2] "FALSIFY-DIM-001": status "passed" is not a prediction status`
}

func (e *ValidationError) Error() string {
	return "invalid report: " + strings.Join(e.Problems, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// quoteMax bounds the bytes of a value an error message repeats.
const quoteMax = 64

// quote is strconv.Quote of s cut to quoteMax bytes (at a rune boundary),
// saying how long s was: a message never repeats a huge value in full.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	cut := quoteMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// Validate checks r against the rules of the schema: schema version, required
// fields, at least one prediction, enum values, non-negative counts, finite
// non-negative durations and rates, error statistics that are non-negative
// or NaN or +Inf, a discharged prediction with no failed check and a finite
// worst ratio of at most 1, a falsified one with a reason, a not_run one with
// no checks, kernels pinned by a PTX hash, killed mutants naming their
// killer. It also checks what the schema cannot: unique prediction IDs,
// mutant names, kernel names and merged run IDs, end not before start,
// checks_failed not above checks, and fields that contradict each other
// (consistent; mutants: a killer or checks to kill only when killed,
// expected killers only for a named mutant; devices: no launches without a
// contract run). It returns a *ValidationError, or nil.
func (r *Report) Validate() error {
	var v validator
	if r == nil {
		v.addf("report is nil")
		return v.err()
	}
	if r.SchemaVersion != SchemaVersion {
		v.addf("schema_version %s, want %q", quote(r.SchemaVersion), SchemaVersion)
	}
	v.run(&r.Run)
	if len(r.Predictions) == 0 {
		v.addf("predictions: empty (a report records at least one prediction)")
	}
	seen := make(map[string]bool)
	for i := range r.Predictions {
		p := &r.Predictions[i]
		at := v.element("predictions", i, "id", p.ID, seen)
		v.prediction(at, p)
		v.predictionDevices(at, p, &r.Run)
	}
	clear(seen)
	for i := range r.Mutants {
		m := &r.Mutants[i]
		at := v.element("mutants", i, "name", m.Name, seen)
		v.mutant(at, m)
		if m.Device != nil && r.Run.RunDevice(*m.Device) == nil {
			v.addf("%s: device %d is not among the run's devices", at, *m.Device)
		}
	}
	clear(seen)
	for i := range r.Kernels {
		k := &r.Kernels[i]
		at := v.element("kernels", i, "name", k.Name, seen)
		v.kernel(at, k)
	}
	v.nightly(r)
	return v.err()
}

type validator struct{ problems []string }

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

// rate checks a finite, non-negative float.
// element returns where element i of list stands in messages, records
// that its key (named what) is empty or already in seen, and adds the key
// to seen.
func (v *validator) element(list string, i int, what, key string, seen map[string]bool) string {
	at := fmt.Sprintf("%s[%d] %s", list, i, quote(key))
	if key == "" {
		v.addf("%s: %s is empty", at, what)
	} else if seen[key] {
		v.addf("%s: duplicate %s", at, what)
	}
	seen[key] = true
	return at
}

func (v *validator) rate(at, name string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		v.addf("%s: %s %v is not a finite non-negative number", at, name, x)
	}
}

// stat checks an error statistic: non-negative, NaN or +Inf.
func (v *validator) stat(at, name string, x float64) {
	if x < 0 || math.IsInf(x, -1) {
		v.addf("%s: %s %v is negative", at, name, x)
	}
}

func (v *validator) count(at, name string, n int) {
	if n < 0 {
		v.addf("%s: %s %d is negative", at, name, n)
	}
}

func (v *validator) run(r *Run) {
	const at = "run"
	if r.ID == "" {
		v.addf("run: id is empty")
	}
	seen := map[string]bool{}
	for i, id := range r.MergedFrom {
		switch {
		case id == "":
			v.addf("run: merged_from[%d] is empty", i)
		case seen[id]:
			v.addf("run: merged_from[%d] %s is repeated", i, quote(id))
		}
		seen[id] = true
	}
	if r.Start.IsZero() {
		v.addf("run: start is missing")
	}
	if !r.End.IsZero() && r.End.Before(r.Start) {
		v.addf("run: end %s is before start %s", r.End, r.Start)
	}
	if r.GoVersion == "" {
		v.addf("run: go_version is empty")
	}
	if !r.Backend.Valid() {
		v.addf("run: backend %s is not gpu or emu", quote(string(r.Backend)))
	}
	v.count(at, "sm_count", r.SMCount)
	v.count(at, "rapid_checks", r.RapidChecks)
	v.count(at, "rapid_loops", r.RapidLoops)
	if r.CopyBandwidth != nil {
		v.rate(at, "copy_bandwidth_bytes_per_s", *r.CopyBandwidth)
	}
	ords := map[int]bool{}
	for i, d := range r.Devices {
		at := fmt.Sprintf("run: devices[%d]", i)
		if !d.Backend.Valid() {
			v.addf("%s: backend %s is not gpu or emu", at, quote(string(d.Backend)))
		}
		v.count(at, "ordinal", d.Ordinal)
		v.count(at, "contract_runs", d.ContractRuns)
		v.count(at, "launches", d.Launches)
		if d.Launches > 0 && d.ContractRuns == 0 {
			v.addf("%s: launches %d with contract_runs 0 (launches are made by contract runs)", at, d.Launches)
		}
		if ords[d.Ordinal] {
			v.addf("%s: ordinal %d is repeated", at, d.Ordinal)
		}
		ords[d.Ordinal] = true
	}
}

// predictionDevices checks that p's devices are ascending ordinals of the
// run's devices.
func (v *validator) predictionDevices(at string, p *Prediction, r *Run) {
	for i, o := range p.Devices {
		switch {
		case i > 0 && o <= p.Devices[i-1]:
			v.addf("%s: devices %v are not ascending and unique", at, p.Devices)
			return
		case r.RunDevice(o) == nil:
			v.addf("%s: device %d is not among the run's devices", at, o)
		}
	}
}

func (v *validator) prediction(at string, p *Prediction) {
	if !p.Status.Valid() {
		v.addf("%s: status %s is not a prediction status", at, quote(string(p.Status)))
	}
	v.count(at, "checks", p.Checks)
	v.count(at, "checks_failed", p.ChecksFailed)
	if p.ChecksFailed > p.Checks {
		v.addf("%s: checks_failed %d exceeds checks %d", at, p.ChecksFailed, p.Checks)
	}
	if p.Binding != "" && !strings.HasSuffix(p.ID, "@"+p.Binding) {
		v.addf("%s: binding %s is not the suffix of its id %s (ID@binding)", at, quote(p.Binding), quote(p.ID))
	}
	v.rate(at, "duration_s", p.Duration)
	v.rate(at, "checks_per_second", p.ChecksPerSecond)
	v.counterexample(at, p.Counterexample)
	if p.Reproduction != nil && p.Reproduction.Command == "" {
		v.addf("%s: reproduction.command is empty", at)
	}
	if e := p.ErrorStats; e != nil {
		for _, s := range []struct {
			name string
			x    *float64
		}{{"max_abs", e.MaxAbs}, {"max_rel", e.MaxRel}, {"max_ulp", e.MaxULP}, {"max_ratio", &e.MaxRatio}, {"naive_ratio", e.NaiveRatio}} {
			if s.x != nil {
				v.stat(at, "error_stats."+s.name, *s.x)
			}
		}
		v.sizeStats(at, e.BySize)
	}
	switch p.Status {
	case Discharged:
		if p.ChecksFailed > 0 {
			v.addf("%s: discharged with %d failed checks", at, p.ChecksFailed)
		}
		if e := p.ErrorStats; e != nil && !(e.MaxRatio <= 1) {
			v.addf("%s: discharged with error_stats.max_ratio %v (a discharged prediction's worst error/tolerance is at most 1)", at, e.MaxRatio)
		}
	case Falsified:
		if strings.TrimSpace(p.Reason) == "" {
			v.addf("%s: falsified without a reason", at)
		}
	case NotRun:
		if p.Checks > 0 {
			v.addf("%s: not_run with %d checks", at, p.Checks)
		}
	}
	v.consistent(at, p)
	for i, f := range p.Flags {
		if !f.Valid() {
			v.addf("%s: flags[%d] %s is not a flag", at, i, quote(string(f)))
		}
		for _, g := range p.Flags[:i] {
			if f == g {
				v.addf("%s: flags[%d] %q is repeated", at, i, f)
			}
		}
	}
}

// consistent checks that p's fields tell one story: its status, its checks
// and failed checks, its measurements and its evidence of a failure. Each
// rule is what the runner (properties/suite) and Merge cannot produce:
//
//   - discharged: at least one check ran (no check discharges nothing),
//     none failed, and no failure was seen (no counterexample, no
//     reproduction, no nondeterministic failure);
//   - falsified: a failed check (checks_failed at least 1);
//   - inconclusive with failed checks: only a failure that did not
//     reproduce (nondeterministic); one that did falsifies;
//   - skipped, not_run and not_claimed: no check ran, so no checks, measurements,
//     counterexample, reproduction or rate; not_run used no device;
//   - any status: error_stats and checks_per_second need checks, a rate
//     needs a duration, and the nondeterministic flag and text come
//     together.
func (v *validator) consistent(at string, p *Prediction) {
	nondet := p.HasFlag(FlagNonDeterministic)
	if nondet != (p.NonDeterministic != "") {
		v.addf("%s: flags %v and nondeterministic %s disagree (the flag and the text come together)", at, p.Flags, quote(p.NonDeterministic))
	}
	failure := func(what string) {
		if p.Counterexample != nil {
			v.addf("%s: %s with a counterexample", at, what)
		}
		if p.Reproduction != nil {
			v.addf("%s: %s with a reproduction", at, what)
		}
	}
	switch p.Status {
	case Discharged:
		if p.Checks == 0 {
			v.addf("%s: discharged with checks 0 (no check ran: nothing was discharged)", at)
		}
		if nondet || p.NonDeterministic != "" {
			v.addf("%s: discharged with a nondeterministic failure", at)
		}
		failure("discharged")
	case Falsified:
		if p.ChecksFailed == 0 {
			v.addf("%s: falsified with checks_failed 0", at)
		}
	case Inconclusive:
		if p.ChecksFailed > 0 && !nondet && p.NonDeterministic == "" {
			v.addf("%s: inconclusive with checks_failed %d but not nondeterministic (a failure that reproduced is falsified)", at, p.ChecksFailed)
		}
	case Skipped, NotRun, NotClaimed:
		if p.Status != NotRun && p.Checks > 0 { // not_run's is reported above
			v.addf("%s: %s with %d checks", at, p.Status, p.Checks)
		}
		if nondet || p.NonDeterministic != "" {
			v.addf("%s: %s with a nondeterministic failure", at, p.Status)
		}
		failure(string(p.Status))
		if p.Status == NotRun && len(p.Devices) > 0 {
			v.addf("%s: not_run with devices %v", at, p.Devices)
		}
	}
	if p.Checks == 0 {
		if p.ErrorStats != nil {
			v.addf("%s: error_stats with checks 0 (a ratio measured over no check)", at)
		}
		if p.ChecksPerSecond > 0 {
			v.addf("%s: checks_per_second %v with checks 0", at, p.ChecksPerSecond)
		}
	}
	if p.ChecksPerSecond > 0 && p.Duration == 0 {
		v.addf("%s: checks_per_second %v with duration_s 0", at, p.ChecksPerSecond)
	}
}

func (v *validator) mutant(at string, m *Mutant) {
	if !m.Kind.Valid() {
		v.addf("%s: kind %s is not named or generic", at, quote(string(m.Kind)))
	}
	if !m.Status.Valid() {
		v.addf("%s: status %s is not a mutant status", at, quote(string(m.Status)))
	}
	if m.Status == MutantKilled && m.KilledBy == "" {
		v.addf("%s: killed but killed_by is empty", at)
	}
	if m.Status != MutantKilled && m.KilledBy != "" {
		v.addf("%s: %s with killed_by %s (only a killed mutant has a killer)", at, m.Status, quote(m.KilledBy))
	}
	if m.Status != MutantKilled && m.ChecksToKill > 0 {
		v.addf("%s: %s with checks_to_kill %d", at, m.Status, m.ChecksToKill)
	}
	if m.Kind == MutantGeneric && len(m.Expected) > 0 {
		v.addf("%s: generic with expected_killers %v (only a named mutant is written for its killers)", at, m.Expected)
	}
	v.count(at, "checks_to_kill", m.ChecksToKill)
	v.rate(at, "duration_s", m.Duration)
	v.counterexample(at, m.Counterexample)
}

func (v *validator) kernel(at string, k *Kernel) {
	if !k.Origin.Valid() {
		v.addf("%s: origin %s is not ours, binding or user", at, quote(string(k.Origin)))
	}
	// A user's implementation launches no PTX it lists, or names it as
	// every kernel does.
	if pinned := k.Origin != KernelUser || k.PTX != "" || k.Entry != "" || k.PTXSHA256 != ""; pinned {
		if k.PTX == "" {
			v.addf("%s: ptx is empty", at)
		}
		if k.Entry == "" {
			v.addf("%s: entry is empty", at)
		}
		if !sha256Hex.MatchString(k.PTXSHA256) {
			v.addf("%s: ptx_sha256 %s is not 64 lower-case hex digits", at, quote(k.PTXSHA256))
		}
	}
	if k.SourceSHA256 != "" && !sha256Hex.MatchString(k.SourceSHA256) {
		v.addf("%s: source_sha256 %s is not 64 lower-case hex digits", at, quote(k.SourceSHA256))
	}
	switch {
	case k.Origin == KernelBinding && k.Binding == "":
		v.addf("%s: origin binding without the binding file", at)
	case k.Origin != KernelBinding && k.Binding != "":
		v.addf("%s: origin %s with a binding file", at, k.Origin)
	}
}

func (v *validator) counterexample(at string, c *Counterexample) {
	if c != nil && c.Text == "" && len(c.Draws) == 0 {
		v.addf("%s: counterexample has neither text nor draws", at)
	}
}

// Lint returns what a valid report says that cannot all be true, one line
// each, for `ptxprop validate`: error statistics that contradict each other
// (max_abs is 0 exactly when max_rel and max_ulp both are, as the three are
// maxima over the same elements: an element with want ≠ 0 and relative
// error 0 has got = want, and one with want = 0 and ULP distance 0 has
// got = 0), and predictions or mutants naming a kernel that the kernels
// section lacks (when there is one). Nil when there is nothing to say.
func (r *Report) Lint() []string {
	var out []string
	for i, p := range r.Predictions {
		at := fmt.Sprintf("predictions[%d] %s", i, quote(p.ID))
		if e := p.ErrorStats; e != nil && e.MaxAbs != nil && e.MaxRel != nil && e.MaxULP != nil {
			if zero := *e.MaxRel == 0 && *e.MaxULP == 0; zero != (*e.MaxAbs == 0) {
				out = append(out, fmt.Sprintf("%s: error_stats max_abs %v beside max_rel %v and max_ulp %v: they cannot all hold over the same elements",
					at, *e.MaxAbs, *e.MaxRel, *e.MaxULP))
			}
		}
		if len(r.Kernels) > 0 {
			for _, k := range p.Kernels {
				if r.Kernel(k) == nil {
					out = append(out, fmt.Sprintf("%s: kernel %s is not in the kernels section", at, quote(k)))
				}
			}
		}
	}
	if len(r.Kernels) > 0 {
		for i, m := range r.Mutants {
			if m.Kernel != "" && r.Kernel(m.Kernel) == nil {
				out = append(out, fmt.Sprintf("mutants[%d] %s: kernel %s is not in the kernels section", i, quote(m.Name), quote(m.Kernel)))
			}
		}
	}
	return out
}
