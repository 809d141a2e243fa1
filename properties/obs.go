package properties

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
)

// Obs is handed to every check of a property: it compares kernel output with
// the oracle, accumulates error statistics for the report and fails the check,
// with the full case, when a bound is violated.
type Obs struct {
	rt    *rapid.T
	ctx   string
	cols  int
	stats ErrorStats
}

// Context sets the description printed with every failure of this check, e.g.
// the shape and ε. cols, when positive, lets failures name row and column.
func (o *Obs) Context(cols int, format string, args ...any) {
	o.cols = cols
	o.ctx = fmt.Sprintf(format, args...)
}

// Fatalf fails the check with the context prepended.
func (o *Obs) Fatalf(format string, args ...any) {
	o.rt.Helper()
	o.rt.Fatalf("%s: %s", o.ctx, fmt.Sprintf(format, args...))
}

// Check fails the check with err, if err is not nil.
func (o *Obs) Check(what string, err error) {
	o.rt.Helper()
	if err != nil {
		o.Fatalf("%s: %v", what, err)
	}
}

func (o *Obs) where(i int) string {
	if o.cols > 0 {
		return fmt.Sprintf("element %d (row %d, col %d)", i, i/o.cols, i%o.cols)
	}
	return fmt.Sprintf("element %d", i)
}

// Within compares got with the float64 oracle want element by element:
// |got[i] − want[i]| ≤ tol[i]. Non-finite oracle values must be matched
// exactly in class (NaN by NaN, ±Inf by the same infinity); a finite oracle
// value must be matched by a finite result. It records abs, rel, ULP and
// err/tol statistics.
func (o *Obs) Within(name string, got []float32, want, tol []float64) {
	o.rt.Helper()
	if len(got) != len(want) || len(tol) != len(want) {
		o.Fatalf("%s: length mismatch: got %d, want %d, tol %d", name, len(got), len(want), len(tol))
	}
	s := &o.stats
	for i, w := range want {
		g := float64(got[i])
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				o.Fatalf("%s: %s: got %g, want NaN", name, o.where(i), g)
			}
			continue
		case math.IsInf(w, 0):
			if g != w {
				o.Fatalf("%s: %s: got %g, want %g", name, o.where(i), g, w)
			}
			continue
		}
		err := math.Abs(g - w)
		if math.IsNaN(g) || math.IsInf(g, 0) || !(err <= tol[i]) {
			o.Fatalf("%s: %s: got %g, want %.17g, |err| %.3g > bound %.3g (ratio %.3g)",
				name, o.where(i), g, w, err, tol[i], err/tol[i])
		}
		s.Compared++
		if err == 0 {
			continue
		}
		// Plain comparisons: every value here is finite and non-negative, so
		// math.Max's NaN and signed-zero handling is not needed (and costs).
		if err > s.MaxAbs {
			s.MaxAbs = err
		}
		if w != 0 {
			if r := err / math.Abs(w); r > s.MaxRel {
				s.MaxRel = r
			}
		}
		if u := float64(oracle.ULPDistance32(got[i], float32(w))); u > s.MaxULP {
			s.MaxULP = u
		}
		if tol[i] > 0 {
			if r := err / tol[i]; r > s.MaxRatio {
				s.MaxRatio = r
			}
		}
	}
}

// Naive records the error of a naive float32 evaluation against the same
// oracle and tolerance, for the report's yardstick. It never fails the check.
func (o *Obs) Naive(naive []float32, want, tol []float64) {
	for i, w := range want {
		if math.IsNaN(w) || math.IsInf(w, 0) || tol[i] <= 0 {
			continue
		}
		if r := math.Abs(float64(naive[i])-w) / tol[i]; r > o.stats.NaiveMaxRatio && !math.IsNaN(r) {
			o.stats.NaiveMaxRatio = r
		}
	}
}

// Identical requires got and want to be bit-identical (what "deterministic"
// and "batch independent" mean).
func (o *Obs) Identical(name string, got, want []float32) {
	o.rt.Helper()
	if len(got) != len(want) {
		o.Fatalf("%s: length mismatch: %d vs %d", name, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			o.Fatalf("%s: %s: bits differ: %g (%08x) vs %g (%08x)", name, o.where(i),
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	o.stats.Compared += len(want)
}

// Ratio records an observed error/tolerance ratio measured by the caller
// (for scalar comparisons such as an adjoint identity) and fails when it
// exceeds 1.
func (o *Obs) Ratio(name string, err, tol float64) {
	o.rt.Helper()
	if math.IsNaN(err) || !(err <= tol) {
		o.Fatalf("%s: |err| %.3g > bound %.3g (ratio %.3g)", name, err, tol, err/tol)
	}
	o.stats.Compared++
	o.stats.MaxAbs = math.Max(o.stats.MaxAbs, err)
	if tol > 0 {
		o.stats.MaxRatio = math.Max(o.stats.MaxRatio, err/tol)
	}
}
