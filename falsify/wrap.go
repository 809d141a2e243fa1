package falsify

import (
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties"
)

// tracer watches a mutant while the contracts run it: it counts the
// launches of the mutated code and, in differential mode, runs the
// original implementation on a copy of every call's arguments and compares
// the outputs bit for bit — the equivalence check of a surviving mutant.
type tracer struct {
	// mutated matches launches of mutated code; nil counts every launch an
	// implementation that differs from the original makes.
	mutated func(m cudart.Module, entry string) bool
	diff    bool
	// ref is where the original runs in differential mode (nil: the
	// device the contract gave the mutant). It must not be the contract's
	// device when the contract observes its device: FALSIFY-DIM-001 records
	// the modules launched on a device of its own, and the original's
	// launches there would read as the mutant launching another module.
	ref cudart.Device
	// limit, when set, bounds one launch of the mutant on dev: it is
	// called before the launch and the function it returns after it.
	limit func(dev cudart.Device, g cudart.Geometry, params []cudart.Param) func()

	mu        sync.Mutex
	launches  int // launches of mutated code
	calls     int // calls compared (differential mode, both sides succeeded)
	differing int // calls whose outputs differ
	firstDiff string
	elements  int     // output elements compared
	maxULP    float64 // largest float32 ULP distance from the original (+Inf: NaN against a number)
	// maxNorm is the largest normwise difference from the original, in
	// units of u = 2⁻²⁴: max|mutant − original| / max|original| over one
	// output of one call (+Inf when a value's class differs).
	maxNorm float64
	worst   string // where maxNorm was seen
}

func (tr *tracer) snapshot() (launches, calls, differing, elements int, first string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.launches, tr.calls, tr.differing, tr.elements, tr.firstDiff
}

// ulp32 is the distance between a and b in float32 ULPs: 0 for equal bits
// (or ±0), +Inf when one is NaN and the other is not.
func ulp32(a, b float32) float64 {
	if math.Float32bits(a) == math.Float32bits(b) || a == b {
		return 0
	}
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.Inf(1)
	}
	ord := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&0x80000000 != 0 {
			return -(u & 0x7FFFFFFF)
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

// tracedDevice is the device a mutated implementation is given: it counts
// the mutated launches and delegates everything else.
type tracedDevice struct {
	cudart.Device
	tr *tracer
}

func (d tracedDevice) Launch(m cudart.Module, entry string, g cudart.Geometry, params ...cudart.Param) error {
	if d.tr.mutated == nil || d.tr.mutated(m, entry) {
		d.tr.mu.Lock()
		d.tr.launches++
		d.tr.mu.Unlock()
	}
	if d.tr.limit != nil {
		defer d.tr.limit(d.Device, g, params)()
	}
	return d.Device.Launch(m, entry, g, params...)
}

// call runs the mutant (mut, on a traced device) and, in differential
// mode, the original (orig, on the same device, with its own output
// slices), then compares the outputs that both produced.
func (tr *tracer) call(what string, dev cudart.Device, mut, orig func(cudart.Device) error, got, want func() [][]float32) error {
	err := mut(tracedDevice{Device: dev, tr: tr})
	if !tr.diff || err != nil {
		return err
	}
	od := dev
	if tr.ref != nil {
		od = tr.ref
	}
	if oerr := orig(od); oerr != nil {
		return err
	}
	g, w := got(), want()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.calls++
	differs := false
	for i := range g {
		tr.elements += len(g[i])
		scale, diff, at := 0.0, 0.0, -1
		for j := range g[i] {
			a, b := float64(g[i][j]), float64(w[i][j])
			if !math.IsInf(b, 0) && b == b {
				scale = math.Max(scale, math.Abs(b))
			}
			if math.Float32bits(g[i][j]) == math.Float32bits(w[i][j]) {
				continue
			}
			if d := math.Abs(a - b); d == d && !math.IsInf(d, 0) {
				if d > diff {
					diff, at = d, j
				}
			} else if !(a != a && b != b) {
				diff, at = math.Inf(1), j
			}
			tr.maxULP = math.Max(tr.maxULP, ulp32(g[i][j], w[i][j]))
			if !differs {
				differs = true
				tr.differing++
				if tr.firstDiff == "" {
					tr.firstDiff = fmt.Sprintf("%s output %d element %d: %g (0x%08x), original %g (0x%08x)", what, i, j,
						g[i][j], math.Float32bits(g[i][j]), w[i][j], math.Float32bits(w[i][j]))
				}
			}
		}
		if diff > 0 {
			n := math.Inf(1)
			if scale > 0 && !math.IsInf(diff, 0) {
				n = diff / scale / 0x1p-24
			}
			if n > tr.maxNorm {
				tr.maxNorm = n
				tr.worst = fmt.Sprintf("%s output %d element %d of %d: %g, original %g, max|original| %g", what, i, at, len(g[i]), g[i][at], w[i][at], scale)
			}
		}
	}
	return err
}

// same reports whether two implementations are the same value (then the
// original need not be run beside it).
func same(a, b any) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// traced returns the implementation of operation o that a probe is given
// for a mutant: it runs mut through tr and, in differential mode, orig on
// the same inputs with outputs of its own.
func traced(tr *tracer, o properties.AnyOperation, mut, orig any) any {
	return o.Implement(func(dev cudart.Device, a any) error {
		b := o.Fresh(a)
		return tr.call(o.Table().Name(), dev,
			func(d cudart.Device) error { return o.Run(mut, d, a) },
			func(d cudart.Device) error { return o.Run(orig, d, b) },
			func() [][]float32 { return o.Outputs(a) }, func() [][]float32 { return o.Outputs(b) })
	}, mut)
}
