package oracle

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestGamma(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want float64
	}{
		{0, 0},
		{-3, 0},
		{1, U32 / (1 - U32)},
		{1 << 24, math.Inf(1)},
	} {
		if got := Gamma(tc.n); got != tc.want {
			t.Errorf("Gamma(%d) = %g, want %g", tc.n, got, tc.want)
		}
	}
	// γ_n ≥ n·u and γ_a + γ_b + γ_a·γ_b ≤ γ_{a+b} (Higham Lemma 3.3).
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.IntRange(0, 1<<20).Draw(t, "a")
		b := rapid.IntRange(0, 1<<20).Draw(t, "b")
		if Gamma(a) < float64(a)*U32 {
			t.Fatalf("Gamma(%d) = %g < n·u", a, Gamma(a))
		}
		if lhs, rhs := relMul(Gamma(a), Gamma(b)), Gamma(a+b); lhs > rhs*(1+1e-15) {
			t.Fatalf("γ_%d ⊕ γ_%d = %g > γ_%d = %g", a, b, lhs, a+b, rhs)
		}
	})
}

func TestULPDistance32(t *testing.T) {
	tiny := math.Float32frombits(1)
	for _, tc := range []struct {
		a, b float32
		want uint64
	}{
		{1, 1, 0},
		{0, float32(math.Copysign(0, -1)), 0},
		{1, math.Nextafter32(1, 2), 1},
		{-tiny, tiny, 2},
		{0, tiny, 1},
		{-1, 1, 2 * uint64(math.Float32bits(1))},
		{float32(math.Inf(1)), math.MaxFloat32, 1},
		{float32(math.NaN()), 1, math.MaxUint64},
	} {
		if got := ULPDistance32(tc.a, tc.b); got != tc.want {
			t.Errorf("ULPDistance32(%g, %g) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Float32().Draw(t, "a")
		b := rapid.Float32().Draw(t, "b")
		if ULPDistance32(a, b) != ULPDistance32(b, a) {
			t.Fatalf("not symmetric")
		}
		if a != float32(math.Inf(1)) {
			if d := ULPDistance32(a, math.Nextafter32(a, float32(math.Inf(1)))); d != 1 && a != 0 {
				t.Fatalf("distance to next float = %d", d)
			}
		}
		// The triangle through 0 is an equality when a and b have opposite signs.
		if a <= 0 && b >= 0 && ULPDistance32(a, b) != ULPDistance32(a, 0)+ULPDistance32(0, b) {
			t.Fatalf("distance across zero is not additive")
		}
	})
}

// ulpDistanceByKeys is ULPDistance32 by its definition: the floats mapped
// to integers in their order (orderedKey32), the keys subtracted.
func ulpDistanceByKeys(a, b float32) uint64 {
	if a != a || b != b {
		return math.MaxUint64
	}
	ka, kb := orderedKey32(a), orderedKey32(b)
	return uint64(max(ka, kb) - min(ka, kb))
}

// orderedKey32 maps a float32 to an integer whose order is the float's;
// ±0 both map to 0.
func orderedKey32(f float32) int64 {
	bits := math.Float32bits(f)
	mag := int64(bits & 0x7fffffff)
	if bits&0x80000000 != 0 {
		return -mag
	}
	return mag
}

func TestULPDistance32ByKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := math.Float32frombits(rapid.Uint32().Draw(t, "a"))
		b := math.Float32frombits(rapid.Uint32().Draw(t, "b"))
		if rapid.Bool().Draw(t, "near") {
			b = math.Float32frombits(math.Float32bits(a) + uint32(rapid.IntRange(0, 3).Draw(t, "d")))
		}
		if got, want := ULPDistance32(a, b), ulpDistanceByKeys(a, b); got != want {
			t.Fatalf("ULPDistance32(%g, %g) = %d, want %d", a, b, got, want)
		}
	})
}

func TestReduction(t *testing.T) {
	for _, tc := range []struct {
		r    Reduction
		n    int
		want int
	}{
		{SerialReduction(), 1, 0},
		{SerialReduction(), 4097, 4096},
		{TreeReduction(256), 256, 8},
		{TreeReduction(256), 257, 9},
		{TreeReduction(256), 4097, 17 - 1 + 8},
		{TreeReduction(256), 3, 2},                 // never more than n−1
		{WarpReduction(), 32, 5},                   // pure shuffle tree
		{Reduction{Threads: 4, Tree: 3}, 8, 1 + 3}, // serial combination of 4 partials
		{TreeReduction(1), 100, 99},                // one thread is serial
		{Reduction{Threads: 0}, 5, 4} /* zero value is serial */} {
		if got := tc.r.Depth(tc.n); got != tc.want {
			t.Errorf("%v.Depth(%d) = %d, want %d", tc.r, tc.n, got, tc.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		r := Reduction{Threads: rapid.IntRange(2, 4096).Draw(t, "threads"), Tree: rapid.IntRange(0, 64).Draw(t, "tree")}
		back, err := ParseReduction(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseReduction(%q) = %v, %v", r.String(), back, err)
		}
		n := rapid.IntRange(1, 1<<16).Draw(t, "n")
		if d := r.Depth(n); d > SerialReduction().Depth(n) || d < 0 {
			t.Fatalf("%v.Depth(%d) = %d outside [0, n−1]", r, n, d)
		}
	})
	if r, err := ParseReduction("serial"); err != nil || r != SerialReduction() {
		t.Errorf("ParseReduction(serial) = %v, %v", r, err)
	}
	for _, bad := range []string{"", "tree", "threads=1,tree=0", "threads=x,tree=2", "threads=4,depth=2"} {
		if _, err := ParseReduction(bad); err == nil {
			t.Errorf("ParseReduction(%q) succeeded", bad)
		}
	}
}

// TestSum32Depth checks that Sum32 in a tree shape stays within
// γ_depth·Σ|t| and that a sum of equal terms in serial order exceeds the
// tree bound: the depth matters.
func TestSum32Depth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5000).Draw(t, "n")
		threads := rapid.SampledFrom([]int{1, 2, 32, 128, 256, 1024}).Draw(t, "threads")
		red := TreeReduction(threads)
		seed := rapid.Uint64().Draw(t, "seed")
		rc := NewSoundnessChooser(seed, 0)
		terms := make([]float32, n)
		var exact kbn
		abs := 0.0
		for i := range terms {
			terms[i] = float32(rc.R.NormFloat64())
			exact.add(float64(terms[i]))
			abs += math.Abs(float64(terms[i]))
		}
		got := float64(Sum32(terms, red))
		if e, b := math.Abs(got-exact.sum()), Gamma(red.Depth(n))*abs; e > b {
			t.Fatalf("|err| = %g > γ_%d·Σ|t| = %g", e, red.Depth(n), b)
		}
	})
	terms := make([]float32, 4097)
	for i := range terms {
		terms[i] = 0.1
	}
	exact := 4097 * float64(float32(0.1))
	serial := math.Abs(float64(Sum32(terms, SerialReduction())) - exact)
	tree := Gamma(TreeReduction(256).Depth(4097)) * exact
	if serial <= tree {
		t.Errorf("serial error %g within the tree bound %g: the bound does not see the order", serial, tree)
	}
}

// TestRelRoots checks relRsqrt and relSqrt against a dense scan of θ.
func TestRelRoots(t *testing.T) {
	for _, tc := range []struct{ t, lo float64 }{{1e-7, 0}, {0.3, 0}, {0.99, 0}, {2, 0.5}, {5, 1e-3}, {0.5, 0.9}} {
		br, bs := relRsqrt(tc.t, tc.lo), relSqrt(tc.t, tc.lo)
		for k := 0; k <= 10000; k++ {
			th := -tc.t + 2*tc.t*float64(k)/10000
			if 1+th < tc.lo {
				continue
			}
			if e := math.Abs(1/math.Sqrt(1+th) - 1); e > br*(1+1e-12) {
				t.Errorf("relRsqrt(%g, %g) = %g < %g at θ = %g", tc.t, tc.lo, br, e, th)
			}
			if e := math.Abs(math.Sqrt(1+th) - 1); e > bs*(1+1e-12) {
				t.Errorf("relSqrt(%g, %g) = %g < %g at θ = %g", tc.t, tc.lo, bs, e, th)
			}
		}
	}
	if !math.IsInf(relRsqrt(1, 0), 1) {
		t.Errorf("relRsqrt(1, 0) finite")
	}
}
