package properties

import (
	"fmt"
	"math"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

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

// oracleSoundnessContract checks ORACLE-SOUND-001: each check draws a kernel
// formula and a case; the naive float32 evaluation must stay within the
// bound, both with correctly rounded instructions and with every division,
// square root, exp2 and log2 at a value its documented PTX error allows,
// usually the worst (oracle.Case.CheckAdversarial, seeded by a labelled
// draw). Per-kernel maxima are kept in the outcome's notes.
func oracleSoundnessContract(t TB) {
	t.Helper()
	// Checks run on several rapid loops at once: worst is theirs to share.
	var mu sync.Mutex
	worst := map[oracle.Kernel]float64{}
	Check(t, OracleSound, func(rt *rapid.T, o *Obs) {
		ks := oracle.Kernels()
		k := ks[rapid.IntRange(0, len(ks)-1).Draw(rt, "kernel")]
		c := oracle.GenerateCase(k, rapidChooser{rt})
		out := c.CheckAdversarial(rapid.Uint64().Draw(rt, "arith.seed"))
		o.Context(0, "%v", c)
		o.Ratio(fmt.Sprintf("%v %s[%d]: got %g want %g", k, out.Output, out.Index, out.Got, out.Want), out.MaxRatio, 1)
		mu.Lock()
		worst[k] = math.Max(worst[k], out.MaxRatio)
		mu.Unlock()
	})
	var notes []string
	for _, k := range oracle.Kernels() {
		if r, ok := worst[k]; ok {
			notes = append(notes, fmt.Sprintf("%v: worst naive-float32 error/bound %.4g", k, r))
		}
	}
	t.Config().Recorder.Record(outcome.Outcome{ID: OracleSound, Notes: notes})
}

// oracleGradientContract checks ORACLE-GRAD-001.
func oracleGradientContract(t TB) {
	t.Helper()
	Check(t, OracleGradient, func(rt *rapid.T, o *Obs) {
		kind := rapid.SampledFrom([]string{"rmsnorm", "per-head", "layernorm", "rope", "softmax"}).Draw(rt, "kernel")
		rows := rapid.IntRange(1, 3).Draw(rt, "rows")
		hidden := rapid.OneOf(rapid.SampledFrom([]int{1, 2, 31, 32, 33, 256}), rapid.IntRange(1, 300)).Draw(rt, "hidden")
		eps := float64(gen.Eps().Draw(rt, "eps"))
		x := gen.F64(gen.Values(rt, "x", rows, hidden, gen.Normal, gen.MixedScale, gen.Constant).Data)
		w := gen.F64(gen.Values(rt, "w", rows, hidden, gen.Normal).Data)
		vx := gen.F64(gen.Values(rt, "vx", rows, hidden, gen.Normal).Data)
		g, vg := gen.F64(gen.Gamma(rt, "gamma", hidden)), gen.F64(gen.Values(rt, "vgamma", 1, hidden, gen.Normal).Data)
		o.Context(0, "%s rows=%d hidden=%d eps=%g", kind, rows, hidden, eps)
		var d oracle.Directional
		switch kind {
		case "rmsnorm":
			d = oracle.RMSNormDirectional(x, g, w, vx, vg, rows, hidden, eps)
		case "per-head":
			d = oracle.PerHeadRMSNormDirectional(x, g, w, vx, vg, rows, 1, hidden, eps)
		case "layernorm":
			b, vb := gen.F64(gen.Gamma(rt, "beta", hidden)), gen.F64(gen.Values(rt, "vbeta", 1, hidden, gen.Normal).Data)
			d = oracle.LayerNormDirectional(x, g, b, w, vx, vg, vb, rows, hidden, eps)
		case "rope":
			if hidden%2 == 1 {
				hidden++
				x, w, vx = append(x[:0:0], pad(x, rows, hidden-1)...), pad(w, rows, hidden-1), pad(vx, rows, hidden-1)
			}
			pos := make([]float64, rows)
			for i := range pos {
				pos[i] = float64(gen.Position().Draw(rt, "pos"))
			}
			theta := float64(gen.Theta().Draw(rt, "theta"))
			d = oracle.RoPENeoXDirectional(x, w, vx, pos, rows, 1, hidden, theta)
		case "softmax":
			d = oracle.SoftmaxDirectional(x, w, vx, rows, hidden)
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
