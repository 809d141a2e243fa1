package properties

import (
	"bytes"
	"fmt"
	"math"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// parityReruns is how many more times a parity disagreement runs each
// side (the launch again on the same device, or the emulator under other
// schedule seeds) before it calls that side deterministic. It is paid only
// by a failing check: a non-determinism that shows once in three runs is
// then still told from a real disagreement most of the time.
const parityReruns = 2

// The classes of a parity disagreement (PARITY-001 and
// MULTI-DEVICE-PARITY-001), as the failure message names them.
const (
	// parityNondeterministic: a device's own runs of the same launch differ.
	parityNondeterministic = "non-deterministic"
	// parityScheduleDependent: the emulator under two schedules differs.
	parityScheduleDependent = "emulator non-deterministic under schedules"
	// parityFloatAtomics: both sides repeat their bits, but the kernel's
	// float atomics may sum in another order under a schedule not met.
	parityFloatAtomics = "schedule-dependent float atomics"
	// parityUnmodelled: both sides repeat their bits, and the kernel uses
	// approximate instructions the emulator does not compute as the GPU.
	parityUnmodelled = "unmodelled approximate instruction"
	// parityReal: both sides repeat their bits and nothing explains it.
	parityReal = "real disagreement"
)

// parityClass is the classification of one disagreement: class (one of
// the constants above, with the side where one is at fault) for the
// comparison's name, which the report's summary line shows, and detail,
// the evidence, for the end of the message.
type parityClass struct{ class, detail string }

// classified returns the note of a parity comparison: classify, computed
// at most once, and only when asked for (a failing check).
func classified(classify func() parityClass) func() parityClass {
	var c *parityClass
	return func() parityClass {
		if c == nil {
			c = new(classify())
		}
		return *c
	}
}

// parityDiffers reports whether got and ref disagree as the parity
// comparison judges them: bit for bit when tol is nil, else as Obs.Within
// does with ref as the float64 reference (a non-finite reference matched in
// class, a finite one by a finite value within tol).
func parityDiffers(got, ref []float32, tol []float64) bool {
	if len(got) != len(ref) || (tol != nil && len(tol) != len(ref)) {
		return true
	}
	if tol == nil {
		return firstBitDiff(got, ref) >= 0
	}
	for i, r := range ref {
		g, w := float64(got[i]), float64(r)
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				return true
			}
		case math.IsInf(w, 0):
			if g != w {
				return true
			}
		case math.IsNaN(g) || math.IsInf(g, 0) || !(math.Abs(g-w) <= tol[i]):
			return true
		}
	}
	return false
}

// firstBitDiff returns the first index where a and b differ in their bits
// (or the shorter length, when they differ in length), or -1.
func firstBitDiff(a, b []float32) int {
	for i := range min(len(a), len(b)) {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// rerunDiffers runs p on dev again, up to parityReruns times, each with
// fresh outputs, calling before(k) first for rerun k (1, 2, …) when it is
// not nil; it describes the first run whose bits differ from first
// ("runs 1 and 2 differ at dx[row 0, col 3]: …"), with what names the
// runs, or "" when every rerun repeats them. A rerun that fails says so:
// a launch that worked once and not again is no less an inconsistency.
func rerunDiffers(p problem, dev cudart.Device, first []float32, before func(k int), what func(k int) string) string {
	for k := 1; k <= parityReruns; k++ {
		if before != nil {
			before(k)
		}
		again, err := p.run(dev)
		if err != nil {
			return fmt.Sprintf("%s failed where %s had run: %v", what(k), what(0), err)
		}
		if i := firstBitDiff(again, first); i >= 0 {
			if i >= len(again) || i >= len(first) {
				return fmt.Sprintf("%s and %s give %d and %d values", what(0), what(k), len(first), len(again))
			}
			return fmt.Sprintf("%s and %s differ at %s: %g (%08x) vs %g (%08x)", what(0), what(k), p.element(i),
				first[i], math.Float32bits(first[i]), again[i], math.Float32bits(again[i]))
		}
	}
	return ""
}

// implSources returns the entries impl launches and the PTX of each, as it
// lists them (KernelLister) or names them for messages (entrySources);
// none when it does neither.
func implSources(impl any) (entries []string, srcs [][]byte) {
	if d, ok := impl.(describer); ok { // made by Func: what describes it lists them
		if desc, _ := d.describedBy(); desc != nil {
			return implSources(desc)
		}
	}
	switch l := impl.(type) {
	case KernelLister:
		for _, k := range l.Kernels() {
			entries, srcs = append(entries, k.Entry), append(srcs, k.PTX)
		}
	case entrySources:
		entries, srcs = l.EntrySources()
	}
	return entries, srcs
}

// floatAtomicSite names the first floating-point atomic in the entries
// impl launches ("atom.global.gpu.acq_rel.add.f32, PTX line 80 of
// rmsnorm_bwd_atomic_kernel"), or "" when there is none or impl does not
// list its kernels.
func floatAtomicSite(impl any) string {
	entries, srcs := implSources(impl)
	for i, src := range srcs {
		start := bytes.Index(src, []byte(".entry "+entries[i]+"("))
		if start < 0 {
			continue
		}
		body := entryBody(src, entries[i])
		if m := floatAtomic.FindIndex(body); m != nil {
			line := 1 + bytes.Count(src[:start+m[0]], []byte("\n"))
			return fmt.Sprintf("%s, PTX line %d of %s", body[m[0]:m[1]], line, entries[i])
		}
	}
	return ""
}

// byRowElement names element i of op.ByRow's slice of a's outputs: the
// output tensor and the row and column in it ("dx[row 2, col 5]",
// "rms[row 3]") or, past the row-wise outputs, the column-sum output's
// index ("dgamma[5]").
func byRowElement[A any](o *op.Op[A], a *A, i int) string {
	at, s := i, o.Shape(a)
	type out struct {
		name  string
		width int
		one   bool // a per-row value: named by its row alone
	}
	var rows, sums []out
	cols := 0
	for j, t := range o.Tensors() {
		if t.Role != op.Out || o.IsNil(a, j) {
			continue
		}
		if t.Layout == op.Row {
			rows = append(rows, out{t.Name, t.Cols.Of(s), t.Cols == op.One})
			cols += t.Cols.Of(s)
		} else {
			sums = append(sums, out{t.Name, len(*o.F32(a, j)), false})
		}
	}
	if n := s.Rows * cols; i < n {
		r, c := i/cols, i%cols
		for _, t := range rows {
			if c < t.width {
				if t.one {
					return fmt.Sprintf("%s[row %d]", t.name, r)
				}
				return fmt.Sprintf("%s[row %d, col %d]", t.name, r, c)
			}
			c -= t.width
		}
	} else {
		i -= n
		for _, t := range sums {
			if i < t.width {
				return fmt.Sprintf("%s[%d]", t.name, i)
			}
			i -= t.width
		}
	}
	return fmt.Sprintf("output element %d", at)
}
