package falsify

import (
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
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
	if oerr := orig(dev); oerr != nil {
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

func clone(s []float32) []float32 {
	if s == nil {
		return nil
	}
	return make([]float32, len(s))
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

// The wrappers: one per interface the contracts take.

type rmsFwdW struct {
	pass
	tr        *tracer
	mut, orig properties.RMSNormForwarder
}

func (w rmsFwdW) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	b := *a
	b.Y, b.RMS = clone(a.Y), clone(a.RMS)
	return w.tr.call("rmsnorm forward", dev,
		func(d cudart.Device) error { return w.mut.RMSNormForward(d, a) },
		func(d cudart.Device) error { return w.orig.RMSNormForward(d, &b) },
		func() [][]float32 { return [][]float32{a.Y, a.RMS} }, func() [][]float32 { return [][]float32{b.Y, b.RMS} })
}

type rmsBwdW struct {
	pass
	tr        *tracer
	mut, orig properties.RMSNormBackwarder
}

func (w rmsBwdW) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	b := *a
	b.DX, b.DGamma = clone(a.DX), clone(a.DGamma)
	return w.tr.call("rmsnorm backward", dev,
		func(d cudart.Device) error { return w.mut.RMSNormBackward(d, a) },
		func(d cudart.Device) error { return w.orig.RMSNormBackward(d, &b) },
		func() [][]float32 { return [][]float32{a.DX, a.DGamma} }, func() [][]float32 { return [][]float32{b.DX, b.DGamma} })
}

type fusedW struct {
	pass
	tr        *tracer
	mut, orig properties.FusedResidualRMSNormer
}

func (w fusedW) FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	b := *a
	b.ResidualOut, b.Y = clone(a.ResidualOut), clone(a.Y)
	return w.tr.call("fused residual rmsnorm", dev,
		func(d cudart.Device) error { return w.mut.FusedResidualRMSNorm(d, a) },
		func(d cudart.Device) error { return w.orig.FusedResidualRMSNorm(d, &b) },
		func() [][]float32 { return [][]float32{a.ResidualOut, a.Y} }, func() [][]float32 { return [][]float32{b.ResidualOut, b.Y} })
}

type lnFwdW struct {
	pass
	tr        *tracer
	mut, orig properties.LayerNormForwarder
}

func (w lnFwdW) LayerNormForward(dev cudart.Device, a *op.LayerNormForwardArgs) error {
	b := *a
	b.Y, b.Mean, b.Rstd = clone(a.Y), clone(a.Mean), clone(a.Rstd)
	return w.tr.call("layernorm forward", dev,
		func(d cudart.Device) error { return w.mut.LayerNormForward(d, a) },
		func(d cudart.Device) error { return w.orig.LayerNormForward(d, &b) },
		func() [][]float32 { return [][]float32{a.Y, a.Mean, a.Rstd} }, func() [][]float32 { return [][]float32{b.Y, b.Mean, b.Rstd} })
}

type lnBwdW struct {
	pass
	tr        *tracer
	mut, orig properties.LayerNormBackwarder
}

func (w lnBwdW) LayerNormBackward(dev cudart.Device, a *op.LayerNormBackwardArgs) error {
	b := *a
	b.DX, b.DGamma, b.DBeta = clone(a.DX), clone(a.DGamma), clone(a.DBeta)
	return w.tr.call("layernorm backward", dev,
		func(d cudart.Device) error { return w.mut.LayerNormBackward(d, a) },
		func(d cudart.Device) error { return w.orig.LayerNormBackward(d, &b) },
		func() [][]float32 { return [][]float32{a.DX, a.DGamma, a.DBeta} }, func() [][]float32 { return [][]float32{b.DX, b.DGamma, b.DBeta} })
}

type perHeadW struct {
	pass
	tr        *tracer
	mut, orig properties.PerHeadRMSNormer
}

func (w perHeadW) PerHeadRMSNorm(dev cudart.Device, a *op.PerHeadRMSNormArgs) error {
	b := *a
	b.Y = clone(a.Y)
	return w.tr.call("per-head rmsnorm", dev,
		func(d cudart.Device) error { return w.mut.PerHeadRMSNorm(d, a) },
		func(d cudart.Device) error { return w.orig.PerHeadRMSNorm(d, &b) },
		func() [][]float32 { return [][]float32{a.Y} }, func() [][]float32 { return [][]float32{b.Y} })
}

type ropeW struct {
	pass
	tr        *tracer
	mut, orig properties.RoPEForwarder
}

func (w ropeW) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	b := *a
	b.Y = clone(a.Y)
	return w.tr.call("rope forward", dev,
		func(d cudart.Device) error { return w.mut.RoPEForward(d, a) },
		func(d cudart.Device) error { return w.orig.RoPEForward(d, &b) },
		func() [][]float32 { return [][]float32{a.Y} }, func() [][]float32 { return [][]float32{b.Y} })
}

type ropeBwdW struct {
	pass
	tr        *tracer
	mut, orig properties.RoPEBackwarder
}

func (w ropeBwdW) RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error {
	b := *a
	b.DX = clone(a.DX)
	return w.tr.call("rope backward", dev,
		func(d cudart.Device) error { return w.mut.RoPEBackward(d, a) },
		func(d cudart.Device) error { return w.orig.RoPEBackward(d, &b) },
		func() [][]float32 { return [][]float32{a.DX} }, func() [][]float32 { return [][]float32{b.DX} })
}

// pass is embedded in every wrapper: KernelLister and ReductionDescriber
// pass through to the wrapped mutant, so a contract sees what the mutant
// implementation itself exposes (nil, as good as absent to the contracts,
// when it exposes nothing).
type pass struct{ inner any }

// Kernels returns the wrapped implementation's kernels, if it lists them.
func (p pass) Kernels() []*kernels.Kernel {
	if l, ok := p.inner.(properties.KernelLister); ok {
		return l.Kernels()
	}
	return nil
}

// Reductions returns the wrapped implementation's sums, if it describes them.
func (p pass) Reductions(s op.Shape) []op.Reduction {
	if d, ok := p.inner.(properties.ReductionDescriber); ok {
		return d.Reductions(s)
	}
	return nil
}
