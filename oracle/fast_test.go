package oracle

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"pgregory.net/rapid"
)

// The references' hot loops (branch-free TwoSum, single-pass sums shared
// with the bounds, float32-input rows) are faster, not different: a
// reference gives bit for bit what its formula gives with the Neumaier sum
// kbn, a single-pass entry point what the separate ones write. (What the
// bounds' values must be is checked in tol_rmsnorm_test.go.) On amd64 Go
// never contracts x·y+z into an FMA, so the comparison is exact; elsewhere
// the compiler may contract two expressions differently and a few binary64
// ulps are allowed.

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if runtime.GOARCH == "amd64" {
		return math.Float64bits(a) == math.Float64bits(b)
	}
	return a == b || math.Abs(a-b) <= 0x1p-50*math.Max(math.Abs(a), math.Abs(b))
}

// widen returns x exactly as float64.
func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func requireSame(t *rapid.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !sameFloat(got[i], want[i]) {
			t.Fatalf("%s[%d] = %.17g (%016x), want %.17g (%016x)", what, i,
				got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// drawFastCase draws a shape and float32-valued data from the soundness
// generators; "wide" makes x and dy general binary64 values and "special"
// sprinkles ±Inf and NaN, so the accumulators' every path is exercised
// but the kbn redo after a spurious TwoSum overflow, which no such data
// reaches (that csum reports one is TestCompensatedSumIsBitIdentical's).
func drawFastCase(t *rapid.T) (rows, hidden int, x, gamma, dy []float64, eps float64) {
	rows = rapid.IntRange(1, 9).Draw(t, "rows") // past 4 and 8: RMSNormForwardSums32 takes rows four at a time
	hidden = rapid.OneOf(rapid.SampledFrom([]int{1, 2, 3, 31, 32, 33, 255, 257}), rapid.IntRange(1, 300)).Draw(t, "hidden")
	x = drawData(t, "x", rows, hidden)
	dy = drawData(t, "dy", rows, hidden)
	gamma = drawGamma(t, "gamma", hidden)
	eps = rapid.SampledFrom([]float64{1e-5, 1e-6, 0, 1e-30, 0.5}).Draw(t, "eps")
	switch rapid.SampledFrom([]string{"float32", "wide", "special"}).Draw(t, "values") {
	case "wide":
		for i := range x {
			x[i] *= 1 + 0x1p-40*float64(i%7)
			dy[i] *= 1 - 0x1p-45*float64(i%5)
		}
	case "special":
		k := rapid.IntRange(0, len(x)-1).Draw(t, "at")
		x[k] = rapid.SampledFrom([]float64{math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}).Draw(t, "special")
	}
	return
}

func drawReductions(t *rapid.T, rows, hidden int) (red, rowRed Reduction) {
	pick := func(label string, n int) Reduction {
		switch rapid.IntRange(0, 3).Draw(t, label) {
		case 1:
			return TreeReduction(32)
		case 2:
			return TreeReduction(256)
		case 3:
			return Reduction{Threads: n, Tree: rapid.IntRange(0, 12).Draw(t, label+".tree")}
		}
		return SerialReduction()
	}
	return pick("red", hidden), pick("rowRed", rows)
}

// wantRMSNormForward returns RMSNormForward's specification: rms =
// sqrt(Σx²/n + eps) with Σx² the kbn sum, y = x/rms·γ.
func wantRMSNormForward(x, gamma []float64, rows, hidden int, eps float64) (y, rms []float64) {
	y, rms = make([]float64, rows*hidden), make([]float64, rows)
	for r := range rms {
		xr := x[r*hidden : (r+1)*hidden]
		rms[r] = math.Sqrt(dotReal(xr, xr)/float64(hidden) + eps)
		for i, v := range xr {
			y[r*hidden+i] = v / rms[r] * gamma[i]
		}
	}
	return y, rms
}

func TestRMSNormForwardSinglePassIsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, x, gamma, _, eps := drawFastCase(t)
		red, _ := drawReductions(t, rows, hidden)
		n := rows * hidden
		wantY, wantRMS := wantRMSNormForward(x, gamma, rows, hidden, eps)
		wantTol, wantTolRMS := make([]float64, n), make([]float64, rows)
		RMSNormForwardTol(wantTol, wantTolRMS, x, gamma, rows, hidden, eps, red)
		tol := make([]float64, n)
		RMSNormForwardTol(tol, nil, x, gamma, rows, hidden, eps, red)
		requireSame(t, "RMSNormForwardTol (no tolRMS) y", tol, wantTol)

		y, rms := make([]float64, n), make([]float64, rows)
		RMSNormForward(y, rms, x, gamma, rows, hidden, eps)
		requireSame(t, "RMSNormForward y", y, wantY)
		requireSame(t, "RMSNormForward rms", rms, wantRMS)
		RMSNormRMS(rms, x, rows, hidden, eps)
		requireSame(t, "RMSNormRMS", rms, wantRMS)

		y, rms, tol, tolRMS := make([]float64, n), make([]float64, rows), make([]float64, n), make([]float64, rows)
		RMSNormForwardWithTol(y, rms, tol, tolRMS, x, gamma, rows, hidden, eps, red)
		requireSame(t, "WithTol y", y, wantY)
		requireSame(t, "WithTol rms", rms, wantRMS)
		requireSame(t, "WithTol tolY", tol, wantTol)
		requireSame(t, "WithTol tolRMS", tolRMS, wantTolRMS)
		RMSNormForwardWithTol(y, nil, tol, nil, x, gamma, rows, hidden, eps, red)
		requireSame(t, "WithTol (no rms) y", y, wantY)
		requireSame(t, "WithTol (no rms) tolY", tol, wantTol)
	})
}

// The float32-input row functions are RMSNormForwardWithTol on the widened
// inputs and RMSNormForward32Naive, bit for bit.
func TestRMSNormForwardRow32IsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, x64, gamma64, _, _ := drawFastCase(t)
		red, _ := drawReductions(t, rows, hidden)
		eps32 := rapid.SampledFrom([]float32{1e-5, 1e-6, 0, 1e-30, 0.5}).Draw(t, "eps32")
		x, gamma := to32(x64), to32(gamma64)
		x64, gamma64 = widen(x), widen(gamma)
		n := rows * hidden
		wantY, wantRMS := make([]float64, n), make([]float64, rows)
		wantTol, wantTolRMS := make([]float64, n), make([]float64, rows)
		RMSNormForwardWithTol(wantY, wantRMS, wantTol, wantTolRMS, x64, gamma64, rows, hidden, float64(eps32), red)
		wantNaive := make([]float32, n)
		RMSNormForward32Naive(wantNaive, nil, x, gamma, rows, hidden, eps32)

		ss, ss32 := make([]float64, rows), make([]float32, rows)
		RMSNormForwardSums32(ss, ss32, x, rows, hidden)
		ssOnly := make([]float64, rows)
		RMSNormForwardSums32(ssOnly, nil, x, rows, hidden)
		requireSame(t, "Sums32 without ss32", ssOnly, ss)
		y, tol, naive := make([]float64, n), make([]float64, n), make([]float32, n)
		rms, tolRMS := make([]float64, rows), make([]float64, rows)
		gm := NewGamma32(gamma, nil)
		for r := 0; r < rows; r++ {
			lo, hi := r*hidden, (r+1)*hidden
			rms[r], tolRMS[r] = RMSNormRMSWithTol32(ss[r], hidden, eps32, red)
			RMSNormForwardRow32(y[lo:hi], tol[lo:hi], naive[lo:hi], x[lo:hi], gm, ss[r], ss32[r], eps32, red)
		}
		requireSame(t, "Row32 y", y, wantY)
		requireSame(t, "Row32 tolY", tol, wantTol)
		requireSame(t, "RMSWithTol32 rms", rms, wantRMS)
		requireSame(t, "RMSWithTol32 tolRMS", tolRMS, wantTolRMS)
		requireSame(t, "Row32 naive", widen(naive), widen(wantNaive))
	})
}

// wantRMSNormBackward returns RMSNormBackward's specification: with g =
// γ·dy, v = Σx²/n + eps and c = Σg·x/(n·v), both sums kbn's,
// dx = (1/sqrt(v))·(g − x·c) and dγ the kbn sum over rows of dy·x/sqrt(v).
func wantRMSNormBackward(x, gamma, dy []float64, rows, hidden int, eps float64) (dx, dgamma []float64) {
	dx, dgamma = make([]float64, rows*hidden), make([]float64, hidden)
	nf := float64(hidden)
	dg := make([]kbn, hidden)
	g := make([]float64, hidden)
	for r := 0; r < rows; r++ {
		xr, dyr := x[r*hidden:(r+1)*hidden], dy[r*hidden:(r+1)*hidden]
		for j := range g {
			g[j] = gamma[j] * dyr[j]
		}
		v := dotReal(xr, xr)/nf + eps
		rms := math.Sqrt(v)
		c := dotReal(g, xr) / (nf * v)
		for i, xv := range xr {
			dx[r*hidden+i] = 1 / rms * (g[i] - xv*c)
			dg[i].add(dyr[i] * xv / rms)
		}
	}
	for i := range dg {
		dgamma[i] = dg[i].sum()
	}
	return dx, dgamma
}

func TestRMSNormBackwardSinglePassIsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows, hidden, x, gamma, dy, eps := drawFastCase(t)
		red, rowRed := drawReductions(t, rows, hidden)
		n := rows * hidden
		wantDX, wantDG := wantRMSNormBackward(x, gamma, dy, rows, hidden, eps)
		wantTDX, wantTDG, wantSerial := make([]float64, n), make([]float64, hidden), make([]float64, n)
		RMSNormBackwardTol(wantTDX, wantTDG, x, gamma, dy, rows, hidden, eps, red, rowRed)
		RMSNormBackwardTol(wantSerial, nil, x, gamma, dy, rows, hidden, eps, SerialReduction(), rowRed)

		dx, dg := make([]float64, n), make([]float64, hidden)
		RMSNormBackward(dx, dg, x, gamma, dy, rows, hidden, eps)
		requireSame(t, "RMSNormBackward dx", dx, wantDX)
		requireSame(t, "RMSNormBackward dgamma", dg, wantDG)
		tdx := make([]float64, n)
		RMSNormBackwardTol(tdx, nil, x, gamma, dy, rows, hidden, eps, red, rowRed)
		requireSame(t, "RMSNormBackwardTol (no tolDGamma) dx", tdx, wantTDX)

		dx, dg, tdx, tdg := make([]float64, n), make([]float64, hidden), make([]float64, n), make([]float64, hidden)
		serial := make([]float64, n)
		RMSNormBackwardWithTol(dx, dg, tdx, tdg, serial, x, gamma, dy, rows, hidden, eps, red, rowRed)
		requireSame(t, "WithTol dx", dx, wantDX)
		requireSame(t, "WithTol dgamma", dg, wantDG)
		requireSame(t, "WithTol tolDX", tdx, wantTDX)
		requireSame(t, "WithTol tolDGamma", tdg, wantTDG)
		requireSame(t, "WithTol serialTolDX", serial, wantSerial)
		RMSNormBackwardWithTol(dx, nil, tdx, nil, nil, x, gamma, dy, rows, hidden, eps, red, rowRed)
		requireSame(t, "WithTol (no dγ) dx", dx, wantDX)
		requireSame(t, "WithTol (no dγ) tolDX", tdx, wantTDX)
	})
}

// RMSNormRMSAlong is RMSNormRMS of the formed point, and
// DirectionalDerivativeFDAlong with it gives what DirectionalDerivativeFDErr
// gives with the points formed and RMSNormForward, for the loss
// checkDirectional uses (a plain dot product) and the oracle's own
// (compensated).
func TestFDAlongIsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, hidden, x, gamma, dy, eps := drawFastCase(t)
		x, dy = x[:hidden], dy[:hidden]
		v := drawData(t, "v", 1, hidden)
		h := rapid.SampledFrom([]float64{1e-3, 1e-7, 0.5, 3}).Draw(t, "h")
		df := rapid.SampledFrom([]float64{-1, 0, 1e-20}).Draw(t, "df")
		y := make([]float64, hidden)
		plain := func(p []float64) float64 {
			RMSNormForward(y, nil, p, gamma, 1, hidden, eps)
			s := 0.0
			for j := range y {
				s += y[j] * dy[j]
			}
			return s
		}
		plainAlong := func(tt float64) float64 {
			rr := RMSNormRMSAlong(x, v, tt, eps)
			s := 0.0
			for j, xv := range x {
				z := xv + tt*v[j]
				s += z / rr * gamma[j] * dy[j]
			}
			return s
		}
		for _, tt := range []float64{h, -h, h / 4} {
			z, want := make([]float64, hidden), make([]float64, 1)
			for i := range z {
				z[i] = x[i] + tt*v[i]
			}
			RMSNormRMS(want, z, 1, hidden, eps)
			requireSame(t, fmt.Sprintf("RMSNormRMSAlong(t=%g)", tt), []float64{RMSNormRMSAlong(x, v, tt, eps)}, want)
		}
		wv, we := DirectionalDerivativeFDErr(plain, x, v, h, df)
		gv, ge := DirectionalDerivativeFDAlong(plainAlong, h, df)
		requireSame(t, "plain loss: FD along (value, estimate)", []float64{gv, ge}, []float64{wv, we})
		comp := func(p []float64) float64 {
			RMSNormForward(y, nil, p, gamma, 1, hidden, eps)
			return dotReal(y, dy)
		}
		z := make([]float64, hidden)
		wv, we = DirectionalDerivativeFDErr(comp, x, v, h, df)
		gv, ge = DirectionalDerivativeFDAlong(func(tt float64) float64 {
			for i := range z {
				z[i] = x[i] + tt*v[i]
			}
			return comp(z)
		}, h, df)
		requireSame(t, "compensated loss: FD along (value, estimate)", []float64{gv, ge}, []float64{wv, we})
	})
}

// The branch-free accumulator gives the same sums as Neumaier's, for
// sums and FMA-split products, through overflow, Inf and NaN.
func TestCompensatedSumIsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(t, "n")
		var got kbn
		var fast csum
		var want kbn
		var squares []float64
		for i := 0; i < n; i++ {
			a := rapid.Float64().Draw(t, "a")
			if rapid.Bool().Draw(t, "prod") {
				b := a
				if !rapid.Bool().Draw(t, "square") {
					b = rapid.Float64().Draw(t, "b")
				}
				got.addProd(a, b)
				want.addProd(a, b)
				p := a * b
				fast = fast.plus(p)
				if e := prodErr(a, b, p); e != 0 {
					fast = fast.plus(e)
				}
			} else {
				got.add(a)
				want.add(a)
				fast = fast.plus(a)
			}
			w := want.sum()
			if g := got.sum(); !sameFloat(g, w) {
				t.Fatalf("after %d terms: kbn sum %.17g, want %.17g", i+1, g, w)
			}
			// A csum that overflowed where kbn did not says so; callers redo.
			if g := fast.sum(); !fast.overflowed() && !sameFloat(g, w) {
				t.Fatalf("after %d terms: csum %.17g, want %.17g", i+1, g, w)
			}
		}
		for i := 0; i < n; i++ {
			v := rapid.Float64().Draw(t, "v")
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				v = float64(float32(v))
			case 1:
				v = math.Ldexp(float64(float32(v)), rapid.IntRange(-600, 600).Draw(t, "exp"))
			}
			squares = append(squares, v)
		}
		var k kbn
		for _, v := range squares {
			k.addProd(v, v)
		}
		if g, w := sumSquares(squares), k.sum(); !sameFloat(g, w) {
			t.Fatalf("sumSquares = %.17g, want %.17g", g, w)
		}
	})
}

// benchRMSData returns float32-valued x, γ and dy of shape 64×1024.
func benchRMSData() (rows, hidden int, x, gamma, dy []float64) {
	rows, hidden = 64, 1024
	x, dy, gamma = make([]float64, rows*hidden), make([]float64, rows*hidden), make([]float64, hidden)
	s := uint64(1)
	next := func() float64 { // a small LCG: the values only need to look random
		s = s*6364136223846793005 + 1442695040888963407
		return float64(float32(float64(int64(s>>11)-1<<52) / (1 << 52)))
	}
	for i := range x {
		x[i], dy[i] = next(), next()
	}
	for i := range gamma {
		gamma[i] = 1 + 0.1*next()
	}
	return
}

// BenchmarkRMSNormForwardWithTol compares the reference and its bound
// computed separately with the single pass, at 64×1024.
func BenchmarkRMSNormForwardWithTol(b *testing.B) {
	rows, hidden, x, gamma, _ := benchRMSData()
	y, rms, tol, tolRMS := make([]float64, len(x)), make([]float64, rows), make([]float64, len(x)), make([]float64, rows)
	red := TreeReduction(256)
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			RMSNormForward(y, rms, x, gamma, rows, hidden, 1e-5)
			RMSNormForwardTol(tol, tolRMS, x, gamma, rows, hidden, 1e-5, red)
		}
	})
	b.Run("single-pass", func(b *testing.B) {
		for b.Loop() {
			RMSNormForwardWithTol(y, rms, tol, tolRMS, x, gamma, rows, hidden, 1e-5, red)
		}
	})
}

// BenchmarkRMSNormBackwardWithTol is BenchmarkRMSNormForwardWithTol for
// the backward.
func BenchmarkRMSNormBackwardWithTol(b *testing.B) {
	rows, hidden, x, gamma, dy := benchRMSData()
	dx, dg, tdx, tdg := make([]float64, len(x)), make([]float64, hidden), make([]float64, len(x)), make([]float64, hidden)
	red, rowRed := TreeReduction(256), SerialReduction()
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			RMSNormBackward(dx, dg, x, gamma, dy, rows, hidden, 1e-5)
			RMSNormBackwardTol(tdx, tdg, x, gamma, dy, rows, hidden, 1e-5, red, rowRed)
		}
	})
	b.Run("single-pass", func(b *testing.B) {
		for b.Loop() {
			RMSNormBackwardWithTol(dx, dg, tdx, tdg, nil, x, gamma, dy, rows, hidden, 1e-5, red, rowRed)
		}
	})
}
