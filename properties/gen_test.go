package properties

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// refFillTensor is fillTensor as it was, over math/rand/v2.
func refFillTensor(x []float32, d Dist, s float64, seed uint64, rows, cols int) {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	scale := math.Pow(10, s)
	for i := 0; i < rows; i++ {
		row := x[i*cols : (i+1)*cols]
		switch d {
		case Normal:
			for j := range row {
				row[j] = float32(r.NormFloat64() * scale)
			}
		case MixedScale:
			rs := math.Pow(10, -6+9*r.Float64())
			for j := range row {
				row[j] = float32(r.NormFloat64() * rs)
			}
		case Constant:
			c := float32(r.NormFloat64() * scale)
			for j := range row {
				row[j] = c
			}
		case Zero:
			clear(row)
		case Subnormal:
			for j := range row {
				row[j] = float32(r.NormFloat64() * 0x1p-130)
			}
		case Huge:
			for j := range row {
				row[j] = float32(r.NormFloat64() * 0x1p120)
			}
		case Special:
			for j := range row {
				row[j] = float32(r.NormFloat64() * scale)
				switch r.IntN(16) {
				case 0:
					row[j] = float32(math.Inf(1))
				case 1:
					row[j] = float32(math.Inf(-1))
				case 2:
					row[j] = float32(math.NaN())
				}
			}
		}
	}
}

// Tensors are math/rand/v2's streams, bit for bit: every distribution, any
// seed and shape (a stale buffer from the pool is overwritten everywhere).
func TestTensorStreamMatchesMathRand(t *testing.T) {
	dists := []Dist{Normal, MixedScale, Constant, Zero, Subnormal, Huge, Special}
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.SampledFrom(dists).Draw(t, "dist")
		s := rapid.Float64Range(-6, 3).Draw(t, "log10scale")
		seed := rapid.Uint64().Draw(t, "seed")
		rows, cols := rapid.IntRange(1, 8).Draw(t, "rows"), rapid.IntRange(1, 700).Draw(t, "cols")
		want := make([]float32, rows*cols)
		refFillTensor(want, d, s, seed, rows, cols)
		got := make([]float32, rows*cols)
		for i := range got {
			got[i] = 12345 // stale
		}
		fillTensor(got, d, s, seed, rows, cols)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s seed %d: element %d = %g, want %g", d, seed, i, got[i], want[i])
			}
		}
	})
}

// The normal sampler's rare paths (a strip's wedge, the tail beyond
// strip 0) come up about once in 80 draws: millions of draws cross them
// thousands of times.
func TestNormalSamplerMatchesMathRand(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	for _, seed := range []uint64{0, 1, 0xdeadbeef, math.MaxUint64} {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		p := pcg{hi: seed, lo: 0x9e3779b97f4a7c15}
		buf := make([]float32, 1000)
		for k := 0; k < n; k += 2 * len(buf) {
			for i := 0; i < len(buf); i++ {
				if a, b := r.NormFloat64(), p.norm(); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("seed %d draw %d: norm %g, want %g", seed, k+i, b, a)
				}
			}
			p.fillNormal(buf, 1)
			for i, v := range buf {
				if a := float32(r.NormFloat64()); math.Float32bits(a) != math.Float32bits(v) {
					t.Fatalf("seed %d draw %d: fillNormal %g, want %g", seed, k+len(buf)+i, v, a)
				}
			}
			if a, b := r.Float64(), p.float64(); a != b {
				t.Fatalf("seed %d: Float64 %g, want %g", seed, b, a)
			}
		}
	}
}

// firstThen is a rand.Source that yields u once, then a PCG's stream.
type firstThen struct {
	u    uint64
	used bool
	rest *rand.PCG
}

func (s *firstThen) Uint64() uint64 {
	if !s.used {
		s.used = true
		return s.u
	}
	return s.rest.Uint64()
}

// Every entry of the copied ziggurat tables: for each strip i, draws just
// inside and just outside its rectangle (|j| = kn[i]−1, kn[i]) of either
// sign, then the wedge or tail test on the stream that follows, agree with
// math/rand/v2's NormFloat64.
func TestZigguratTablesMatchMathRand(t *testing.T) {
	for i := uint64(0); i < 128; i++ {
		for _, k := range []uint32{zigK[i] - 1, zigK[i], zigK[i] + 1, 0x7fffffff} {
			for _, neg := range []bool{false, true} {
				j := int32(k)
				if k > 0x7fffffff {
					continue
				}
				if neg {
					j = -j
				}
				u := i<<32 | uint64(uint32(j)) | 0xabcd<<40
				want := rand.New(&firstThen{u: u, rest: rand.NewPCG(i, 42)}).NormFloat64()
				p := pcg{hi: i, lo: 42}
				x := float64(j) * float64(zigW[i])
				got := x
				if m := j >> 31; uint32((j^m)-m) >= zigK[i] {
					got = p.normSlow(j, i, x)
				}
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("strip %d, j = %d: %g, want %g", i, j, got, want)
				}
			}
		}
	}
}

// BenchmarkFillTensor compares a 64×1024 normal tensor drawn through
// math/rand/v2 (before) and through pcg (after).
func BenchmarkFillTensor(b *testing.B) {
	x := make([]float32, 64*1024)
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			refFillTensor(x, Normal, 0, 1, 64, 1024)
		}
	})
	b.Run("after", func(b *testing.B) {
		for b.Loop() {
			fillTensor(x, Normal, 0, 1, 64, 1024)
		}
	})
}
