package reports

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
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

// Validate checks r against the rules of the schema: schema version, required
// fields, enum values, non-negative counts, finite non-negative durations and
// rates, hashes, killed mutants naming their killer. It also checks what the
// schema cannot: unique prediction IDs, mutant names and kernel names, end not
// before start, checks_failed not above checks. It returns a
// *ValidationError, or nil.
func (r *Report) Validate() error {
	var v validator
	if r == nil {
		v.addf("report is nil")
		return v.err()
	}
	if r.SchemaVersion != SchemaVersion {
		v.addf("schema_version %q, want %q", r.SchemaVersion, SchemaVersion)
	}
	v.run(&r.Run)
	seen := make(map[string]bool)
	for i := range r.Predictions {
		p := &r.Predictions[i]
		at := fmt.Sprintf("predictions[%d] %q", i, p.ID)
		if p.ID == "" {
			v.addf("%s: id is empty", at)
		} else if seen[p.ID] {
			v.addf("%s: duplicate id", at)
		}
		seen[p.ID] = true
		v.prediction(at, p)
	}
	clear(seen)
	for i := range r.Mutants {
		m := &r.Mutants[i]
		at := fmt.Sprintf("mutants[%d] %q", i, m.Name)
		if m.Name == "" {
			v.addf("%s: name is empty", at)
		} else if seen[m.Name] {
			v.addf("%s: duplicate name", at)
		}
		seen[m.Name] = true
		v.mutant(at, m)
	}
	clear(seen)
	for i := range r.Kernels {
		k := &r.Kernels[i]
		at := fmt.Sprintf("kernels[%d] %q", i, k.Name)
		if k.Name == "" {
			v.addf("%s: name is empty", at)
		} else if seen[k.Name] {
			v.addf("%s: duplicate name", at)
		}
		seen[k.Name] = true
		if k.Entry == "" {
			v.addf("%s: entry is empty", at)
		}
		if k.PTXSHA256 != "" && !sha256Hex.MatchString(k.PTXSHA256) {
			v.addf("%s: ptx_sha256 %q is not 64 lower-case hex digits", at, k.PTXSHA256)
		}
		if k.SourceSHA256 != "" && !sha256Hex.MatchString(k.SourceSHA256) {
			v.addf("%s: source_sha256 %q is not 64 lower-case hex digits", at, k.SourceSHA256)
		}
	}
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
func (v *validator) rate(at, name string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		v.addf("%s: %s %v is not a finite non-negative number", at, name, x)
	}
}

func (v *validator) count(at, name string, n int) {
	if n < 0 {
		v.addf("%s: %s %d is negative", at, name, n)
	}
}

func (v *validator) run(r *Run) {
	const at = "run"
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
		v.addf("run: backend %q is not gpu or emu", r.Backend)
	}
	v.count(at, "sm_count", r.SMCount)
	v.count(at, "rapid_checks", r.RapidChecks)
	if r.CopyBandwidth != nil {
		v.rate(at, "copy_bandwidth_bytes_per_s", *r.CopyBandwidth)
	}
}

func (v *validator) prediction(at string, p *Prediction) {
	if !p.Status.Valid() {
		v.addf("%s: status %q is not a prediction status", at, p.Status)
	}
	v.count(at, "checks", p.Checks)
	v.count(at, "checks_failed", p.ChecksFailed)
	if p.ChecksFailed > p.Checks {
		v.addf("%s: checks_failed %d exceeds checks %d", at, p.ChecksFailed, p.Checks)
	}
	v.rate(at, "duration_s", p.Duration)
	v.rate(at, "checks_per_second", p.ChecksPerSecond)
	v.counterexample(at, p.Counterexample)
	if p.Reproduction != nil && p.Reproduction.Command == "" {
		v.addf("%s: reproduction.command is empty", at)
	}
	for i, f := range p.Flags {
		if !f.Valid() {
			v.addf("%s: flags[%d] %q is not a flag", at, i, f)
		}
		for _, g := range p.Flags[:i] {
			if f == g {
				v.addf("%s: flags[%d] %q is repeated", at, i, f)
			}
		}
	}
}

func (v *validator) mutant(at string, m *Mutant) {
	if !m.Kind.Valid() {
		v.addf("%s: kind %q is not named or generic", at, m.Kind)
	}
	if !m.Status.Valid() {
		v.addf("%s: status %q is not a mutant status", at, m.Status)
	}
	if m.Status == MutantKilled && m.KilledBy == "" {
		v.addf("%s: killed but killed_by is empty", at)
	}
	v.count(at, "checks_to_kill", m.ChecksToKill)
	v.counterexample(at, m.Counterexample)
}

func (v *validator) counterexample(at string, c *Counterexample) {
	if c != nil && c.Text == "" && len(c.Draws) == 0 {
		v.addf("%s: counterexample has neither text nor draws", at)
	}
}
