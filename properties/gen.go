package properties

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"pgregory.net/rapid"
)

// EdgeHidden is the fixed grid of row lengths every shape generator starts
// from: powers of two and their neighbours, where reductions and vector
// loads change behaviour.
var EdgeHidden = []int{1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 4097, 8192, 16384}

// Limits bounds the shapes a generator may draw; the emulator uses smaller
// limits than a GPU so that CI stays within its time.
type Limits struct {
	MaxRows     int // rows drawn from 1..MaxRows
	MaxHidden   int // hidden drawn from the edge grid up to MaxHidden, or at random beyond it
	MaxElements int // rows·hidden cap (rows shrink to fit)
}

// GPULimits are the ranges on a GPU: rows 1..4096, hidden up to 16384, at
// most 2¹⁶ elements a tensor (rows shrink to fit: 4096 rows of up to 16,
// 4 rows of 16384). The cap is what keeps 10 000 checks of every prediction
// within 5 minutes on one GPU: every check moves its tensors to and from the
// device and evaluates the float64 oracle and its bounds on the CPU, and with
// 2¹⁸ the run is bound by those copies (measured on an H200). Larger shapes
// are the kernels' edge grid and benchmarks' business; -max-elements raises
// the cap for a longer run.
var GPULimits = Limits{MaxRows: 4096, MaxHidden: 16384, MaxElements: 1 << 16}

// EmuLimits keep one check small enough for the CPU emulator.
var EmuLimits = Limits{MaxRows: 64, MaxHidden: 16384, MaxElements: 1 << 14}

// Cap returns lim with at most n elements a tensor: for properties whose
// claim is not about size (θ, the RoPE basis) and whose checks cost several
// oracle evaluations.
func (lim Limits) Cap(n int) Limits {
	if lim.MaxElements == 0 || lim.MaxElements > n {
		lim.MaxElements = n
	}
	return lim
}

// Hidden draws a row length: from the edge grid up to lim.MaxHidden most of
// the time, otherwise uniform in [1, lim.MaxHidden].
func Hidden(lim Limits) *rapid.Generator[int] {
	var grid []int
	for _, h := range EdgeHidden {
		if h <= lim.MaxHidden {
			grid = append(grid, h)
		}
	}
	return rapid.OneOf(rapid.SampledFrom(grid), rapid.SampledFrom(grid), rapid.IntRange(1, lim.MaxHidden))
}

// Rows draws a row count for rows of length hidden under lim.
func Rows(lim Limits, hidden int) *rapid.Generator[int] {
	hi := lim.MaxRows
	if lim.MaxElements > 0 && hidden > 0 && hi*hidden > lim.MaxElements {
		hi = max(1, lim.MaxElements/hidden)
	}
	edge := []int{1, 2, 7, 64, 1000}
	var in []int
	for _, r := range edge {
		if r <= hi {
			in = append(in, r)
		}
	}
	return rapid.OneOf(rapid.SampledFrom(in), rapid.IntRange(1, hi))
}

// Eps draws ε: log-uniform in [1e-8, 1e-2], plus the two values models use
// (1e-5 Llama, 1e-6 Qwen).
func Eps() *rapid.Generator[float32] {
	return rapid.OneOf(
		rapid.SampledFrom([]float32{1e-5, 1e-6}),
		rapid.Custom(func(t *rapid.T) float32 {
			return float32(math.Pow(10, rapid.Float64Range(-8, -2).Draw(t, "log10eps")))
		}),
	)
}

// Theta draws a RoPE base: {1e4, 5e5, 1e6} or log-uniform in [1e2, 1e7].
func Theta() *rapid.Generator[float32] {
	return rapid.OneOf(
		rapid.SampledFrom([]float32{1e4, 5e5, 1e6}),
		rapid.Custom(func(t *rapid.T) float32 {
			return float32(math.Pow(10, rapid.Float64Range(2, 7).Draw(t, "log10theta")))
		}),
	)
}

// Position draws a token position in [0, 131072], with 0 and the powers of
// two around the float32 angle-error cliff represented.
func Position() *rapid.Generator[int] {
	return rapid.OneOf(rapid.SampledFrom([]int{0, 1, 2, 1023, 4096, 32768, 131072}), rapid.IntRange(0, 131072))
}

// Dist names a value distribution for generated tensors.
type Dist string

// Distributions. Finite ones are used by every property; Special adds
// ±Inf/NaN and is used only by robustness properties.
const (
	Normal     Dist = "normal"      // N(0,1) · 10^s, s ~ U(−6, 3) per tensor
	MixedScale Dist = "mixed-scale" // each row its own scale 10^U(−6, 3)
	Constant   Dist = "constant"    // every element of a row equal
	Zero       Dist = "zero"        // all zeros
	Subnormal  Dist = "subnormal"   // magnitudes below 2^-126
	Huge       Dist = "huge"        // magnitudes near float32 overflow
	Special    Dist = "special"     // normal values with ±Inf and NaN sprinkled in
)

// FiniteDists are the distributions of ordinary properties.
var FiniteDists = []Dist{Normal, Normal, Normal, MixedScale, Constant, Zero, Subnormal}

// Tensor is a generated float32 tensor and how it was made, so a
// counterexample names it compactly (rapid prints the labelled draws).
type Tensor struct {
	Dist  Dist
	Scale float64 // log10 of the scale
	Seed  uint64
	Data  []float32
}

func (t Tensor) String() string {
	return fmt.Sprintf("%s(10^%.2f, seed %d, n=%d)", t.Dist, t.Scale, t.Seed, len(t.Data))
}

// Values draws a rows×cols tensor from one of dists. The elements come from
// a PCG seeded by a drawn seed: rapid shrinks the distribution, scale and
// seed, and the counterexample stays a few numbers long.
func Values(t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	if len(dists) == 0 {
		dists = FiniteDists
	}
	d := rapid.SampledFrom(dists).Draw(t, label+".dist")
	s := rapid.Float64Range(-6, 3).Draw(t, label+".log10scale")
	seed := rapid.Uint64().Draw(t, label+".seed")
	// MakeTensor's data, in a slice that a check which ends the tensor's
	// life may have returned to the scratch pool (see rmsCase.keep).
	x := scratch32.get(rows * cols)
	fillTensor(x, d, s, seed, rows, cols)
	return Tensor{Dist: d, Scale: s, Seed: seed, Data: x}
}

// MakeTensor builds the tensor Values would draw for (d, s, seed).
func MakeTensor(d Dist, s float64, seed uint64, rows, cols int) Tensor {
	x := make([]float32, rows*cols)
	fillTensor(x, d, s, seed, rows, cols)
	return Tensor{Dist: d, Scale: s, Seed: seed, Data: x}
}

// fillTensor writes MakeTensor's data into x (len rows·cols), every element.
func fillTensor(x []float32, d Dist, s float64, seed uint64, rows, cols int) {
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

// Gamma draws a weight vector of length n: ones, or normal around 1, or a
// general normal tensor.
func Gamma(t *rapid.T, label string, n int) []float32 {
	kind := rapid.SampledFrom([]string{"ones", "around-one", "normal"}).Draw(t, label+".kind")
	seed := rapid.Uint64().Draw(t, label+".seed")
	r := rand.New(rand.NewPCG(seed, 7))
	g := make([]float32, n)
	for i := range g {
		switch kind {
		case "ones":
			g[i] = 1
		case "around-one":
			g[i] = float32(1 + 0.1*r.NormFloat64())
		default:
			g[i] = float32(r.NormFloat64())
		}
	}
	return g
}

// F64 widens a float32 slice exactly.
func F64(x []float32) []float64 {
	return widen(make([]float64, len(x)), x)
}

// widen writes float64(x[i]) to y[i] and returns y (len(y) = len(x)).
func widen(y []float64, x []float32) []float64 {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// scratchPool recycles the scratch slices of checks (inputs widened for
// the oracle, oracle values and bounds, naive evaluations that do not
// outlive the check): at GPU shapes a check would otherwise allocate, zero
// and collect megabytes. Pool k holds slices of capacity 2^k.
type scratchPool[T any] [bits.UintSize]sync.Pool

// get returns a slice of n elements with unspecified contents, for values
// the caller writes in full before reading; give it back with put once
// nothing refers to it.
func (p *scratchPool[T]) get(n int) []T {
	k := 0
	if n > 1 {
		k = bits.Len(uint(n - 1)) // 2^k ≥ n
	}
	if s, ok := p[k].Get().(*[]T); ok {
		return (*s)[:n]
	}
	return make([]T, n, 1<<k)
}

// put returns slices to the pool. Slices whose capacity is not a power of
// two (nil, or not from get) are dropped.
func (p *scratchPool[T]) put(s ...[]T) {
	for _, b := range s {
		c := cap(b)
		if c == 0 || c&(c-1) != 0 {
			continue
		}
		b = b[:0]
		p[bits.Len(uint(c-1))].Put(&b)
	}
}

var (
	scratch64 scratchPool[float64]
	scratch32 scratchPool[float32]
)

// scratchWiden is F64 into a slice from scratch64.
func scratchWiden(x []float32) []float64 { return widen(scratch64.get(len(x)), x) }

// poisoned returns a slice of n NaNs from scratch32, for a kernel output:
// an element the implementation never writes cannot pass for a result.
func poisoned(n int) []float32 {
	y := scratch32.get(n)
	nan := float32(math.NaN())
	for i := range y {
		y[i] = nan
	}
	return y
}
