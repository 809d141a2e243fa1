package properties

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// refWithin is Obs.Within written plainly (as before the division-free
// statistics of commit 4e1ad7d, with the ULP distance of the reference copy
// of ULPDistance32, and the relative and ULP statistics over Scaled
// elements only), on stats, returning the failure message instead of failing.
func refWithin(s *outcome.ErrorStats, cols int, name string, got []float32, want, tol []float64) string {
	where := func(i int) string {
		if cols > 0 {
			return fmt.Sprintf("element %d (row %d, col %d)", i, i/cols, i%cols)
		}
		return fmt.Sprintf("element %d", i)
	}
	for i, w := range want {
		g := float64(got[i])
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				return fmt.Sprintf("%s: %s: got %g, want NaN", name, where(i), g)
			}
			continue
		case math.IsInf(w, 0):
			if g != w {
				return fmt.Sprintf("%s: %s: got %g, want %g", name, where(i), g, w)
			}
			continue
		}
		err := math.Abs(g - w)
		if math.IsNaN(g) || math.IsInf(g, 0) || !(err <= tol[i]) {
			return fmt.Sprintf("%s: %s: got %g, want %.17g, |err| %.3g > bound %.3g (ratio %.3g)",
				name, where(i), g, w, err, tol[i], err/tol[i])
		}
		s.Compared++
		if outcome.Scaled(w, tol[i]) {
			s.RelCompared++
		}
		if err == 0 {
			continue
		}
		if err > s.MaxAbs {
			s.MaxAbs = err
		}
		if outcome.Scaled(w, tol[i]) {
			if r := err / math.Abs(w); r > s.MaxRel {
				s.MaxRel = r
			}
			if u := float64(refULPDistance32(got[i], float32(w))); u > s.MaxULP {
				s.MaxULP = u
			}
		}
		if tol[i] > 0 {
			if r := err / tol[i]; r > s.MaxRatio {
				s.MaxRatio = r
			}
		}
	}
	return ""
}

// refNaive is Obs.Naive as it was.
func refNaive(s *outcome.ErrorStats, naive []float32, want, tol []float64) {
	for i, w := range want {
		if math.IsNaN(w) || math.IsInf(w, 0) || tol[i] <= 0 {
			continue
		}
		if r := math.Abs(float64(naive[i])-w) / tol[i]; r > s.NaiveMaxRatio && !math.IsNaN(r) {
			s.NaiveMaxRatio = r
		}
	}
}

// refULPDistance32 is oracle.ULPDistance32 as it was (with branches).
func refULPDistance32(a, b float32) uint64 {
	if a != a || b != b {
		return math.MaxUint64
	}
	key := func(f float32) int64 {
		bits := math.Float32bits(f)
		mag := int64(bits & 0x7fffffff)
		if bits&0x80000000 != 0 {
			return -mag
		}
		return mag
	}
	ka, kb := key(a), key(b)
	if ka > kb {
		return uint64(ka - kb)
	}
	return uint64(kb - ka)
}

// drawObsCase draws results, oracle values and bounds element by element
// from every class Within tells apart: errors within, at and beyond the
// bound, zero errors and zero oracles, subnormal and huge magnitudes, NaN
// and ±Inf matched or not, zero, infinite and NaN bounds.
func drawObsCase(t *rapid.T) (got, naive []float32, want, tol []float64) {
	n := rapid.IntRange(1, 40).Draw(t, "n")
	for i := 0; i < n; i++ {
		w := rapid.Float64Range(-4, 4).Draw(t, "w") * math.Pow(10, float64(rapid.IntRange(-45, 40).Draw(t, "exp")))
		switch rapid.IntRange(0, 9).Draw(t, "oracle") {
		case 0:
			w = 0
		case 1:
			w = rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}).Draw(t, "special")
		case 2:
			w = float64(float32(w)) // an exact result possible
		}
		g := float32(w)
		switch rapid.IntRange(0, 5).Draw(t, "result") {
		case 0:
			g = math.Nextafter32(g, float32(math.Inf(rapid.IntRange(-1, 1).Draw(t, "dir"))))
		case 1:
			g = float32(w * (1 + rapid.Float64Range(-1e-3, 1e-3).Draw(t, "rel")))
		case 2:
			g = rapid.SampledFrom([]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0}).Draw(t, "g special")
		}
		e := math.Abs(float64(g) - w)
		tl := e * rapid.SampledFrom([]float64{1, 1.5, 1e6, 0.5, 1 - 0x1p-52}).Draw(t, "tol/err")
		switch rapid.IntRange(0, 9).Draw(t, "bound") {
		case 0:
			tl = 0
		case 1:
			tl = math.Inf(1)
		case 2:
			tl = math.NaN()
		case 3:
			tl = math.Abs(w) * 0x1p-20
		}
		got, want, tol = append(got, g), append(want, w), append(tol, tl)
		naive = append(naive, float32(w*(1+rapid.Float64Range(-1e-6, 1e-6).Draw(t, "naive"))))
	}
	return
}

func sameStats(a, b outcome.ErrorStats) bool {
	f := math.Float64bits
	return a.Compared == b.Compared && a.RelCompared == b.RelCompared && a.Scalars == b.Scalars && f(a.MaxAbs) == f(b.MaxAbs) && f(a.MaxRel) == f(b.MaxRel) &&
		f(a.MaxULP) == f(b.MaxULP) && f(a.MaxRatio) == f(b.MaxRatio) && f(a.NaiveMaxRatio) == f(b.NaiveMaxRatio)
}

// Within and Naive, called apart or in one pass (withinNaive, as the
// forward checks compare), fail on the same element with the same message
// as before, and otherwise record the same statistics, bit for bit,
// starting from the statistics of earlier comparisons.
func TestWithinMatchesReference(t *testing.T) {
	for _, f := range []string{"rapid.checks", "rapid.nofailfile"} {
		old := flag.Lookup(f).Value.String()
		t.Cleanup(func() { flag.Set(f, old) })
	}
	flag.Set("rapid.nofailfile", "true")
	type result struct {
		stats outcome.ErrorStats
		fail  string
	}
	// run compares on a fresh Obs inside a quiet rapid run of identical
	// checks (5: at least one under -short, which divides by 5).
	run := func(start outcome.ErrorStats, cols int, got, naive []float32, want, tol []float64, onePass bool) result {
		flag.Set("rapid.checks", "5")
		var r result
		q := RunQuiet("within", Config{}, func(tb TB) {
			rapid.Check(tb, func(rt *rapid.T) {
				o := &Obs{rt: rt, stats: errorStats(start)}
				o.Context(cols, "ctx")
				if onePass {
					o.withinNaive("y", got, naive, want, tol, 0)
				} else {
					o.Within("y", got, want, tol)
					o.Naive(naive, want, tol)
				}
				r.stats = outcome.ErrorStats(o.stats)
			})
		})
		if q.Failed() {
			r.fail = strings.Join(q.Logs(), "\n")
		}
		return r
	}
	checks := 2000
	if testing.Short() {
		checks = 200
	}
	flag.Set("rapid.checks", fmt.Sprint(checks))
	rapid.Check(t, func(t *rapid.T) {
		got, naive, want, tol := drawObsCase(t)
		cols := rapid.IntRange(0, 5).Draw(t, "cols")
		var start outcome.ErrorStats
		if rapid.Bool().Draw(t, "earlier") { // statistics of earlier comparisons
			g0, _, w0, t0 := drawObsCase(t)
			refWithin(&start, 0, "x", g0, w0, t0)
		}
		want0 := start
		msg := refWithin(&want0, cols, "y", got, want, tol)
		if msg == "" {
			refNaive(&want0, naive, want, tol)
		}
		onePass := rapid.Bool().Draw(t, "one pass")
		r := run(start, cols, got, naive, want, tol, onePass)
		flag.Set("rapid.checks", fmt.Sprint(checks))
		if msg != "" {
			if !strings.Contains(r.fail, "ctx: "+msg) {
				t.Fatalf("want failure %q, got %q", msg, r.fail)
			}
			return
		}
		if r.fail != "" {
			t.Fatalf("failed: %s", r.fail)
		}
		if !sameStats(r.stats, want0) {
			t.Fatalf("stats %+v, want %+v", r.stats, want0)
		}
	})
}

// The exact ULP distance, not its reference copy, is what Within records.
func TestULPDistanceReferenceCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := math.Float32frombits(rapid.Uint32().Draw(t, "a"))
		b := math.Float32frombits(rapid.Uint32().Draw(t, "b"))
		if oracle.ULPDistance32(a, b) != refULPDistance32(a, b) {
			t.Fatalf("ULPDistance32(%g, %g) = %d, reference %d", a, b, oracle.ULPDistance32(a, b), refULPDistance32(a, b))
		}
	})
}

// mayExceed may only answer false when the quotient cannot exceed m: tried
// at and around the quotient, over the whole range (subnormal to huge).
func TestMayExceedIsSound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mag := func(label string) float64 {
			return math.Ldexp(rapid.Float64Range(1, 2).Draw(t, label), rapid.IntRange(-1074, 1023).Draw(t, label+".exp"))
		}
		num, den := mag("num"), mag("den")
		if rapid.IntRange(0, 9).Draw(t, "num zero") == 0 {
			num = 0
		}
		m := num / den
		switch rapid.IntRange(0, 3).Draw(t, "m") {
		case 0: // a few ulps around the quotient
			for k := rapid.IntRange(-4, 4).Draw(t, "ulps"); k != 0; k -= sign(k) {
				m = math.Nextafter(m, math.Inf(sign(k)))
			}
		case 1:
			m = mag("m free")
		case 2:
			m = 0
		}
		if math.IsInf(m, 0) || math.IsNaN(m) || m < 0 {
			return
		}
		if !mayExceed(num, den, m) && num/den > m {
			t.Fatalf("mayExceed(%g, %g, %g) = false, but %g/%g = %g > m", num, den, m, num, den, num/den)
		}
	})
}

func sign(k int) int {
	if k < 0 {
		return -1
	}
	return 1
}

// ulpSteps gives ULPDistance32 as |k|, over every pair of non-NaN float32
// values and pairs one step apart.
func TestULPSteps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pick := func(label string) float32 {
			v := math.Float32frombits(rapid.Uint32().Draw(t, label))
			if v != v {
				return float32(math.Inf(1))
			}
			return v
		}
		a, b := pick("a"), pick("b")
		if rapid.Bool().Draw(t, "near") {
			b = math.Nextafter32(a, b)
		}
		d := ulpSteps(a, b)
		if got, want := uint64(max(d, -d)), oracle.ULPDistance32(a, b); got != want {
			t.Fatalf("ulpSteps(%g, %g) = %d, ULPDistance32 %d", a, b, d, want)
		}
	})
}

// Every statistic means what its name says: Ratio's scalar enters only the
// ratio; the relative and ULP statistics skip elements whose bound allows
// more than half |want| (near zero, where RoPE's rotations cancel, a result
// within the bound may have either sign); the counts say what each maximum
// was taken over.
func TestStatisticsMeanWhatTheySay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		o := &Obs{rt: rt}
		// A directional derivative off by 100 against a bound of 200.
		o.Ratio("⟨dx, v⟩", 100, 200)
		if s := o.stats; s.Compared != 0 || s.MaxAbs != 0 || s.RelCompared != 0 || s.Scalars != 1 || s.MaxRatio != 0.5 {
			t.Fatalf("after Ratio: %+v, want only the ratio", s)
		}
		// want ≈ 0 (cancellation): a result of the other sign is within the
		// bound; its relative error (11) and ULP distance (~2e9) describe
		// want, not the result.
		o.Within("y", []float32{-1e-7}, []float64{1e-8}, []float64{1e-6})
		if s := o.stats; s.Compared != 1 || s.RelCompared != 0 || s.MaxRel != 0 || s.MaxULP != 0 || s.MaxAbs != float64(float32(1e-7))+1e-8 {
			t.Fatalf("after a near-zero element: %+v", s)
		}
		// An element the bound pins: one ULP from want = 1.
		o.Within("y", []float32{math.Nextafter32(1, 2)}, []float64{1}, []float64{1e-6})
		if s := o.stats; s.RelCompared != 1 || s.MaxULP != 1 || s.MaxRel != 0x1p-23 {
			t.Fatalf("after a scaled element: %+v", s)
		}
		// Bit-identical elements are compared elements with no error.
		o.Identical("r", []float32{3, 0}, []float32{3, 0})
		if s := o.stats; s.Compared != 4 || s.MaxULP != 1 {
			t.Fatalf("after Identical: %+v", s)
		}
		var m outcome.ErrorStats
		m.Merge(outcome.ErrorStats(o.stats))
		m.Merge(outcome.ErrorStats(o.stats))
		if m.Compared != 8 || m.RelCompared != 2 || m.Scalars != 2 || m.MaxULP != 1 {
			t.Fatalf("merged: %+v", m)
		}
	})
}
