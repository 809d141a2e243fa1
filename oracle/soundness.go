package oracle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Kernel names a kernel formula whose float32 naive evaluation, float64
// reference and error bound this package provides.
type Kernel int

// The kernels, in the order Kernels returns them.
const (
	KernelRMSNormForward Kernel = iota
	KernelRMSNormBackward
	KernelFusedResidualRMSNorm
	KernelLayerNormForward
	KernelLayerNormForwardOnePass
	KernelLayerNormBackward
	KernelPerHeadRMSNorm
	KernelRoPENeoXForward
	KernelRoPENeoXBackward
	KernelRoPEGPTJForward
	KernelSoftmaxForward
	KernelSoftmaxBackward
	numKernels
)

// Kernels returns every Kernel.
func Kernels() []Kernel {
	ks := make([]Kernel, numKernels)
	for i := range ks {
		ks[i] = Kernel(i)
	}
	return ks
}

// String returns the kernel's lower-case name; ParseKernel inverts it.
func (k Kernel) String() string {
	if k >= 0 && k < numKernels {
		return kernelTable[k].name
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// ParseKernel returns the Kernel whose String is s.
func ParseKernel(s string) (Kernel, error) {
	for i, r := range kernelTable {
		if r.name == s {
			return Kernel(i), nil
		}
	}
	return 0, fmt.Errorf("oracle: unknown kernel %q", s)
}

// Chooser is the source of the random choices GenerateCase makes, so that
// one case distribution can be drawn from math/rand (RandChooser) or from a
// property-based testing library that labels and shrinks each draw (a
// rapid adapter is one line per method). Every choice carries a label and
// returns the value it names, so a printed draw log reads as the case.
type Chooser interface {
	// IntRange returns an int in [lo, hi].
	IntRange(label string, lo, hi int) int
	// Float64Range returns a float64 in [lo, hi].
	Float64Range(label string, lo, hi float64) float64
	// SampleInt returns one of values.
	SampleInt(label string, values []int) int
	// SampleFloat64 returns one of values.
	SampleFloat64(label string, values []float64) float64
	// Uint64 returns a uint64 (seeds for bulk data).
	Uint64(label string) uint64
}

// RandChooser is a Chooser backed by math/rand/v2.
type RandChooser struct{ R *rand.Rand }

// IntRange implements Chooser.
func (c RandChooser) IntRange(_ string, lo, hi int) int { return lo + c.R.IntN(hi-lo+1) }

// Float64Range implements Chooser.
func (c RandChooser) Float64Range(_ string, lo, hi float64) float64 {
	return lo + (hi-lo)*c.R.Float64()
}

// SampleInt implements Chooser.
func (c RandChooser) SampleInt(_ string, values []int) int { return values[c.R.IntN(len(values))] }

// SampleFloat64 implements Chooser.
func (c RandChooser) SampleFloat64(_ string, values []float64) float64 {
	return values[c.R.IntN(len(values))]
}

// Uint64 implements Chooser.
func (c RandChooser) Uint64(string) uint64 { return c.R.Uint64() }

// Case is one soundness case: a kernel and its float32-representable inputs.
// For per-head and RoPE kernels Hidden = Heads·HeadDim. For the softmax
// backward X holds the forward's output y (a softmax rounded to float32). Eps and Theta are
// the nominal values; the float32 evaluation uses float32(Eps) and
// float32(Theta), and the bounds account for that rounding.
type Case struct {
	Kernel         Kernel
	Rows, Hidden   int
	Heads, HeadDim int
	Eps, Theta     float64
	X, Gamma, Beta []float64
	Residual, DY   []float64
	Pos            []float64
}

// String summarises the case's shape and scalars (not its data).
func (c Case) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v rows=%d hidden=%d", c.Kernel, c.Rows, c.Hidden)
	if c.Heads > 0 {
		fmt.Fprintf(&b, " heads=%d headDim=%d", c.Heads, c.HeadDim)
	}
	switch {
	case c.Kernel >= 0 && c.Kernel < numKernels && kernelTable[c.Kernel].noScalar:
	case c.Pos != nil:
		fmt.Fprintf(&b, " theta=%g pos=%v", c.Theta, c.Pos)
	default:
		fmt.Fprintf(&b, " eps=%g", c.Eps)
	}
	return b.String()
}

// Outcome is the worst element of one Case: the largest ratio
// |naive float32 − float64 reference| / bound over every output.
type Outcome struct {
	MaxRatio       float64
	Output         string // "y", "rms", "dx", "dgamma", "dbeta", "s", "mean", "rstd"
	Index          int
	Got, Want, Tol float64
	Elements       int // outputs compared
	// MaxRatioNormal is the largest ratio over elements whose reference
	// magnitude is at least NormalRange, where the bound's relative terms
	// (not the underflow floor) dominate.
	MaxRatioNormal float64
	// Adversarial says the float32 evaluation gave each approximate
	// instruction a value its documented error allows (Arith32).
	Adversarial bool
}

// NormalRange is the magnitude above which an element counts towards
// Outcome.MaxRatioNormal: far enough above 2^-126 that underflow floors are
// negligible in every bound.
const NormalRange = 0x1p-100

// String formats the worst element for a failure message.
func (o Outcome) String() string {
	adv := ""
	if o.Adversarial {
		adv = ", adversarial instructions"
	}
	return fmt.Sprintf("ratio=%.4g at %s[%d]: got=%.9g want=%.17g |err|=%.3g tol=%.3g (%d elements, normal-range ratio %.4g%s)",
		o.MaxRatio, o.Output, o.Index, o.Got, o.Want, math.Abs(o.Got-o.Want), o.Tol, o.Elements, o.MaxRatioNormal, adv)
}

// ErrorRatio returns |got − want|/tol, 0 when both the error and tol are 0,
// and +Inf when the error is positive and tol is 0 or got is NaN.
func ErrorRatio(got, want, tol float64) float64 {
	if got != got && want == want {
		return math.Inf(1)
	}
	e := math.Abs(got - want)
	if e == 0 || (got == want) {
		return 0
	}
	if tol == 0 {
		return math.Inf(1)
	}
	return e / tol
}

// oracleSlack widens each bound by 2^-20 of itself when comparing against
// the float64 reference: the reference's own error (≲ 2^-50 of the
// magnitudes involved) is then covered, since every bound is at least
// U32 = 2^-24 times those magnitudes or the underflow floor.
const oracleSlack = 1 + 0x1p-20

func (o *Outcome) compare(name string, got []float32, want, tol []float64) {
	for i := range want {
		r := ErrorRatio(float64(got[i]), want[i], tol[i]*oracleSlack)
		o.Elements++
		if math.Abs(want[i]) >= NormalRange && r > o.MaxRatioNormal {
			o.MaxRatioNormal = r
		}
		if r > o.MaxRatio || (o.Output == "" && i == 0) {
			o.MaxRatio, o.Output, o.Index, o.Got, o.Want, o.Tol = r, name, i, float64(got[i]), want[i], tol[i]
		}
	}
}

// outputs32 holds the float32 outputs a kernel computed for a Case and
// outputs64 the reference or its bound; an output the kernel does not
// produce is nil.
type (
	outputs32 struct{ s, y, rms, mean, rstd, dx, dgamma, dbeta []float32 }
	outputs64 struct{ s, y, rms, mean, rstd, dx, dgamma, dbeta []float64 }
)

// normShape returns the rows and row length of c's normalisation: a
// per-head RMSNorm normalises each head.
func (c Case) normShape() (rows, hidden int) {
	if c.Kernel == KernelPerHeadRMSNorm {
		return c.Rows * c.Heads, c.HeadDim
	}
	return c.Rows, c.Hidden
}

// variance returns the variance algorithm of c's LayerNorm forward.
func (c Case) variance() VarianceAlgorithm {
	if c.Kernel == KernelLayerNormForwardOnePass {
		return OnePassVariance
	}
	return TwoPassVariance
}

// rotation returns the pairing and direction of c's RoPE kernel and its
// input: dy for the backward, x for the forwards.
func (c Case) rotation() (style RoPEStyle, sign float64, in []float64) {
	switch c.Kernel {
	case KernelRoPEGPTJForward:
		return RoPEGPTJ, 1, c.X
	case KernelRoPENeoXBackward:
		return RoPENeoX, -1, c.DY
	}
	return RoPENeoX, 1, c.X
}

// kernelRow is one kernel formula of the soundness check: its name, the
// operation of package op it evaluates, and how a Case of it is drawn,
// referenced in float64 and evaluated naively in float32. Adding a formula
// is one row here (and its constant above); nothing else switches on it.
type kernelRow struct {
	name string
	// op is the op table's name of the operation the formula evaluates;
	// "" for a formula that is none (the GPT-J pairing, kept to be refuted).
	op string
	// noScalar says the case has neither ε nor θ (softmax).
	noScalar bool
	// draw fills c (whose Rows are drawn) from ch.
	draw func(c *Case, ch Chooser)
	// reference returns the float64 outputs and their bounds for
	// reductions red over a row and rowRed over rows.
	reference func(c Case, red, rowRed Reduction) (want, tol outputs64)
	// naive evaluates c in float32 in serial order with the approximate
	// instructions of ar; a non-nil Outcome ends the check with it (a
	// bit-exact output that is not).
	naive func(c Case, ar Arith32) (outputs32, *Outcome)
}

func f64(k int) []float64 { return make([]float64, k) }
func f32(k int) []float32 { return make([]float32, k) }

var kernelTable = [numKernels]kernelRow{
	KernelRMSNormForward: {name: "rmsnorm_fwd", op: "rmsnorm.forward", draw: drawNorm(nil),
		reference: rmsForwardReference, naive: rmsForwardNaive},
	KernelRMSNormBackward: {name: "rmsnorm_bwd", op: "rmsnorm.backward", draw: drawNorm(drawDY),
		reference: func(c Case, red, rowRed Reduction) (want, tol outputs64) {
			n := c.Rows * c.Hidden
			want.dx, want.dgamma, tol.dx, tol.dgamma = f64(n), f64(c.Hidden), f64(n), f64(c.Hidden)
			RMSNormBackwardWithTol(want.dx, want.dgamma, tol.dx, tol.dgamma, nil, c.X, c.Gamma, c.DY, c.Rows, c.Hidden, c.Eps, red, rowRed)
			return
		},
		naive: func(c Case, ar Arith32) (got outputs32, _ *Outcome) {
			got.dx, got.dgamma = f32(c.Rows*c.Hidden), f32(c.Hidden)
			rmsNormBackward32(got.dx, got.dgamma, to32(c.X), to32(c.Gamma), to32(c.DY), c.Rows, c.Hidden, float32(c.Eps), ar)
			return
		}},
	KernelFusedResidualRMSNorm: {name: "fused_residual_rmsnorm", op: "fused_residual_rmsnorm",
		draw: drawNorm(func(c *Case, ch Chooser) {
			c.Residual = make([]float64, c.Rows*c.Hidden)
			fillRows(ch, "residual", c.Residual, c.Rows, c.Hidden)
		}),
		reference: func(c Case, red, _ Reduction) (want, tol outputs64) {
			n := c.Rows * c.Hidden
			want.s, want.y, want.rms, tol.s, tol.y, tol.rms = f64(n), f64(n), f64(c.Rows), f64(n), f64(n), f64(c.Rows)
			FusedResidualRMSNorm(want.s, want.y, want.rms, c.Residual, c.X, c.Gamma, c.Rows, c.Hidden, c.Eps)
			FusedResidualRMSNormTol(tol.s, tol.y, tol.rms, c.Residual, c.X, c.Gamma, c.Rows, c.Hidden, c.Eps, red)
			return
		},
		naive: func(c Case, ar Arith32) (got outputs32, _ *Outcome) {
			n := c.Rows * c.Hidden
			got.s, got.y, got.rms = f32(n), f32(n), f32(c.Rows)
			res32, x32 := to32(c.Residual), to32(c.X)
			fusedResidualRMSNorm32(got.s, got.y, got.rms, res32, x32, to32(c.Gamma), c.Rows, c.Hidden, float32(c.Eps), ar)
			for i, v := range got.s {
				if s := c.Residual[i] + c.X[i]; v != float32(s) || v != ResidualSum32(res32[i], x32[i]) {
					return got, &Outcome{MaxRatio: math.Inf(1), Output: "s(bit-exact)", Index: i, Got: float64(v), Want: s, Tol: 0, Elements: n}
				}
			}
			return
		}},
	KernelLayerNormForward: {name: "layernorm_fwd", op: "layernorm.forward", draw: drawNorm(drawBeta),
		reference: lnForwardReference, naive: lnForwardNaive},
	KernelLayerNormForwardOnePass: {name: "layernorm_fwd_onepass", op: "layernorm.forward", draw: drawNorm(drawBeta),
		reference: lnForwardReference, naive: lnForwardNaive},
	KernelLayerNormBackward: {name: "layernorm_bwd", op: "layernorm.backward", draw: drawNorm(drawDY),
		reference: func(c Case, red, rowRed Reduction) (want, tol outputs64) {
			n := c.Rows * c.Hidden
			want.dx, want.dgamma, want.dbeta, tol.dx, tol.dgamma, tol.dbeta = f64(n), f64(c.Hidden), f64(c.Hidden), f64(n), f64(c.Hidden), f64(c.Hidden)
			LayerNormBackward(want.dx, want.dgamma, want.dbeta, c.X, c.Gamma, c.DY, c.Rows, c.Hidden, c.Eps)
			LayerNormBackwardTol(tol.dx, tol.dgamma, tol.dbeta, c.X, c.Gamma, c.DY, c.Rows, c.Hidden, c.Eps, red, rowRed)
			return
		},
		naive: func(c Case, ar Arith32) (got outputs32, _ *Outcome) {
			got.dx, got.dgamma, got.dbeta = f32(c.Rows*c.Hidden), f32(c.Hidden), f32(c.Hidden)
			layerNormBackward32(got.dx, got.dgamma, got.dbeta, to32(c.X), to32(c.Gamma), to32(c.DY), c.Rows, c.Hidden, float32(c.Eps), ar)
			return
		}},
	KernelPerHeadRMSNorm: {name: "perhead_rmsnorm", op: "per_head_rmsnorm", draw: drawPerHead,
		reference: rmsForwardReference, naive: rmsForwardNaive},
	KernelRoPENeoXForward:  {name: "rope_neox_fwd", op: "rope.neox.forward", draw: drawRoPE, reference: ropeReference, naive: ropeNaive},
	KernelRoPENeoXBackward: {name: "rope_neox_bwd", op: "rope.neox.backward", draw: drawRoPE, reference: ropeReference, naive: ropeNaive},
	KernelRoPEGPTJForward:  {name: "rope_gptj_fwd", draw: drawRoPE, reference: ropeReference, naive: ropeNaive},
	KernelSoftmaxForward: {name: "softmax_fwd", op: "softmax.forward", noScalar: true,
		draw: drawNorm(func(c *Case, _ Chooser) { c.Gamma, c.Eps = nil, 0 }),
		reference: func(c Case, red, _ Reduction) (want, tol outputs64) {
			n := c.Rows * c.Hidden
			want.y, tol.y = f64(n), f64(n)
			SoftmaxForward(want.y, c.X, c.Rows, c.Hidden)
			SoftmaxForwardTol(tol.y, c.X, c.Rows, c.Hidden, red)
			return
		},
		naive: func(c Case, ar Arith32) (got outputs32, _ *Outcome) {
			got.y = f32(c.Rows * c.Hidden)
			softmaxForward32(got.y, to32(c.X), c.Rows, c.Hidden, ar)
			return
		}},
	KernelSoftmaxBackward: {name: "softmax_bwd", op: "softmax.backward", noScalar: true,
		// X becomes y = softmax(logits) in float32.
		draw: drawNorm(func(c *Case, ch Chooser) {
			n := c.Rows * c.Hidden
			c.Gamma, c.Eps = nil, 0
			y := make([]float64, n)
			SoftmaxForward(y, c.X, c.Rows, c.Hidden)
			c.X = RoundToFloat32(y)
			c.DY = make([]float64, n)
			fillRows(ch, "dy", c.DY, c.Rows, c.Hidden)
		}),
		reference: func(c Case, red, _ Reduction) (want, tol outputs64) {
			n := c.Rows * c.Hidden
			want.dx, tol.dx = f64(n), f64(n)
			SoftmaxBackward(want.dx, c.X, c.DY, c.Rows, c.Hidden)
			SoftmaxBackwardTol(tol.dx, c.X, c.DY, c.Rows, c.Hidden, red)
			return
		},
		naive: func(c Case, _ Arith32) (got outputs32, _ *Outcome) {
			got.dx = f32(c.Rows * c.Hidden)
			SoftmaxBackward32Naive(got.dx, to32(c.X), to32(c.DY), c.Rows, c.Hidden)
			return
		}},
}

// Op returns the op table's name of the operation k evaluates; "" when it
// is none (the GPT-J pairing, kept to be refuted).
func (k Kernel) Op() string {
	if k >= 0 && k < numKernels {
		return kernelTable[k].op
	}
	return ""
}

func (k Kernel) row() kernelRow {
	if k >= 0 && k < numKernels {
		return kernelTable[k]
	}
	panic(fmt.Sprintf("oracle: unknown kernel %v", k))
}

func rmsForwardReference(c Case, red, _ Reduction) (want, tol outputs64) {
	n := c.Rows * c.Hidden
	rows, hid := c.normShape()
	want.y, want.rms, tol.y, tol.rms = f64(n), f64(rows), f64(n), f64(rows)
	RMSNormForwardWithTol(want.y, want.rms, tol.y, tol.rms, c.X, c.Gamma, rows, hid, c.Eps, red)
	return
}

func rmsForwardNaive(c Case, ar Arith32) (got outputs32, _ *Outcome) {
	rows, hid := c.normShape()
	got.y, got.rms = f32(c.Rows*c.Hidden), f32(rows)
	rmsNormForward32(got.y, got.rms, to32(c.X), to32(c.Gamma), rows, hid, float32(c.Eps), ar)
	return
}

func lnForwardReference(c Case, red, _ Reduction) (want, tol outputs64) {
	n := c.Rows * c.Hidden
	want.y, want.mean, want.rstd, tol.y, tol.mean, tol.rstd = f64(n), f64(c.Rows), f64(c.Rows), f64(n), f64(c.Rows), f64(c.Rows)
	LayerNormForward(want.y, want.mean, want.rstd, c.X, c.Gamma, c.Beta, c.Rows, c.Hidden, c.Eps)
	LayerNormForwardTol(tol.y, tol.mean, tol.rstd, c.X, c.Gamma, c.Beta, c.Rows, c.Hidden, c.Eps, red, c.variance())
	return
}

func lnForwardNaive(c Case, ar Arith32) (got outputs32, _ *Outcome) {
	got.y, got.mean, got.rstd = f32(c.Rows*c.Hidden), f32(c.Rows), f32(c.Rows)
	layerNormForward32(got.y, got.mean, got.rstd, to32(c.X), to32(c.Gamma), to32(c.Beta), c.Rows, c.Hidden, float32(c.Eps),
		c.variance() == OnePassVariance, ar)
	return
}

func ropeReference(c Case, _, _ Reduction) (want, tol outputs64) {
	n := c.Rows * c.Hidden
	style, sign, in := c.rotation()
	y, t := f64(n), f64(n)
	rope(y, in, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, sign)
	RoPETol(t, in, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, sign)
	if sign < 0 {
		want.dx, tol.dx = y, t
	} else {
		want.y, tol.y = y, t
	}
	return
}

func ropeNaive(c Case, ar Arith32) (got outputs32, _ *Outcome) {
	style, sign, in := c.rotation()
	y := f32(c.Rows * c.Hidden)
	rope32(y, to32(in), c.Pos, c.Rows, c.Heads, c.HeadDim, float32(c.Theta), style, float32(sign), ar)
	if sign < 0 {
		got.dx = y
	} else {
		got.y = y
	}
	return
}

// reference returns the float64 reference outputs of c's kernel and their
// bounds for reductions red over a row and rowRed over rows.
func (c Case) reference(red, rowRed Reduction) (want, tol outputs64) {
	return c.Kernel.row().reference(c, red, rowRed)
}

// compare compares the outputs got of a float32 evaluation of c's kernel
// with the float64 reference, within the bounds for reductions red and
// rowRed (see reference), and returns the worst element.
func (c Case) compare(got outputs32, red, rowRed Reduction) Outcome {
	want, tol := c.reference(red, rowRed)
	return compareOutputs(got, want, tol)
}

// compareOutputs returns the worst element of got against want within tol.
func compareOutputs(got outputs32, want, tol outputs64) Outcome {
	var o Outcome
	for _, out := range []struct {
		name      string
		got       []float32
		want, tol []float64
	}{
		{"s", got.s, want.s, tol.s},
		{"y", got.y, want.y, tol.y},
		{"rms", got.rms, want.rms, tol.rms},
		{"mean", got.mean, want.mean, tol.mean},
		{"rstd", got.rstd, want.rstd, tol.rstd},
		{"dx", got.dx, want.dx, tol.dx},
		{"dgamma", got.dgamma, want.dgamma, tol.dgamma},
		{"dbeta", got.dbeta, want.dbeta, tol.dbeta},
	} {
		if out.got != nil {
			o.compare(out.name, out.got, out.want, out.tol)
		}
	}
	return o
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// Check evaluates the case's kernel in float32 (the *32Naive functions,
// serial order), the float64 reference and the bound for SerialReduction,
// and returns the worst element. For the fused kernel, an s that is not
// bit-identical to fl32(residual + x) yields ratio +Inf.
func (c Case) Check() Outcome { return c.CheckWith(Arith32{}) }

// CheckWith is Check with the approximate instructions of ar: under
// Arith32.Adversarial every division, square root, exp2 and log2 of the
// float32 evaluation takes a value its documented error allows, usually
// the worst, and the bound must still hold.
func (c Case) CheckWith(ar Arith32) Outcome {
	got, o := c.Kernel.row().naive(c, ar)
	if o != nil {
		o.Adversarial = ar.Adversarial
		return *o
	}
	ser := SerialReduction()
	out := c.compare(got, ser, ser)
	out.Adversarial = ar.Adversarial
	return out
}

// CheckAdversarial evaluates the case as Check does and again with every
// approximate instruction adversarial (Arith32{Adversarial: true, Seed:
// seed}), against one reference and bound, and returns the worse outcome.
func (c Case) CheckAdversarial(seed uint64) Outcome {
	ser := SerialReduction()
	want, tol := c.reference(ser, ser)
	var worst Outcome
	normal := 0.0
	for i, ar := range []Arith32{{}, {Adversarial: true, Seed: seed}} {
		got, o := c.Kernel.row().naive(c, ar)
		var out Outcome
		if o != nil {
			out = *o
		} else {
			out = compareOutputs(got, want, tol)
		}
		out.Adversarial = ar.Adversarial
		normal = math.Max(normal, out.MaxRatioNormal)
		if i == 0 || out.MaxRatio > worst.MaxRatio {
			worst = out
		}
	}
	worst.MaxRatioNormal = normal
	return worst
}

// HiddenGrid is the edge grid of row lengths GenerateCase draws from before
// trying random lengths: warp and block boundaries and their neighbours.
var HiddenGrid = []int{1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 4097}

// PositionGrid is the edge grid of RoPE positions.
var PositionGrid = []float64{0, 1, 2, 3, 1023, 4095, 4096, 8191, 32767, 32768, 65535, 65536, 131071, 131072}

// HeadDimGrid is the edge grid of RoPE head dimensions (even).
var HeadDimGrid = []int{2, 4, 8, 32, 64, 80, 96, 128, 256}

// ThetaGrid holds the RoPE bases used by common models.
var ThetaGrid = []float64{1e4, 5e5, 1e6}

func logUniform(ch Chooser, label string, lo, hi float64) float64 {
	return math.Pow(10, ch.Float64Range(label+".log10", lo, hi))
}

func drawEps(ch Chooser) float64 {
	switch ch.SampleInt("eps.kind", []int{0, 1, 2}) {
	case 0:
		return 1e-5
	case 1:
		return 1e-6
	}
	return logUniform(ch, "eps", -8, -2)
}

// labelHash is FNV-1a of a label: it selects the PCG stream of a draw, so
// equal seeds drawn for different labels still give different data.
func labelHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// ValueKinds are the row distributions of generated data.
var ValueKinds = []string{"normal", "mixed", "constant", "zero", "tiny", "offset", "positive"}

func drawKind(ch Chooser, label string, kinds []string) string {
	idx := make([]int, len(kinds))
	for i := range idx {
		idx[i] = i
	}
	return kinds[ch.SampleInt(label+".kind("+strings.Join(kinds, "|")+")", idx)]
}

// fillRows fills rows of dst (row length w) with float32-representable
// values; each row draws its own distribution and seed.
func fillRows(ch Chooser, label string, dst []float64, rows, w int) {
	for r := 0; r < rows; r++ {
		row := dst[r*w : (r+1)*w]
		p := fmt.Sprintf("%s[%d]", label, r)
		kind := drawKind(ch, p, ValueKinds)
		scale := 1.0
		if kind == "normal" || kind == "constant" || kind == "positive" {
			scale = logUniform(ch, p+".scale", -6, 3)
		}
		rng := rand.New(rand.NewPCG(ch.Uint64(p+".seed"), labelHash(p)))
		switch kind {
		case "normal":
			for i := range row {
				row[i] = rng.NormFloat64() * scale
			}
		case "mixed":
			for i := range row {
				row[i] = rng.NormFloat64() * math.Pow(10, -6+9*rng.Float64())
			}
		case "constant":
			v := scale
			if rng.IntN(2) == 0 {
				v = -v
			}
			fill(row, v)
		case "zero":
			clear(row)
		case "tiny":
			for i := range row {
				row[i] = rng.NormFloat64() * math.Pow(10, -45+9*rng.Float64())
			}
		case "offset":
			mu := math.Pow(10, -3+6*rng.Float64())
			if rng.IntN(2) == 0 {
				mu = -mu
			}
			noise := math.Abs(mu) * math.Pow(10, -7+6*rng.Float64())
			for i := range row {
				row[i] = mu + noise*rng.NormFloat64()
			}
		case "positive":
			for i := range row {
				row[i] = rng.Float64() * scale
			}
		}
		RoundToFloat32(row)
	}
}

// GammaKinds are the distributions of γ (and β) vectors.
var GammaKinds = []string{"ones", "near-one", "scaled", "sparse", "constant"}

func fillGamma(ch Chooser, label string, dst []float64) {
	kind := drawKind(ch, label, GammaKinds)
	rng := rand.New(rand.NewPCG(ch.Uint64(label+".seed"), labelHash(label)))
	switch kind {
	case "ones":
		fill(dst, 1)
	case "near-one":
		for i := range dst {
			dst[i] = 1 + 0.1*rng.NormFloat64()
		}
	case "scaled":
		s := logUniform(ch, label+".scale", -3, 1)
		for i := range dst {
			dst[i] = s * rng.NormFloat64()
		}
	case "sparse":
		for i := range dst {
			if rng.IntN(4) != 0 {
				dst[i] = rng.NormFloat64()
			} else {
				dst[i] = 0
			}
		}
	case "constant":
		fill(dst, logUniform(ch, label+".scale", -3, 1))
	}
	RoundToFloat32(dst)
}

// fill sets every element of dst to v and returns dst.
func fill(dst []float64, v float64) []float64 {
	for i := range dst {
		dst[i] = v
	}
	return dst
}

func drawHidden(ch Chooser) int {
	if ch.SampleInt("hidden.fromGrid", []int{1, 0}) == 1 {
		return ch.SampleInt("hidden", HiddenGrid)
	}
	return ch.IntRange("hidden", 1, 4097)
}

// GenerateCase draws a Case for kernel k: rows 1..4; row lengths from
// HiddenGrid or uniform in [1, 4097]; per-row data (ValueKinds)
// normal×10^U(−6,3), mixed-scale, constant, zero, tiny (subnormal float32),
// offset (|μ| ≫ σ) or positive; γ (GammaKinds) ones, near one, random scale,
// sparse or constant; eps 1e-5, 1e-6 or log-uniform in [1e-8, 1e-2]; θ from
// ThetaGrid or log-uniform in [1e2, 1e7]; positions from PositionGrid,
// uniform integers in [0, 131072] or small. Every choice is labelled.
func GenerateCase(k Kernel, ch Chooser) Case {
	c := Case{Kernel: k, Rows: ch.IntRange("rows", 1, 4)}
	k.row().draw(&c, ch)
	return c
}

// drawRoPE draws a RoPE case: head_dim, heads, θ, a position per row and x
// (which is also dy, for the backward).
func drawRoPE(c *Case, ch Chooser) {
	if ch.SampleInt("headDim.fromGrid", []int{1, 0}) == 1 {
		c.HeadDim = ch.SampleInt("headDim", HeadDimGrid)
	} else {
		c.HeadDim = 2 * ch.IntRange("headDim/2", 1, 128)
	}
	c.Heads = ch.IntRange("heads", 1, 4)
	c.Hidden = c.Heads * c.HeadDim
	if ch.SampleInt("theta.fromGrid", []int{1, 0}) == 1 {
		c.Theta = ch.SampleFloat64("theta", ThetaGrid)
	} else {
		c.Theta = logUniform(ch, "theta", 2, 7)
	}
	c.Pos = make([]float64, c.Rows)
	for r := range c.Pos {
		l := fmt.Sprintf("pos[%d]", r)
		switch ch.SampleInt(l+".kind(grid|uniform|small)", []int{0, 1, 2}) {
		case 0:
			c.Pos[r] = ch.SampleFloat64(l, PositionGrid)
		case 1:
			c.Pos[r] = float64(ch.IntRange(l, 0, 131072))
		default:
			c.Pos[r] = float64(ch.IntRange(l, 0, 63))
		}
	}
	c.X = make([]float64, c.Rows*c.Hidden)
	c.DY = c.X
	fillRows(ch, "x", c.X, c.Rows, c.Hidden)
}

// drawPerHead draws a per-head RMSNorm case: head_dim, heads, ε, x by
// head and γ[head_dim].
func drawPerHead(c *Case, ch Chooser) {
	if ch.SampleInt("headDim.fromGrid", []int{1, 0}) == 1 {
		c.HeadDim = ch.SampleInt("headDim", []int{1, 2, 31, 32, 33, 64, 128, 256})
	} else {
		c.HeadDim = ch.IntRange("headDim", 1, 256)
	}
	c.Heads = ch.IntRange("heads", 1, 8)
	c.Hidden = c.Heads * c.HeadDim
	c.Eps = drawEps(ch)
	c.X = make([]float64, c.Rows*c.Hidden)
	fillRows(ch, "x", c.X, c.Rows*c.Heads, c.HeadDim)
	c.Gamma = make([]float64, c.HeadDim)
	fillGamma(ch, "gamma", c.Gamma)
}

// drawNorm returns the draw of a row-wise case: hidden, ε, x and γ, then
// what more draws (nil: nothing).
func drawNorm(more func(c *Case, ch Chooser)) func(c *Case, ch Chooser) {
	return func(c *Case, ch Chooser) {
		c.Hidden = drawHidden(ch)
		c.Eps = drawEps(ch)
		n := c.Rows * c.Hidden
		c.X = make([]float64, n)
		fillRows(ch, "x", c.X, c.Rows, c.Hidden)
		c.Gamma = make([]float64, c.Hidden)
		fillGamma(ch, "gamma", c.Gamma)
		if more != nil {
			more(c, ch)
		}
	}
}

// drawDY draws the upstream gradient of a backward.
func drawDY(c *Case, ch Chooser) {
	c.DY = make([]float64, c.Rows*c.Hidden)
	fillRows(ch, "dy", c.DY, c.Rows, c.Hidden)
}

// drawBeta draws LayerNorm's β: zero or like γ.
func drawBeta(c *Case, ch Chooser) {
	c.Beta = make([]float64, c.Hidden)
	if ch.SampleInt("beta.zero", []int{1, 0}) == 0 {
		fillGamma(ch, "beta", c.Beta)
	}
}

// SoundnessResult summarises SoundnessCheck.
type SoundnessResult struct {
	Kernel   Kernel
	Checks   int
	Seed     uint64
	MaxRatio float64 // largest observed |err|/bound; must be ≤ 1
	// MaxRatioNormal is the largest Outcome.MaxRatioNormal: the tightness of
	// the bound away from underflow.
	MaxRatioNormal float64
	Worst          Outcome // the element that attained MaxRatio
	WorstCase      Case    // the case that attained MaxRatio
	WorstIndex     int     // its index i: regenerate with NewSoundnessChooser(Seed, i)
	Violations     int     // cases whose ratio exceeded 1
}

// NewSoundnessChooser returns the Chooser SoundnessCheck uses for case i.
func NewSoundnessChooser(seed uint64, i int) RandChooser {
	return RandChooser{R: rand.New(rand.NewPCG(seed, uint64(i)))}
}

// SoundnessCheck draws checks cases of kernel k (GenerateCase with
// NewSoundnessChooser(seed, i)), evaluates each in naive float32 against the
// float64 reference and the derived bound, and returns the largest observed
// error/bound ratio. A ratio > 1 refutes the bound; a maximum far below 1
// (< 1e-3) says the bound is too loose to be useful.
func SoundnessCheck(k Kernel, checks int, seed uint64) SoundnessResult {
	return soundnessCheck(k, checks, seed, false)
}

// SoundnessCheckAdversarial is SoundnessCheck with every approximate
// instruction of the float32 evaluation at a value its documented error
// allows, usually the worst (Case.CheckWith with Arith32{Adversarial: true,
// Seed: seed ^ i} for case i).
func SoundnessCheckAdversarial(k Kernel, checks int, seed uint64) SoundnessResult {
	return soundnessCheck(k, checks, seed, true)
}

func soundnessCheck(k Kernel, checks int, seed uint64, adversarial bool) SoundnessResult {
	res := SoundnessResult{Kernel: k, Checks: checks, Seed: seed, WorstIndex: -1}
	for i := 0; i < checks; i++ {
		c := GenerateCase(k, NewSoundnessChooser(seed, i))
		o := c.CheckWith(Arith32{Adversarial: adversarial, Seed: seed ^ uint64(i)})
		if o.MaxRatio > 1 {
			res.Violations++
		}
		res.MaxRatioNormal = math.Max(res.MaxRatioNormal, o.MaxRatioNormal)
		if o.MaxRatio > res.MaxRatio || res.WorstIndex < 0 {
			res.MaxRatio, res.Worst, res.WorstCase, res.WorstIndex = o.MaxRatio, o, c, i
		}
	}
	return res
}
