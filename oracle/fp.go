package oracle

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// U32 is the unit roundoff of IEEE-754 binary32 under round-to-nearest:
// |fl(a∘b) − a∘b| ≤ U32·|a∘b| for every basic operation whose result is normal.
const U32 = 0x1p-24

// Eps64 is the unit roundoff of IEEE-754 binary64, 2^-53.
const Eps64 = 0x1p-53

// SmallestNormal32 is the smallest positive normal float32, 2^-126.
const SmallestNormal32 = 0x1p-126

// Eta32 is the absolute error a single float32 multiplication or division
// can make when its result underflows (half the subnormal spacing 2^-149),
// assuming gradual underflow (no flush-to-zero). Additions and subtractions
// are exact when their result is subnormal, so they never contribute Eta32.
const Eta32 = 0x1p-150

// Gamma returns γ_n = n·U32/(1−n·U32), Higham's bound on |∏(1+δ_i)^{±1} − 1|
// for n roundings with |δ_i| ≤ U32. It returns 0 for n ≤ 0 and +Inf when
// n·U32 ≥ 1.
func Gamma(n int) float64 {
	if n <= 0 {
		return 0
	}
	nu := float64(n) * U32
	if nu >= 1 {
		return math.Inf(1)
	}
	return nu / (1 - nu)
}

// ULPDistance32 returns the number of float32 values strictly between a and
// b plus one (0 when a == b). +0 and −0 are at distance 0, and the distance
// across zero counts the subnormals on both sides. It returns math.MaxUint64
// when either argument is NaN.
func ULPDistance32(a, b float32) uint64 {
	ba, bb := math.Float32bits(a), math.Float32bits(b)
	ma, mb := int64(ba&0x7fffffff), int64(bb&0x7fffffff) // ordered magnitudes
	if ma > 0x7f800000 || mb > 0x7f800000 {              // NaN
		return math.MaxUint64
	}
	if (ba^bb)>>31 != 0 { // opposite signs: through zero
		return uint64(ma + mb)
	}
	// max is a conditional move: which of two random values is larger
	// would defeat a branch predictor.
	d := ma - mb
	return uint64(max(d, -d))
}

// IsFloat32 reports whether v is exactly representable as a float32
// (±Inf included, NaN excluded).
func IsFloat32(v float64) bool {
	return float64(float32(v)) == v
}

// RoundToFloat32 rounds every element of s to the nearest float32 in place
// and returns s. Inputs handed to the oracle must be the values the kernel
// sees; this is how generators make them so.
func RoundToFloat32(s []float64) []float64 {
	for i, v := range s {
		s[i] = float64(float32(v))
	}
	return s
}

// Reduction describes the order in which a kernel sums the n terms of one
// reduction (a row of hidden values, or the rows of a dγ column). Each of
// Threads partial sums accumulates ceil(n/Threads) terms serially, then the
// partial sums are combined by a stage in which any partial sum takes part
// in at most Tree additions (a binary tree of depth Tree, a warp shuffle of
// depth 5, a serial loop over Threads partials of depth Threads−1, ...).
//
// The bound of a summation only depends on the depth of that order: the
// largest number of rounded additions any single term goes through.
// Additions of an exact zero are exact, and merging n nonzero leaves takes
// exactly n−1 additions, so the depth never exceeds n−1: the naive serial
// order, whose first term goes through n−1 additions, is the worst case for
// every order, including nondeterministic atomicAdd orders.
type Reduction struct {
	// Threads is the number of partial sums per reduction; ≤ 1 means one
	// serial sum.
	Threads int
	// Tree is the number of additions on the longest path by which a partial
	// sum reaches the total.
	Tree int
	// Flush says that the additions may flush subnormal operands and
	// results to zero: atom.add.f32 and red.add.f32 on global memory do
	// (PTX ISA: "flushes subnormal inputs and results to sign-preserving
	// zero"). Each addition then errs by up to 2^-126 for the term it
	// flushes and 2^-126 for its result, FlushPerAddition in all.
	Flush bool
}

// FlushPerAddition bounds the error one flushing addition adds: a
// subnormal term flushed (< 2^-126) and a subnormal result flushed
// (< 2^-126).
const FlushPerAddition = 0x1p-125

// flushAbs is the absolute error that flushing additions add to a sum of
// terms terms in order r: one flushing addition per term at most, each
// carried through the additions after it (the factor 1+γ_{d+1}).
func (r Reduction) flushAbs(terms int) float64 {
	if !r.Flush || terms <= 0 {
		return 0
	}
	return float64(terms) * FlushPerAddition * (1 + Gamma(r.Depth(terms)+1))
}

// SerialReduction returns the naive left-to-right order (depth n−1); it is
// valid for every summation order.
func SerialReduction() Reduction { return Reduction{Threads: 1} }

// TreeReduction returns the shape of a strided loop over threads partial
// sums followed by a balanced binary tree (shared memory or warp shuffles)
// of depth ceil(log2(threads)).
func TreeReduction(threads int) Reduction {
	if threads <= 1 {
		return SerialReduction()
	}
	return Reduction{Threads: threads, Tree: ceilLog2(threads)}
}

// WarpReduction returns the shape of a single warp of 32 lanes each summing
// a strided slice, then a shuffle tree of depth 5.
func WarpReduction() Reduction { return TreeReduction(32) }

// Depth returns the largest number of rounded additions a term of an
// n-term reduction goes through: min(n−1, ceil(n/Threads)−1+Tree).
func (r Reduction) Depth(n int) int {
	if n <= 1 {
		return 0
	}
	t := r.Threads
	if t < 1 {
		t = 1
	}
	serial := (n + t - 1) / t
	d := serial - 1 + r.Tree
	if t == 1 {
		d = serial - 1
	}
	if d > n-1 {
		d = n - 1
	}
	if d < 0 {
		d = 0
	}
	return d
}

// String formats r as "serial" or "threads=T,tree=D"; ParseReduction
// inverts it.
func (r Reduction) String() string {
	if r.Threads <= 1 {
		return "serial"
	}
	return fmt.Sprintf("threads=%d,tree=%d", r.Threads, r.Tree)
}

// ParseReduction parses the output of Reduction.String.
func ParseReduction(s string) (Reduction, error) {
	if s == "serial" {
		return SerialReduction(), nil
	}
	var r Reduction
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return r, fmt.Errorf("oracle: parse reduction %q: want serial or threads=T,tree=D", s)
	}
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return r, fmt.Errorf("oracle: parse reduction %q: missing '=' in %q", s, p)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return r, fmt.Errorf("oracle: parse reduction %q: bad value %q", s, v)
		}
		switch k {
		case "threads":
			r.Threads = n
		case "tree":
			r.Tree = n
		default:
			return r, fmt.Errorf("oracle: parse reduction %q: unknown key %q", s, k)
		}
	}
	if r.Threads <= 1 {
		return r, fmt.Errorf("oracle: parse reduction %q: threads must be > 1 (use serial)", s)
	}
	return r, nil
}

func ceilLog2(n int) int {
	d := 0
	for v := 1; v < n; v <<= 1 {
		d++
	}
	return d
}

// relMul returns the bound on |(1+a)(1+b)−1| for |·| ≤ a, b.
func relMul(a, b float64) float64 { return a + b + a*b }

// relRsqrt returns a bound on |(1+θ)^{-1/2} − 1| for −t ≤ θ ≤ t and
// 1+θ ≥ lo ≥ 0: the larger of max(1−t, lo)^{-1/2} − 1 (θ < 0) and
// 1 − (1+t)^{-1/2} (θ > 0); +Inf when 1+θ may reach 0. lo carries what is
// known independently of the error analysis, e.g. v̂ ≥ eps₃₂ for
// v̂ = fl(nonnegative + eps₃₂).
func relRsqrt(t, lo float64) float64 {
	m := math.Max(1-t, lo)
	if m <= 0 {
		return math.Inf(1)
	}
	return math.Max(1/math.Sqrt(m)-1, 1-1/math.Sqrt(1+t))
}

// relSqrt returns a bound on |(1+θ)^{1/2} − 1| for −t ≤ θ ≤ t and
// 1+θ ≥ lo ≥ 0: the larger of 1 − max(1−t, lo, 0)^{1/2} and (1+t)^{1/2} − 1.
func relSqrt(t, lo float64) float64 {
	m := math.Max(math.Max(1-t, lo), 0)
	return math.Max(1-math.Sqrt(m), math.Sqrt(1+t)-1)
}

// epsFloor returns a lower bound on v̂/v when v̂ = fl(w + float32(eps)) with
// w ≥ 0 computed: v̂ ≥ (eps(1−u) − η)(1−u).
func epsFloor(eps, v float64) float64 {
	lo := (eps*(1-U32) - Eta32) * (1 - U32) / v
	if lo < 0 || v == 0 {
		return 0
	}
	return lo
}

// kbn is a Kahan–Babuška–Neumaier accumulator (the algorithm of
// floats.SumCompensated) that also captures the rounding error of products
// with an FMA, so dot products of float32 data are accurate to about
// 2^-100 relative to the sum of magnitudes.
type kbn struct{ s, c float64 }

func (a *kbn) add(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

func (a *kbn) addProd(x, y float64) {
	p := x * y
	a.add(p)
	if !math.IsInf(p, 0) && !math.IsNaN(p) { // the error term of Inf·y is NaN, not 0
		a.add(math.FMA(x, y, -p))
	}
}

// sum returns the compensated sum. Once the running sum is ±Inf or NaN the
// correction term is NaN (Inf − Inf) and meaningless: the IEEE 754 sum of
// the terms is then the running sum itself (Inf stays Inf, Inf − Inf is NaN).
func (a *kbn) sum() float64 {
	if math.IsInf(a.s, 0) || math.IsNaN(a.s) {
		return a.s
	}
	return a.s + a.c
}

// csum is kbn for hot loops: a value (so that the compiler keeps it in
// registers) updated by plus, whose rounding error is Knuth's branch-free
// TwoSum instead of Neumaier's |s| ≥ |x| test, which random signs make
// unpredictable. Both give the exact error (s + x) − fl(s + x) of an
// addition whose intermediates do not overflow, so a csum fed the same terms
// as a kbn holds the same s and c, bit for bit. TwoSum alone can overflow
// spuriously (in t − s, for operands near the largest float64) where
// Fast2Sum does not; c then turns NaN for good while s stays finite, which
// overflowed reports, and the caller redoes that sum with kbn.
type csum struct{ s, c float64 }

// plus returns a with x added.
func (a csum) plus(x float64) csum {
	t := a.s + x
	bb := t - a.s
	return csum{t, a.c + ((a.s - (t - bb)) + (x - bb))}
}

// overflowed reports whether TwoSum overflowed where kbn would not have:
// the running sum is finite but the correction is not.
func (a csum) overflowed() bool { return a.s-a.s == 0 && a.c-a.c != 0 }

// sum is kbn.sum.
func (a csum) sum() float64 {
	if math.IsInf(a.s, 0) || math.IsNaN(a.s) {
		return a.s
	}
	return a.s + a.c
}

// prodErr returns the rounding error x·y − p of p = fl(x·y), exact by FMA,
// and 0 when p is ±Inf or NaN, as kbn.addProd. Adding a zero changes neither
// s nor c of a compensated sum (s and c are never −0), so callers skip it:
// products of two float32 values (squares of the kernel's inputs, γ·dy)
// are exact in binary64 and cost a single addition.
func prodErr(x, y, p float64) float64 {
	if p-p != 0 {
		return 0
	}
	return math.FMA(x, y, -p)
}

// sumSquares returns the compensated Σx² of x: kbn.addProd(v, v) over x,
// bit for bit, at the speed of a csum.
func sumSquares(x []float64) float64 {
	a, i := sumExactSquares(x)
	for _, v := range x[i:] {
		p := v * v
		a = a.plus(p)
		if e := prodErr(v, v, p); e != 0 {
			a = a.plus(e)
		}
	}
	if a.overflowed() {
		var k kbn
		for _, v := range x {
			k.addProd(v, v)
		}
		return k.sum()
	}
	return a.sum()
}

// sumExactSquares sums v² over the leading elements of x whose square is
// exact (squareIsExact: every float32 value), whose rounding error,
// kbn.addProd's second term, is zero, and returns the sum and how many
// elements it took. It has no FMA: without GOAMD64=v3 math.FMA carries a
// software fallback whose call makes the compiler spill the loop.
func sumExactSquares(x []float64) (csum, int) {
	var a csum
	for i, v := range x {
		if !squareIsExact(v) {
			return a, i
		}
		a = a.plus(v * v)
	}
	return a, len(x)
}

// squareIsExact reports whether v·v is exact in binary64, by its bits: v
// is ±0, or has at most 26 significant bits (the low 27 of 52 fraction bits
// are zero; a float32 has 24) and 2^-500 ≤ |v| < 2^501, so v² has at most
// 52 significant bits and is normal. Every float32 value qualifies.
func squareIsExact(v float64) bool {
	b := math.Float64bits(v)
	e := b >> 52 & 0x7ff
	return b&(1<<27-1) == 0 && (e-(1023-500) <= 1000 || b<<1 == 0)
}

// Sum32 sums terms in float32 in the order described by red: partial sum t
// of red.Threads accumulates terms t, t+T, t+2T, ... serially, then the
// partials are combined pairwise in a balanced tree (depth ceil(log2 T)).
// It lets tests and properties reproduce a kernel's summation order on the
// CPU. It panics if red.Tree differs from ceil(log2(red.Threads)) (only
// TreeReduction and SerialReduction shapes are simulated).
func Sum32(terms []float32, red Reduction) float32 {
	t := red.Threads
	if t <= 1 {
		var s float32
		for _, v := range terms {
			s += v
		}
		return s
	}
	if red.Tree != ceilLog2(t) {
		panic(fmt.Sprintf("oracle: Sum32 simulates tree shapes only, got %v", red))
	}
	part := make([]float32, 1<<ceilLog2(t))
	for i, v := range terms {
		part[i%t] += v
	}
	for w := len(part) / 2; w >= 1; w /= 2 {
		for i := 0; i < w; i++ {
			part[i] += part[i+w]
		}
	}
	return part[0]
}
