package properties

import (
	"errors"
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// Obs is handed to every check of a property: it compares kernel output with
// the oracle, accumulates error statistics for the report and fails the check,
// with the full case, when a bound is violated.
type Obs struct {
	rt   *rapid.T
	loop int // the rapid loop of the contract run this check is in (perLoop)
	ctx  string
	cols int
	// size is the last positive cols given to Context: the check's size
	// for the report's error against size (o.cols may be reset on the way).
	size  int
	stats errorStats
	// failRatio is |err|/tol of the comparison that failed the check.
	failRatio float64
	// storage is Config.Storage: outputs compared under a 16-bit role's
	// name get that format's rounding added to their bound.
	storage map[string]oracle.Storage
	// abort ends the contract run with a verdict, without shrinking (end).
	abort func(status outcome.Status, reason string)
	// refused hears why the implementation refused a draw (nil: no one).
	refused func(why string)
	// note, when set, is called on a failure of this check and its result
	// appended to the message (what may explain it). It is called only
	// then: a note can cost more to compute than the check.
	note func() string
	// lim draws the check's tensor offsets (offsets), which offs keeps
	// by operation name.
	lim  gen.Limits
	offs map[string]op.Offsets
}

// Context sets the description printed with every failure of this check, e.g.
// the shape and ε. cols, when positive, lets failures name row and column.
func (o *Obs) Context(cols int, format string, args ...any) {
	o.cols = cols
	if cols > 0 {
		o.size = cols
	}
	o.ctx = fmt.Sprintf(format, args...)
}

// Fatalf fails the check with the context prepended.
func (o *Obs) Fatalf(format string, args ...any) {
	o.rt.Helper()
	note := ""
	if o.note != nil {
		note = o.note()
	}
	o.rt.Fatalf("%s: %s%s", o.ctx, fmt.Sprintf(format, args...), note)
}

// ErrShapeRefused is wrapped by the error of an implementation that does
// not handle the drawn shape (a binding's constraints, such as hidden % 8 ==
// 0): Check then counts the draw as invalid, not as a counterexample, and
// rapid draws another.
var ErrShapeRefused = errors.New("the implementation does not handle this shape")

// ErrSetup is wrapped by the error of an implementation whose own
// description is at fault for the drawn problem, not what its kernel
// computes: a binding file whose expressions divide by zero or overflow at
// this shape, give an impossible geometry or a buffer over its cap, or
// bind too little for the contract. Check ends the contract run with the
// status error, as for a launch that cannot be set up (cudart.Setup).
var ErrSetup = errors.New("the implementation cannot set this problem up")

// Check fails the check with err, if err is not nil; an err wrapping
// ErrShapeRefused makes the draw invalid instead. A kernel's fault (out of
// bounds, a guard band, a modified input, a race, …) fails the check as a
// wrong result does, and rapid shrinks the case. Two kinds of error end
// the contract run at once instead, without shrinking: a liveness failure
// (a launch or launcher call that did not return within the watchdog,
// cudart.ErrTimeout), recorded falsified with the reason "liveness: …",
// since shrinking would wait the watchdog again at every step; and a
// failure to set the launch up (cudart.Setup: PTX that does not load, a
// missing entry, parameters that do not match, a device left unusable by
// an earlier timeout) or an implementation that cannot describe the
// problem (ErrSetup), recorded as an error, since it says nothing of what
// the kernel computes.
func (o *Obs) Check(what string, err error) {
	if err == nil {
		return
	}
	o.rt.Helper()
	switch {
	case errors.Is(err, ErrShapeRefused):
		if o.refused != nil {
			o.refused(fmt.Sprintf("%s: %v", what, err))
		}
		o.rt.Skipf("%s: %v", what, err) // an invalid draw: rapid draws another
	case errors.Is(err, cudart.ErrPoisoned):
		// Matches ErrTimeout too: the timeout was an earlier launch's.
		o.end(outcome.Errored, fmt.Sprintf("%s: %v", what, err))
	case errors.Is(err, cudart.ErrTimeout):
		o.end(outcome.Falsified, fmt.Sprintf("liveness: %s: %v", what, err))
	case cudart.Setup(err), errors.Is(err, ErrSetup):
		o.end(outcome.Errored, fmt.Sprintf("%s: %v", what, err))
	}
	o.Fatalf("%s: %v", what, err)
}

// end ends the contract run with status and reason through the function
// Check gave the Obs; it does not return. An Obs made elsewhere fails the
// check instead.
func (o *Obs) end(status outcome.Status, reason string) {
	o.rt.Helper()
	if o.abort != nil {
		o.abort(status, reason)
	}
}

func (o *Obs) where(i int) string {
	if o.cols > 0 {
		return fmt.Sprintf("element %d (row %d, col %d)", i, i/o.cols, i%o.cols)
	}
	return fmt.Sprintf("element %d", i)
}

// Within compares got with the float64 oracle want element by element:
// |got[i] − want[i]| ≤ tol[i], tol[i] widened in place by
// oracle.StorageTol when name is a role Config.Storage stores in 16 bits.
// Non-finite oracle values must be matched exactly in class (NaN by NaN,
// ±Inf by the same infinity); a finite oracle value must be matched by a
// finite result. It records the abs and err/tol
// statistics of every element, and the rel and ULP statistics of those
// whose bound is at most half |want| (outcome.Scaled).
func (o *Obs) Within(name string, got []float32, want, tol []float64) {
	o.rt.Helper()
	if len(got) != len(want) || len(tol) != len(want) {
		o.Fatalf("%s: length mismatch: got %d, want %d, tol %d", name, len(got), len(want), len(tol))
	}
	o.withinNaive(name, got, nil, want, tol, 0)
}

// withinNaive is Within on elements off, off+1, … of a comparison that is
// made in parts (failures name the element by its index in the whole; got,
// want and tol have equal lengths) and, when naive is not nil, Naive(naive,
// want, tol) in the same pass: the same failures and statistics.
func (o *Obs) withinNaive(name string, got, naive []float32, want, tol []float64, off int) {
	got, tol = got[:len(want)], tol[:len(want)]
	if s := o.storage[name]; s != oracle.StorageFloat32 {
		// A 16-bit output is the float32 result rounded once more: tol
		// widens in place, so a caller that keeps it has the stored
		// output's bound.
		for i, w := range want {
			tol[i] += oracle.StorageTol(s, w, tol[i])
		}
	}
	if naive != nil {
		naive = naive[:len(want)]
	}
	for i := 0; i < len(want); i++ {
		// withinRun takes the elements that are finite and within their
		// bound; the loop below sees the rest as the check always did.
		i += o.stats.withinRun(got[i:], naive, want[i:], tol[i:], i)
		if i == len(want) {
			break
		}
		o.rt.Helper() // here, not above: runtime.Callers costs more than a row
		if naive != nil {
			o.Naive(naive[i:i+1], want[i:i+1], tol[i:i+1])
		}
		g, w, t := float64(got[i]), want[i], tol[i]
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				o.Fatalf("%s: %s: got %g, want NaN", name, o.where(off+i), g)
			}
			continue
		case math.IsInf(w, 0):
			if g != w {
				o.Fatalf("%s: %s: got %g, want %g", name, o.where(off+i), g, w)
			}
			continue
		}
		err := math.Abs(g - w)
		if math.IsNaN(g) || math.IsInf(g, 0) || !(err <= t) {
			o.failRatio = err / t
			o.Fatalf("%s: %s: got %g, want %.17g, |err| %.3g > bound %.3g (ratio %.3g)",
				name, o.where(off+i), g, w, err, t, err/t)
		}
		// Finite, within the bound, yet the difference overflowed (an
		// infinite bound): recorded as any other element.
		o.stats.note(got[i], w, err, t)
	}
}

// errorStats is the statistics an Obs accumulates, with the methods that
// record comparisons.
type errorStats outcome.ErrorStats

// withinRun records the statistics of the leading elements whose oracle
// value and result are finite and within the bound, and returns how many
// there were; when naive is not nil it also records Naive's statistic of
// naive[off:] over those elements. Kept free of calls that fail the check,
// so that the compiler holds the loop in registers.
func (s *errorStats) withinRun(got, naive []float32, want, tol []float64, off int) int {
	// note, by hand, on locals: a call per element would keep them in memory.
	// An element with err = 0 changes no maximum, so it needs no test of
	// its own.
	n, nRel, maxAbs, maxRel, maxRatio, naiveMax := 0, 0, s.MaxAbs, s.MaxRel, s.MaxRatio, s.NaiveMaxRatio
	// The ULP distance as the extremes of a signed step count (ulpSteps);
	// the maximum distance is max(hiULP, −loULP).
	var hiULP, loULP int64
	got, tol = got[:len(want)], tol[:len(want)]
	withNaive := naive != nil
	if withNaive {
		naive = naive[off:][:len(want)]
	} else {
		naive = got // never read: one loop for both, without bounds checks
	}
	for i, w := range want {
		t := tol[i]
		g := got[i]
		err := math.Abs(float64(g) - w)
		// err is finite exactly when want and got are (unless the
		// difference overflowed, which the caller handles); err ≥ 0 or NaN,
		// so err ≤ MaxFloat64 says it is finite (a constant operand, where
		// math.Inf(1) is built through an integer register every time).
		if !(err <= t && err <= math.MaxFloat64) {
			break
		}
		n++
		if err > maxAbs {
			maxAbs = err
		}
		if aw := math.Abs(w); 2*t <= aw && w != 0 { // outcome.Scaled(w, t)
			nRel++
			if mayExceed(err, aw, maxRel) {
				if r := err / aw; r > maxRel {
					maxRel = r
				}
			}
			k := ulpSteps(g, float32(w)) // oracle.ULPDistance32(g, float32(w)) = |k|: neither is NaN here
			hiULP, loULP = max(hiULP, k), min(loULP, k)
		}
		if mayExceed(err, t, maxRatio) && t > 0 {
			if r := err / t; r > maxRatio {
				maxRatio = r
			}
		}
		// Naive, on an element whose w is finite: its ratio unless t = 0.
		if withNaive {
			if e := math.Abs(float64(naive[i]) - w); mayExceed(e, t, naiveMax) && t > 0 {
				if r := e / t; r > naiveMax && !math.IsNaN(r) {
					naiveMax = r
				}
			}
		}
	}
	s.Compared += n
	s.RelCompared += nRel
	s.MaxAbs, s.MaxRel, s.MaxRatio, s.NaiveMaxRatio = maxAbs, maxRel, maxRatio, naiveMax
	// float64 of an integer below 2^53 is exact.
	if u := float64(max(hiULP, -loULP)); u > s.MaxULP {
		s.MaxULP = u
	}
	return n
}

// ulpSteps returns an integer k with |k| = oracle.ULPDistance32(a, b) for a
// and b not NaN (TestULPSteps). Of equal signs, their bit patterns as int32
// differ by ± the number of float32 steps between them (the patterns of
// one sign are consecutive integers in the order of the magnitudes); of
// opposite signs, the distance is the sum of the magnitudes' patterns (+0
// and −0 both count as 0), a rare branch.
func ulpSteps(a, b float32) int64 {
	ba, bb := int32(math.Float32bits(a)), int32(math.Float32bits(b))
	if ba^bb < 0 {
		return int64(ba&0x7fffffff) + int64(bb&0x7fffffff)
	}
	return int64(ba) - int64(bb)
}

// note records one compared element. The comparisons are plain: every value
// here is non-negative and not NaN, so math.Max's NaN and signed-zero
// handling is not needed (and costs). The two quotients are only formed
// when they may exceed the current maximum (mayExceed), so the maxima are
// those of dividing at every element.
func (s *errorStats) note(got float32, w, err, t float64) {
	s.Compared++
	scaled := outcome.Scaled(w, t)
	if scaled {
		s.RelCompared++
	}
	if err == 0 {
		return
	}
	if err > s.MaxAbs {
		s.MaxAbs = err
	}
	if scaled {
		if aw := math.Abs(w); mayExceed(err, aw, s.MaxRel) {
			if r := err / aw; r > s.MaxRel {
				s.MaxRel = r
			}
		}
		if u := float64(oracle.ULPDistance32(got, float32(w))); u > s.MaxULP {
			s.MaxULP = u
		}
	}
	if t > 0 && mayExceed(err, t, s.MaxRatio) {
		if r := err / t; r > s.MaxRatio {
			s.MaxRatio = r
		}
	}
}

// mayExceed reports whether fl(num/den) > m may hold, for num ≥ 0, den ≥ 0
// and m ≥ 0 (not NaN), without dividing: it answers false only when
// num < fl(m·den). Rounding is monotone and num is a float64, so that
// implies num < m·den (fl(m·den) = +Inf only when m·den exceeds every
// float64), hence num/den < m and, m being a float64, fl(num/den) ≤ m: the
// caller may skip the division without changing the maximum it keeps.
func mayExceed(num, den, m float64) bool {
	return !(num < m*den)
}

// Naive records the error of a naive float32 evaluation against the same
// oracle and tolerance, for the report's yardstick. It never fails the check.
func (o *Obs) Naive(naive []float32, want, tol []float64) {
	naive, tol = naive[:len(want)], tol[:len(want)]
	m := o.stats.NaiveMaxRatio
	for i, w := range want {
		t := tol[i]
		if w-w != 0 || t <= 0 { // NaN or ±Inf oracle, or no bound
			continue
		}
		e := math.Abs(float64(naive[i]) - w)
		if !mayExceed(e, t, m) {
			continue
		}
		if r := e / t; r > m && !math.IsNaN(r) {
			m = r
		}
	}
	o.stats.NaiveMaxRatio = m
}

// Identical requires got and want to be bit-identical (what "deterministic"
// and "batch independent" mean).
func (o *Obs) Identical(name string, got, want []float32) {
	o.rt.Helper()
	if len(got) != len(want) {
		o.Fatalf("%s: length mismatch: %d vs %d", name, len(got), len(want))
	}
	if s := o.storage[name]; s != oracle.StorageFloat32 {
		// want as the implementation stores it: the float32 value rounded.
		r := make([]float32, len(want))
		for i, v := range want {
			r[i] = s.Round(v)
		}
		want = r
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			o.Fatalf("%s: %s: bits differ: %g (%08x) vs %g (%08x)", name, o.where(i),
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	o.stats.Compared += len(want)
}

// Ratiof is Ratio with the name formatted only on failure, for callers
// that check one ratio per element or row.
func (o *Obs) Ratiof(err, tol float64, format string, args ...any) {
	if math.IsNaN(err) || !(err <= tol) {
		o.rt.Helper()
		o.Ratio(fmt.Sprintf(format, args...), err, tol)
		return
	}
	o.Ratio("", err, tol)
}

// Ratio records an observed error/tolerance ratio measured by the caller
// (for scalar comparisons such as an adjoint identity) and fails when it
// exceeds 1. It records only the ratio: err is the caller's own quantity
// (e.g. a directional derivative's error), not an element's, so it enters
// Scalars and MaxRatio only, not the element statistics.
func (o *Obs) Ratio(name string, err, tol float64) {
	if math.IsNaN(err) || !(err <= tol) {
		o.rt.Helper() // here, not above: callers call Ratio per element, and runtime.Callers costs more than one
		o.failRatio = err / tol
		o.Fatalf("%s: |err| %.3g > bound %.3g (ratio %.3g)", name, err, tol, err/tol)
	}
	o.stats.Scalars++
	if tol > 0 {
		o.stats.MaxRatio = math.Max(o.stats.MaxRatio, err/tol)
	}
}
