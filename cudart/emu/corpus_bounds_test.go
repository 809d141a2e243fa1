package emu

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ptxprop/ptxprop/oracle"
)

// TestCorpusWithinOracleBounds holds the H200's own outputs of the corpus's
// Triton LayerNorm, RMSNorm and softmax forwards (div.full, sqrt.approx,
// rsqrt.approx, ex2.approx: the instructions the bounds are now derived
// for) to package oracle's bounds for SerialReduction, valid for every
// summation order: the hardware stays within what the oracle allows.
func TestCorpusWithinOracleBounds(t *testing.T) {
	dir := filepath.Join("testdata", "corpus", "triton")
	load := func(name string) map[string]npyArray {
		a, err := readNPZ(filepath.Join(dir, name+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	f64 := func(a map[string]npyArray, key string) []float64 {
		w, ok := corpusArray(a, key)
		if !ok {
			t.Fatalf("no %s", key)
		}
		out := make([]float64, len(w))
		for i, v := range w {
			out[i] = float64(math.Float32frombits(v))
		}
		return out
	}
	check := func(name, what string, got, want, tol []float64) {
		worst := 0.0
		for i := range want {
			r := oracle.ErrorRatio(got[i], want[i], tol[i])
			if !(r <= 1) {
				t.Errorf("%s %s[%d]: H200 %g, oracle %g, |err| %g > bound %g", name, what, i, got[i], want[i], math.Abs(got[i]-want[i]), tol[i])
				return
			}
			worst = math.Max(worst, r)
		}
		t.Logf("%s %s: worst error/bound %.3g", name, what, worst)
	}
	ser := oracle.SerialReduction()
	const rows, n = 5, 1000
	for _, name := range []string{"layernorm_fwd_rsqrt", "layernorm_fwd_sqrt", "layernorm_fwd_sqrt_rn", "layernorm_fwd_loop_sqrt"} {
		a := load(name)
		x, g, b := f64(a, "in.X"), f64(a, "in.W"), f64(a, "in.B")
		y, mean, rstd := make([]float64, rows*n), make([]float64, rows), make([]float64, rows)
		ty, tm, tr := make([]float64, rows*n), make([]float64, rows), make([]float64, rows)
		oracle.LayerNormForward(y, mean, rstd, x, g, b, rows, n, float64(float32(1e-5)))
		oracle.LayerNormForwardTol(ty, tm, tr, x, g, b, rows, n, float64(float32(1e-5)), ser, oracle.TwoPassVariance)
		check(name, "y", f64(a, "out.Y"), y, ty)
		check(name, "mean", f64(a, "out.MEAN"), mean, tm)
		check(name, "rstd", f64(a, "out.RSTD"), rstd, tr)
	}
	for _, c := range []struct {
		name string
		eps  float64
	}{{"rmsnorm_fwd_f32", 1e-6}} {
		a := load(c.name)
		x, g := f64(a, "in.X"), f64(a, "in.W")
		y, rms := make([]float64, rows*n), make([]float64, rows)
		ty, trms := make([]float64, rows*n), make([]float64, rows)
		eps := float64(float32(c.eps))
		oracle.RMSNormForward(y, rms, x, g, rows, n, eps)
		oracle.RMSNormForwardTol(ty, trms, x, g, rows, n, eps, ser)
		check(c.name, "y", f64(a, "out.Y"), y, ty)
	}
	for _, name := range []string{"softmax_fwd_f32", "online_softmax_exp", "online_softmax_exp2"} {
		a := load(name)
		in := "in.in_ptr"
		out := "out.out_ptr"
		if _, ok := corpusArray(a, in); !ok {
			in, out = "in.X", "out.OUT"
		}
		x := f64(a, in)
		y, ty := make([]float64, rows*n), make([]float64, rows*n)
		oracle.SoftmaxForward(y, x, rows, n)
		oracle.SoftmaxForwardTol(ty, x, rows, n, ser)
		check(name, "y", f64(a, out), y, ty)
	}
}
