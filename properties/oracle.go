package properties

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
)

// Prediction IDs of the oracle's own claims: they run on the CPU alone and
// are the first evidence that the tolerances every other prediction uses
// are sound.
const (
	OracleSound    = "ORACLE-SOUND-001"
	OracleGradient = "ORACLE-GRAD-001"
)

func init() {
	Register(Prediction{ID: OracleSound, Title: "the derived bounds hold for a naive float32 evaluation",
		Statement: "for every kernel formula, a float32 CPU evaluation in naive serial order stays within the tolerance derived by forward error analysis (serial-order reduction) over generated shapes, magnitudes, ε, θ and positions",
		Tolerance: "each kernel's oracle.*Tol with oracle.SerialReduction()"})
	Register(Prediction{ID: OracleGradient, Title: "analytic gradients agree with complex step and finite differences",
		Statement: "⟨∇L, v⟩ from the oracle's analytic backward agrees with the complex-step derivative to 1e-11 of the gradient's term scale and with Richardson finite differences within their error estimate, for RMSNorm, per-head RMSNorm, LayerNorm and RoPE",
		Tolerance: "complex step: 1e-11·Scale; FD: its own error estimate + 1e-11·Scale"})
}

// rapidChooser adapts a rapid.T to oracle.Chooser, labelling every draw.
type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) IntRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(c.t, label)
}
func (c rapidChooser) Float64Range(label string, lo, hi float64) float64 {
	return rapid.Float64Range(lo, hi).Draw(c.t, label)
}
func (c rapidChooser) SampleInt(label string, v []int) int {
	return rapid.SampledFrom(v).Draw(c.t, label)
}
func (c rapidChooser) SampleFloat64(label string, v []float64) float64 {
	return rapid.SampledFrom(v).Draw(c.t, label)
}
func (c rapidChooser) Uint64(label string) uint64 { return rapid.Uint64().Draw(c.t, label) }

// OracleSoundnessContract checks ORACLE-SOUND-001: each check draws a kernel
// formula and a case; the naive float32 evaluation must stay within the
// bound. Per-kernel maxima are kept in the outcome's notes.
func OracleSoundnessContract(t TB) {
	t.Helper()
	worst := map[oracle.Kernel]float64{}
	Check(t, OracleSound, func(rt *rapid.T, o *Obs) {
		ks := oracle.Kernels()
		k := ks[rapid.IntRange(0, len(ks)-1).Draw(rt, "kernel")]
		c := oracle.GenerateCase(k, rapidChooser{rt})
		out := c.Check()
		o.Context(0, "%v", c)
		o.Ratio(fmt.Sprintf("%v %s[%d]: got %g want %g", k, out.Output, out.Index, out.Got, out.Want), out.MaxRatio, 1)
		worst[k] = math.Max(worst[k], out.MaxRatio)
	})
	var notes []string
	for _, k := range oracle.Kernels() {
		if r, ok := worst[k]; ok {
			notes = append(notes, fmt.Sprintf("%v: worst naive-float32 error/bound %.4g", k, r))
		}
	}
	t.Config().Recorder.Record(Outcome{ID: OracleSound, Notes: notes})
}

// OracleGradientContract checks ORACLE-GRAD-001.
func OracleGradientContract(t TB) {
	t.Helper()
	Check(t, OracleGradient, func(rt *rapid.T, o *Obs) {
		kind := rapid.SampledFrom([]string{"rmsnorm", "per-head", "layernorm", "rope"}).Draw(rt, "kernel")
		rows := rapid.IntRange(1, 3).Draw(rt, "rows")
		hidden := rapid.OneOf(rapid.SampledFrom([]int{1, 2, 31, 32, 33, 256}), rapid.IntRange(1, 300)).Draw(rt, "hidden")
		eps := float64(Eps().Draw(rt, "eps"))
		x := F64(Values(rt, "x", rows, hidden, Normal, MixedScale, Constant).Data)
		w := F64(Values(rt, "w", rows, hidden, Normal).Data)
		vx := F64(Values(rt, "vx", rows, hidden, Normal).Data)
		g, vg := F64(Gamma(rt, "gamma", hidden)), F64(Values(rt, "vgamma", 1, hidden, Normal).Data)
		o.Context(0, "%s rows=%d hidden=%d eps=%g", kind, rows, hidden, eps)
		var d oracle.Directional
		switch kind {
		case "rmsnorm":
			d = oracle.RMSNormDirectional(x, g, w, vx, vg, rows, hidden, eps)
		case "per-head":
			d = oracle.PerHeadRMSNormDirectional(x, g, w, vx, vg, rows, 1, hidden, eps)
		case "layernorm":
			b, vb := F64(Gamma(rt, "beta", hidden)), F64(Values(rt, "vbeta", 1, hidden, Normal).Data)
			d = oracle.LayerNormDirectional(x, g, b, w, vx, vg, vb, rows, hidden, eps)
		case "rope":
			if hidden%2 == 1 {
				hidden++
				x, w, vx = append(x[:0:0], pad(x, rows, hidden-1)...), pad(w, rows, hidden-1), pad(vx, rows, hidden-1)
			}
			pos := make([]float64, rows)
			for i := range pos {
				pos[i] = float64(Position().Draw(rt, "pos"))
			}
			theta := float64(Theta().Draw(rt, "theta"))
			d = oracle.RoPENeoXDirectional(x, w, vx, pos, rows, 1, hidden, theta)
		}
		o.Ratio("analytic vs complex step", math.Abs(d.Analytic-d.ComplexStep), 1e-11*d.Scale+1e-300)
		o.Ratio(fmt.Sprintf("analytic vs finite difference (FD %.17g)", d.FD), math.Abs(d.Analytic-d.FD), d.FDErr+1e-11*d.Scale+1e-300)
	})
}

// pad appends a zero column to a [rows][cols] tensor.
func pad(x []float64, rows, cols int) []float64 {
	out := make([]float64, 0, rows*(cols+1))
	for r := 0; r < rows; r++ {
		out = append(out, x[r*cols:(r+1)*cols]...)
		out = append(out, 0)
	}
	return out
}
