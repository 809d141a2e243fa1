package oracle

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestRMSNormConstantRow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hidden := rapid.SampledFrom(HiddenGrid).Draw(t, "hidden")
		c := float64(float32(rapid.Float64Range(-1e3, 1e3).Draw(t, "c")))
		eps := drawEps(rapidChooser{t})
		gamma := drawGamma(t, "gamma", hidden)
		x := constRow(hidden, c)
		y, rms := make([]float64, hidden), make([]float64, 1)
		RMSNormForward(y, rms, x, gamma, 1, hidden, eps)
		wantR := math.Sqrt(c*c + eps)
		if math.Abs(rms[0]-wantR) > 4*Eps64*wantR {
			t.Fatalf("rms = %.17g, want sqrt(c²+eps) = %.17g", rms[0], wantR)
		}
		for i := range y {
			want := c / wantR * gamma[i]
			if math.Abs(y[i]-want) > 8*Eps64*math.Abs(want) {
				t.Fatalf("y[%d] = %.17g, want c/sqrt(c²+eps)·γ = %.17g", i, y[i], want)
			}
		}
	})
}

func TestRMSNormScaleInvarianceAndBatchIndependence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden := smallRows(t)
		x := drawData(t, "x", rows, hidden)
		gamma := drawGamma(t, "gamma", hidden)
		alpha := math.Ldexp(1, rapid.IntRange(-20, 20).Draw(t, "log2alpha"))
		y, ys := make([]float64, len(x)), make([]float64, len(x))
		RMSNormForward(y, nil, x, gamma, rows, hidden, 0)
		xs := make([]float64, len(x))
		for i := range x {
			xs[i] = alpha * x[i]
		}
		RMSNormForward(ys, nil, xs, gamma, rows, hidden, 0)
		for i := range y {
			if math.Abs(y[i]-ys[i]) > 8*Eps64*math.Abs(y[i]) {
				t.Fatalf("eps=0: y(αx)[%d] = %g ≠ y(x) = %g", i, ys[i], y[i])
			}
		}
		// Each row computed alone equals the batched result bit for bit.
		for r := 0; r < rows; r++ {
			one := make([]float64, hidden)
			RMSNormForward(one, nil, x[r*hidden:(r+1)*hidden], gamma, 1, hidden, 1e-5)
			RMSNormForward(y, nil, x, gamma, rows, hidden, 1e-5)
			for i := range one {
				if one[i] != y[r*hidden+i] && !(math.IsNaN(one[i]) && math.IsNaN(y[r*hidden+i])) {
					t.Fatalf("row %d alone differs at %d", r, i)
				}
			}
		}
	})
}

func TestLayerNormNormalises(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.IntRange(1, 3).Draw(t, "rows")
		hidden := rapid.IntRange(2, 300).Draw(t, "hidden")
		x := drawData(t, "x", rows, hidden)
		ones, zeros := constRow(hidden, 1), make([]float64, hidden)
		y := make([]float64, len(x))
		LayerNormForward(y, nil, nil, x, ones, zeros, rows, hidden, 0)
		for r := 0; r < rows; r++ {
			c := make([]float64, hidden)
			_, vr := centered(c, x[r*hidden:(r+1)*hidden])
			if vr == 0 {
				continue // constant row: 0/0
			}
			yr := y[r*hidden : (r+1)*hidden]
			var m, q kbn
			for _, v := range yr {
				m.add(v)
			}
			mean := m.sum() / float64(hidden)
			for _, v := range yr {
				q.addProd(v-mean, v-mean)
			}
			variance := q.sum() / float64(hidden)
			if math.Abs(mean) > 1e-14 || math.Abs(variance-1) > 1e-13 {
				t.Fatalf("row %d: mean %g variance %.17g, want 0 and 1", r, mean, variance)
			}
		}
	})
}

func TestRoPEAtPositionZeroIsIdentity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := GenerateCase(KernelRoPENeoXForward, rapidChooser{t})
		for i := range c.Pos {
			c.Pos[i] = 0
		}
		y := make([]float64, len(c.X))
		y32 := make([]float32, len(c.X))
		for _, style := range []RoPEStyle{RoPENeoX, RoPEGPTJ} {
			rope(y, c.X, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, 1)
			rope32(y32, to32(c.X), c.Pos, c.Rows, c.Heads, c.HeadDim, float32(c.Theta), style, 1, Arith32{})
			for i := range y {
				if y[i] != c.X[i] || float64(y32[i]) != c.X[i] {
					t.Fatalf("%v pos 0: y[%d] = %g (f32 %g), want x = %g", style, i, y[i], y32[i], c.X[i])
				}
			}
		}
	})
}

func TestRoPEIsARotation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := GenerateCase(KernelRoPENeoXForward, rapidChooser{t})
		style := RoPEStyle(rapid.IntRange(0, 1).Draw(t, "style"))
		n := len(c.X)
		y, back := make([]float64, n), make([]float64, n)
		rope(y, c.X, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, 1)
		rope(back, y, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, -1)
		// Each pair keeps its norm, and R(−a)·R(a) = I.
		for base := 0; base < n; base += c.HeadDim {
			for i := 0; i < c.HeadDim/2; i++ {
				a, b := style.pair(i, c.HeadDim)
				x0, x1 := c.X[base+a], c.X[base+b]
				n0 := math.Hypot(x0, x1)
				n1 := math.Hypot(y[base+a], y[base+b])
				if math.Abs(n0-n1) > 8*Eps64*n0 {
					t.Fatalf("pair (%d,%d): |x| = %.17g, |Rx| = %.17g", base+a, base+b, n0, n1)
				}
				for _, k := range []int{base + a, base + b} {
					if math.Abs(back[k]-c.X[k]) > 8*Eps64*n0 {
						t.Fatalf("R(−a)R(a)x [%d] = %.17g, want %.17g", k, back[k], c.X[k])
					}
				}
			}
		}
		// Adjoint identity ⟨R x, w⟩ = ⟨x, Rᵀ w⟩.
		w := drawData(t, "w", c.Rows, c.Hidden)
		rtw := make([]float64, n)
		rope(rtw, w, c.Pos, c.Rows, c.Heads, c.HeadDim, c.Theta, style, -1)
		lhs, rhs := dotReal(y, w), dotReal(c.X, rtw)
		if math.Abs(lhs-rhs) > 1e-14*(sumAbsProd(y, w)+sumAbsProd(c.X, rtw)) {
			t.Fatalf("⟨Rx,w⟩ = %.17g ≠ ⟨x,Rᵀw⟩ = %.17g", lhs, rhs)
		}
	})
}

// TestRoPEStylesDiffer shows that NeoX and GPT-J pairings are told apart
// by the NeoX bound (for headDim ≥ 4 at a nonzero position), and coincide
// for headDim = 2 where both pair (0, 1).
func TestRoPEStylesDiffer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		headDim := rapid.SampledFrom([]int{4, 8, 64, 128}).Draw(t, "headDim")
		pos := []float64{float64(rapid.IntRange(1, 131072).Draw(t, "pos"))}
		theta := rapid.SampledFrom(ThetaGrid).Draw(t, "theta")
		rng := NewSoundnessChooser(rapid.Uint64().Draw(t, "seed"), 0).R
		x := make([]float64, headDim)
		for i := range x {
			x[i] = float64(float32(rng.NormFloat64()))
		}
		neox, gptj, tol := make([]float64, headDim), make([]float64, headDim), make([]float64, headDim)
		RoPENeoXForward(neox, x, pos, 1, 1, headDim, theta)
		RoPEGPTJForward(gptj, x, pos, 1, 1, headDim, theta)
		RoPENeoXForwardTol(tol, x, pos, 1, 1, headDim, theta)
		worst := 0.0
		for i := range x {
			worst = math.Max(worst, ErrorRatio(gptj[i], neox[i], tol[i]))
		}
		if worst <= 1 {
			t.Fatalf("GPT-J output within the NeoX bound (worst ratio %g)", worst)
		}
	})
	x := []float64{0.5, -2}
	a, b := make([]float64, 2), make([]float64, 2)
	RoPENeoXForward(a, x, []float64{7}, 1, 1, 2, 1e4)
	RoPEGPTJForward(b, x, []float64{7}, 1, 1, 2, 1e4)
	if a[0] != b[0] || a[1] != b[1] {
		t.Errorf("headDim 2: NeoX %v ≠ GPT-J %v", a, b)
	}
}
