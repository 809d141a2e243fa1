package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/kernels"
)

// refFillTensor is FillTensor written over math/rand/v2's Rand methods
// (before: over its PCG; now over src, which tensorRand is).
func refFillTensor(x []float32, d Dist, s float64, src rand.Source, rows, cols int) {
	r := rand.New(src)
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

// Tensors are math/rand/v2's Rand over tensorRand, bit for bit: every
// distribution, any seed and shape (a stale buffer from the pool is
// overwritten everywhere). The samplers are math/rand/v2's; only the
// uniform source is ours (TestTensorRandSource checks it).
func TestTensorStreamMatchesMathRand(t *testing.T) {
	dists := []Dist{Normal, MixedScale, Constant, Zero, Subnormal, Huge, Special}
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.SampledFrom(dists).Draw(t, "dist")
		s := rapid.Float64Range(-6, 3).Draw(t, "log10scale")
		seed := rapid.Uint64().Draw(t, "seed")
		rows, cols := rapid.IntRange(1, 8).Draw(t, "rows"), rapid.IntRange(1, 700).Draw(t, "cols")
		want := make([]float32, rows*cols)
		refFillTensor(want, d, s, &tensorRand{seed}, rows, cols)
		got := make([]float32, rows*cols)
		for i := range got {
			got[i] = 12345 // stale
		}
		FillTensor(got, d, s, seed, rows, cols)
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
		r := rand.New(&tensorRand{seed})
		p := tensorRand{seed}
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

// firstThen is a rand.Source that yields u once, then rest's stream.
type firstThen struct {
	u    uint64
	used bool
	rest rand.Source
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
				want := rand.New(&firstThen{u: u, rest: &tensorRand{i * 42}}).NormFloat64()
				p := tensorRand{i * 42}
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
// math/rand/v2's Rand over its PCG (the stream tensors had before
// tensorRand), through Rand over tensorRand, and through FillTensor.
func BenchmarkFillTensor(b *testing.B) {
	x := make([]float32, 64*1024)
	b.Run("mathrand-pcg", func(b *testing.B) {
		for b.Loop() {
			refFillTensor(x, Normal, 0, rand.NewPCG(1, 0x9e3779b97f4a7c15), 64, 1024)
		}
	})
	b.Run("mathrand-tensorRand", func(b *testing.B) {
		for b.Loop() {
			refFillTensor(x, Normal, 0, &tensorRand{1}, 64, 1024)
		}
	})
	b.Run("FillTensor", func(b *testing.B) {
		for b.Loop() {
			FillTensor(x, Normal, 0, 1, 64, 1024)
		}
	})
}

// TestTensorRandSource checks the uniform source itself: a stream is a
// function of its seed, nearby seeds (as shrinking produces) give unrelated
// streams, every output bit is balanced, and Float64 has the moments of
// U[0, 1).
func TestTensorRandSource(t *testing.T) {
	a, b := tensorRand{12345}, tensorRand{12345}
	for i := 0; i < 1000; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: seed 12345 gave %#x and %#x", i, x, y)
		}
	}
	// Seeds 0..63 (and γ's stream of seed 0): no two share an output among
	// their first 1000 draws, nor a stream shifted by up to 1000 draws.
	seen := map[uint64]uint64{}
	for seed := uint64(0); seed < 65; seed++ {
		s := seed
		if seed == 64 {
			s = gammaStream
		}
		r := tensorRand{s}
		for i := 0; i < 1000; i++ {
			u := r.Uint64()
			if prev, ok := seen[u]; ok {
				t.Fatalf("seeds %d and %d share the output %#x", prev, s, u)
			}
			seen[u] = s
		}
	}
	const n = 1 << 20
	r := tensorRand{1}
	var ones [64]int
	sum, sum2 := 0.0, 0.0
	for i := 0; i < n; i++ {
		u := r.Uint64()
		for k := range ones {
			ones[k] += int(u >> k & 1)
		}
		f := r.float64()
		sum += f
		sum2 += f * f
	}
	// Each bit: Binomial(n, ½), σ = 512; 6σ.
	for k, c := range ones {
		if d := math.Abs(float64(c) - n/2); d > 6*512 {
			t.Errorf("bit %d set %d times in %d draws (expected %d ± %d)", k, c, n, n/2, 512)
		}
	}
	mean, varr := sum/n, sum2/n-(sum/n)*(sum/n)
	// U[0,1): mean ½ (σ of the mean 0.29/1024), variance 1/12.
	if math.Abs(mean-0.5) > 6*0.2887/1024 || math.Abs(varr-1.0/12) > 1e-3 {
		t.Errorf("Float64: mean %g, variance %g; want 0.5, 0.0833", mean, varr)
	}
}

// TestNormalMoments checks the tensors' normal draws as a distribution:
// mean 0, variance 1, kurtosis 3, and the mass beyond the ziggurat's base
// strip (|x| > 3.4426, P = 5.76e-4) and beyond 1 (P = 0.3173), over 4M
// draws of FillTensor, and that the scale 10^s is applied.
func TestNormalMoments(t *testing.T) {
	const rows, cols = 64, 1 << 16
	x := make([]float32, rows*cols)
	FillTensor(x, Normal, 2, 777, rows, cols)
	n := float64(len(x))
	var m1, m2, m4, tail, out1 float64
	for _, v := range x {
		z := float64(v) / 100
		m1 += z
		m2 += z * z
		m4 += z * z * z * z
		if math.Abs(z) > 3.442619855899 {
			tail++
		}
		if math.Abs(z) > 1 {
			out1++
		}
	}
	m1, m2, m4 = m1/n, m2/n, m4/n
	check := func(name string, got, want, sigma float64) {
		if math.Abs(got-want) > 6*sigma {
			t.Errorf("%s = %.6g, want %.6g ± %.3g (6σ)", name, got, want, 6*sigma)
		}
	}
	sq := math.Sqrt(n)
	check("mean", m1, 0, 1/sq)
	check("variance", m2, 1, math.Sqrt(2)/sq)
	check("E[x⁴]", m4, 3, math.Sqrt(96)/sq)
	pt, p1 := 5.7606e-4, 0.31731
	check("P(|x| > r)", tail/n, pt, math.Sqrt(pt*(1-pt))/sq)
	check("P(|x| > 1)", out1/n, p1, math.Sqrt(p1*(1-p1))/sq)
}

// wedgeBrackets' invariant: wedgeLo[k] ≤ float32(math.Exp(−.5·x·x)) ≤
// wedgeHi[k] for the x of every strip's wedge (drawn as the sampler forms
// them, and at and next to every cell boundary), and wedgeAccepts decides
// as math/rand/v2's test does, for left sides drawn anywhere and at the
// exponential itself and its neighbours.
func TestWedgeBrackets(t *testing.T) {
	check := func(x float64) error {
		e := float32(math.Exp(-.5 * x * x))
		k := int(math.Abs(x) * (1 << wedgeBits))
		if k >= len(wedgeLo) {
			return fmt.Errorf("|x| = %g beyond the tables (%d cells)", x, len(wedgeLo))
		}
		if !(wedgeLo[k] <= e && e <= wedgeHi[k]) {
			return fmt.Errorf("x = %g: float32 exp %g outside cell %d's [%g, %g]", x, e, k, wedgeLo[k], wedgeHi[k])
		}
		return nil
	}
	top := 0.0 // the largest |x| of a wedge
	for _, w := range zigW[1:] {
		top = max(top, float64(w)*(1<<31))
	}
	for k := 0; k <= len(wedgeLo); k++ { // the boundaries of the cells, and their neighbours
		b := float64(k) / (1 << wedgeBits)
		for _, x := range []float64{b, math.Nextafter(b, 0), math.Nextafter(b, 4)} {
			if x <= top {
				if err := check(x); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		i := uint64(rapid.IntRange(1, 127).Draw(t, "strip"))
		lim := int64(zigK[i])
		mag := rapid.Int64Range(lim, 1<<31).Draw(t, "|j|")
		j := int32(mag) // 2^31 wraps to −2^31, as the sampler's int32 does
		if rapid.Bool().Draw(t, "negative") && mag < 1<<31 {
			j = -j
		}
		x := float64(j) * float64(zigW[i])
		if err := check(x); err != nil {
			t.Fatal(err)
		}
		u := float32(rapid.Float64Range(0, 1).Draw(t, "u"))
		e := float32(math.Exp(-.5 * x * x))
		if d := zigF[i-1] - zigF[i]; d > 0 {
			switch rapid.IntRange(0, 2).Draw(t, "u at") { // a left side at or next to e
			case 1:
				u = (e - zigF[i]) / d
			case 2:
				u = math.Nextafter32((e-zigF[i])/d, float32(rapid.IntRange(-1, 1).Draw(t, "dir")))
			}
		}
		want := zigF[i]+u*(zigF[i-1]-zigF[i]) < e
		if got := wedgeAccepts(i, x, u); got != want {
			t.Fatalf("strip %d x %g u %g: wedgeAccepts %v, math/rand/v2's test %v", i, x, u, got, want)
		}
	})
}

// TestHiddenMultiple: with Limits.HiddenMultiple every drawn row length is
// a multiple of it within MaxHidden, the edge grid's multiples included.
func TestHiddenMultiple(t *testing.T) {
	lim := Limits{MaxRows: 8, MaxHidden: 1000, MaxElements: 1 << 14, HiddenMultiple: 24}
	seen := map[int]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		h := Hidden(lim).Draw(rt, "hidden")
		if h%24 != 0 || h < 24 || h > 1000 {
			rt.Fatalf("hidden %d", h)
		}
		seen[h] = true
	})
	if len(seen) < 5 {
		t.Fatalf("only %d distinct row lengths", len(seen))
	}
	// No edge value is a multiple of 7 below 50: the random draw alone.
	lim = Limits{MaxRows: 8, MaxHidden: 50, HiddenMultiple: 7}
	rapid.Check(t, func(rt *rapid.T) {
		if h := Hidden(lim).Draw(rt, "hidden"); h%7 != 0 || h > 50 {
			rt.Fatalf("hidden %d", h)
		}
	})
}

// The emulator draws the row counts a GPU does: its limits cap elements,
// not rows, so a chunked backward's chunk grows past kernels.ChunkMinRows
// (at 2049 rows of a small hidden size) on the CPU as well, and the edge
// rows sit on both sides of that step.
func TestEmulatorDrawsChunkedRowCounts(t *testing.T) {
	step := kernels.ChunkMinRows * kernels.ChunkTargetBlocks
	if kernels.ChunkRows(step) != kernels.ChunkMinRows || kernels.ChunkRows(step+1) == kernels.ChunkMinRows {
		t.Fatalf("the chunk no longer grows at %d rows: update EdgeRows", step+1)
	}
	for _, r := range []int{step, step + 1} {
		if !slices.Contains(EdgeRows, r) {
			t.Errorf("EdgeRows %v lacks %d", EdgeRows, r)
		}
	}
	lim := EmuLimits
	// Beyond RandomRows rows come rarely (the emulator runs a block a
	// row): about one draw in WideOdds.
	const draws = 2000
	rows := Rows(lim, 2)
	most, wide := 0, 0
	for seed := range draws {
		r := rows.Example(seed)
		most = max(most, r)
		if r > lim.RandomRows {
			wide++
		}
	}
	if most <= step {
		t.Errorf("rows of hidden 2 drawn under the emulator's limits reach %d, want past %d", most, step)
	}
	if f := float64(wide) / draws; f < 0.5/WideOdds || f > 2.0/WideOdds {
		t.Errorf("%d of %d draws beyond %d rows, want about 1 in %d", wide, draws, lim.RandomRows, WideOdds)
	}
	// Where the elements allow no more than RandomRows, nothing changes.
	for seed := range 200 {
		if r := Rows(lim, 1024).Example(seed); r > lim.MaxElements/1024 {
			t.Fatalf("hidden 1024: %d rows", r)
		}
	}
}

// MinRows raises the least row count drawn, but never past what the
// elements allow (then every draw is that many rows).
func TestRowsMinRows(t *testing.T) {
	lim := EmuLimits
	lim.MinRows = 64
	for seed := range 300 {
		if r := Rows(lim, 31).Example(seed); r < 64 || r*31 > lim.MaxElements {
			t.Fatalf("hidden 31, MinRows 64: %d rows", r)
		}
		if r := Rows(lim, 1024).Example(seed); r != lim.MaxElements/1024 {
			t.Fatalf("hidden 1024, MinRows 64: %d rows, want the %d the elements allow", r, lim.MaxElements/1024)
		}
	}
}

// shapeGen is Shape as a generator, for Example.
func shapeGen(lim Limits) *rapid.Generator[[2]int] {
	return rapid.Custom(func(t *rapid.T) [2]int {
		r, h := Shape(t, lim)
		return [2]int{r, h}
	})
}

// A regime is drawn in about one check of RegimeOdds, by construction:
// every shape it gives lies inside it (rows past 2048 with up to 2²⁰
// elements, far beyond the emulator's everyday 2¹⁴), and no other draw
// leaves the everyday limits.
func TestShapeDrawsRegimes(t *testing.T) {
	chunk := Regime{Name: "chunk>4", MinRows: 2049, MaxElements: 1 << 20}
	lim := EmuLimits.WithRegimes(chunk)
	const draws = 3000
	in, most := 0, 0
	g := shapeGen(lim)
	for seed := range draws {
		s := g.Example(seed)
		rows, hidden := s[0], s[1]
		n := rows * hidden
		most = max(most, n)
		switch {
		case rows < 1 || hidden < 1 || rows > lim.MaxRows || hidden > lim.MaxHidden || n > chunk.MaxElements:
			t.Fatalf("seed %d: %d×%d outside every limit", seed, rows, hidden)
		case n > lim.MaxElements:
			if rows < chunk.MinRows {
				t.Fatalf("seed %d: %d×%d beyond the everyday elements but outside the regime", seed, rows, hidden)
			}
			in++
		}
	}
	if f := float64(in) / draws; f < 0.5/RegimeOdds || f > 2.0/RegimeOdds {
		t.Errorf("%d of %d shapes from the regime, want about 1 in %d", in, draws, RegimeOdds)
	}
	if most < 1<<19 {
		t.Errorf("the largest shape drawn has %d elements, want the regime's reach (2²⁰) approached", most)
	}
}

// A regime with Odds is drawn in about one check of Odds by itself, while
// the regimes without Odds keep their one check in RegimeOdds together.
func TestShapeRegimeOdds(t *testing.T) {
	wide := Regime{Name: "wide", MinRows: 2, MaxRows: 8, MinHidden: 8193, MaxElements: 1 << 20, Odds: 4}
	chunk := Regime{Name: "chunk>4", MinRows: 2049, MaxElements: 1 << 20}
	lim := EmuLimits.WithRegimes(chunk, wide)
	const draws = 4000
	inWide, inChunk := 0, 0
	g := shapeGen(lim)
	for seed := range draws {
		s := g.Example(seed)
		rows, hidden := s[0], s[1]
		switch {
		case rows*hidden <= lim.MaxElements:
		case rows >= chunk.MinRows:
			inChunk++
		case rows >= wide.MinRows && rows <= wide.MaxRows && hidden >= wide.MinHidden:
			inWide++
		default:
			t.Fatalf("seed %d: %d×%d beyond the everyday elements but in no regime", seed, rows, hidden)
		}
	}
	if f := float64(inWide) / draws * float64(wide.Odds); f < 0.5 || f > 1.5 {
		t.Errorf("%d of %d shapes from the regime with Odds %d, want about 1 in %d", inWide, draws, wide.Odds, wide.Odds)
	}
	if f := float64(inChunk) / draws; f < 0.5/RegimeOdds || f > 2.0/RegimeOdds {
		t.Errorf("%d of %d shapes from the shared regime, want about 1 in %d", inChunk, draws, RegimeOdds)
	}
}

// Without regimes Shape draws what Hidden then Rows draw, so predictions
// that declare none keep their draws (and their rapid seeds' cases).
func TestShapeWithoutRegimes(t *testing.T) {
	for _, lim := range []Limits{EmuLimits, GPULimits, EmuLimits.WithRegimes()} {
		pair := rapid.Custom(func(t *rapid.T) [2]int {
			h := Hidden(lim).Draw(t, "hidden")
			return [2]int{Rows(lim, h).Draw(t, "rows"), h}
		})
		g := shapeGen(lim)
		for seed := range 300 {
			if a, b := g.Example(seed), pair.Example(seed); a != b {
				t.Fatalf("seed %d: Shape %v, Hidden and Rows %v", seed, a, b)
			}
		}
	}
}

// The Limits bound a regime: a row cap below it (falsify's old 64 rows)
// or an element cap that leaves no row length empties it, Cap lowers its
// elements, and HiddenMultiple holds inside it.
func TestRegimeBounds(t *testing.T) {
	chunk := Regime{Name: "chunk>4", MinRows: 2049, MaxElements: 1 << 20}
	lock := Regime{Name: "lock", MinRows: 257, MinHidden: 129, MaxElements: 1 << 20}
	lim := EmuLimits.WithRegimes(chunk, lock)
	if rs := lim.Regimes(); len(rs) != 2 || rs[0].MaxHidden != (1<<20)/2049 || rs[1].MaxRows != lim.MaxRows {
		t.Fatalf("regimes %+v", rs)
	}
	capped := lim
	capped.MaxRows = 64
	if rs := capped.Regimes(); len(rs) != 0 {
		t.Errorf("64 rows at most: regimes %+v, want none", rs)
	}
	capped.RegimeMaxRows = lim.MaxRows
	if rs := capped.Regimes(); len(rs) != 2 || rs[0].MaxRows != lim.MaxRows {
		t.Errorf("64 everyday rows, %d in regimes: regimes %+v, want both to %d rows", lim.MaxRows, rs, lim.MaxRows)
	}
	if rs := lim.Cap(2048).Regimes(); len(rs) != 0 {
		t.Errorf("Cap(2048): regimes %+v, want none (2049 rows need more)", rs)
	}
	if rs := lim.Cap(1 << 14).Regimes(); len(rs) != 1 || rs[0].Name != "chunk>4" || rs[0].MaxHidden != (1<<14)/2049 {
		t.Errorf("Cap(2¹⁴): regimes %+v, want chunk>4 alone with rows of up to 7", rs)
	}
	m := lim
	m.HiddenMultiple = 8
	g := shapeGen(m)
	for seed := range 2000 {
		if s := g.Example(seed); s[1]%8 != 0 || s[0]*s[1] > 1<<20 {
			t.Fatalf("HiddenMultiple 8: shape %v", s)
		}
	}
}
