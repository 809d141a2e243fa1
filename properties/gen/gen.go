package gen

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

// EdgeHidden is the fixed grid of row lengths every shape generator starts
// from: powers of two and their neighbours, where reductions and vector
// loads change behaviour; 1020, 255 float4 groups: one short of a full
// block of 256 threads on a vector path, whose last thread idles; 2048
// and 2052, two float4 groups per thread of such a block and one group
// past, where every thread's second group is the last one loaded and then
// one thread's third is (a bound of the unrolled loads off by one); and
// 8196, one float4 group past the kernels' 8192-float shared-memory
// capacity, where a vector path that reads from global memory has a tail
// of one group (the lengths past 8192 are otherwise 16384, whole blocks,
// or random).
var EdgeHidden = []int{1, 2, 31, 32, 33, 255, 256, 257, 1020, 1023, 1024, 2048, 2052, 4097, 8192, 8196, 16384}

// EdgeRows are the row counts every row generator may pick outright, where
// the kernels' launch shapes change: one row, a warp's worth, and 2048 and
// 2049, where the chunked backwards' chunk grows from ChunkMinRows = 4 rows
// to 5 (kernels.ChunkRows: 512 blocks of 4 rows hold 2048). Counts above a
// shape's cap are left out.
var EdgeRows = []int{1, 2, 7, 64, 1000, 2048, 2049, 4096}

// Limits bounds the shapes a generator may draw; the emulator uses smaller
// limits than a GPU so that CI stays within its time.
type Limits struct {
	MaxRows int // rows drawn from 1..MaxRows
	// MinRows, above 1, raises the least row count Rows draws to it, where
	// the elements allow as many (else to as many as they allow).
	MinRows     int
	RandomRows  int // rows above it only from EdgeRows, once in WideOdds draws (0: MaxRows)
	MaxHidden   int // hidden drawn from the edge grid up to MaxHidden, or at random beyond it
	MaxElements int // rows·hidden cap (rows shrink to fit)
	// RegimeMaxRows, when set, bounds the rows of the regimes' shapes in
	// place of MaxRows: a MaxRows that narrows the everyday shapes alone.
	RegimeMaxRows int
	// HiddenMultiple, above 1, makes every row length Hidden draws a
	// multiple of it: for an implementation that handles only such rows.
	HiddenMultiple int
	// MaxPosition, above 0, bounds the token positions drawn
	// (Limits.Position) to 0..MaxPosition−1: for an implementation whose
	// tables hold that many positions (a RoPE cos/sin cache).
	MaxPosition int
	// storage is what WithStorage set (nil: all float32), behind a pointer
	// so that Limits stays comparable. Values, Gamma and Round round to it.
	storage *map[string]oracle.Storage
	// regimes is what WithRegimes set (nil: none), behind a pointer for the
	// same reason. Shape draws them.
	regimes *[]Regime
	// domain is what WithDomain set (nil: every shape), behind a pointer
	// for the same reason. Conform draws within it.
	domain *Domain
	// steering is what WithSteering set (nil: rapid's draws alone).
	steering *Steering
}

// Domain is the set of shapes an implementation handles where it is
// narrower than any Limits can say (a binding's constraints: "rows == 7",
// "heads == 8 && head_dim == 64"). The generators draw within it by
// construction (Conform): a shape drawn as usual that it does not accept is
// replaced by one of its Feasible shapes, so that no draw is wasted.
type Domain struct {
	// Accepts reports whether the implementation handles s (Heads and
	// HeadDim are 0 for an operation that is not per head).
	Accepts func(s op.Shape) bool
	// Feasible are shapes Accepts accepts, smallest first (a draw among
	// them shrinks towards the first).
	Feasible []op.Shape
}

// WithDomain returns lim with the shapes Conform draws within (nil: all).
func (lim Limits) WithDomain(d *Domain) Limits {
	lim.domain = d
	return lim
}

// Accepts reports whether lim's domain (WithDomain) accepts s; true
// without one.
func (lim Limits) Accepts(s op.Shape) bool {
	return lim.domain == nil || lim.domain.Accepts == nil || lim.domain.Accepts(s)
}

// Conform returns s when lim's domain accepts it (or there is none), and
// otherwise one of the domain's feasible shapes that lim's bounds allow
// (rows, row length, elements) and keep (when given) accepts, drawn as
// "shape". When none is left it returns s, which the implementation then
// refuses: an invalid draw, and too many of them end the contract run with
// rapid's "only generated N valid tests".
func (lim Limits) Conform(t *rapid.T, s op.Shape, keep func(op.Shape) bool) op.Shape {
	if lim.Accepts(s) {
		return s
	}
	rowCap := max(lim.MaxRows, lim.RegimeMaxRows)
	var fit []op.Shape
	for _, f := range lim.domain.Feasible {
		switch {
		case (f.Heads > 0) != (s.Heads > 0), rowCap > 0 && f.Rows > rowCap, lim.MaxHidden > 0 && f.Hidden > lim.MaxHidden,
			lim.MaxElements > 0 && f.Rows*f.Hidden > lim.MaxElements,
			lim.HiddenMultiple > 1 && f.Hidden%lim.HiddenMultiple != 0, keep != nil && !keep(f):
			continue
		}
		fit = append(fit, f)
	}
	if len(fit) == 0 {
		return s
	}
	return rapid.SampledFrom(fit).Draw(t, "shape")
}

// Regime is a region of shapes that a prediction's claim depends on and
// that the everyday Limits reach rarely or never: the row counts where a
// chunked backward's chunk grows past its minimum, rows of some width that
// share a lock group. A prediction declares its regimes
// (properties.Prediction.Regimes) and Shape draws one of them in one check
// of RegimeOdds, by construction: rows and hidden are drawn inside the
// regime, never drawn at large and rejected. A regime has its own cap on
// the elements, above the Limits' everyday one (large shapes are what it
// is for, and their share bounds their cost); the Limits' rows (or
// RegimeMaxRows), row length, HiddenMultiple and every Cap still bound it,
// and a regime they leave empty is not drawn. A zero bound is open.
type Regime struct {
	Name                 string // what the regime is, drawn as "regime"
	MinRows, MaxRows     int
	MinHidden, MaxHidden int
	MaxElements          int // cap on rows·hidden inside the regime (0: the Limits' MaxElements)
	// Odds, from 2 up, draws the regime in about one check of Odds by
	// itself, for a regime cheap enough to draw often whose code paths a
	// check must reach reliably; 0: the regime shares one check in
	// RegimeOdds with the other regimes without Odds.
	Odds     int
	multiple int // the Limits' HiddenMultiple, set by Limits.bound
}

// RegimeOdds: where a prediction declares regimes, one check in RegimeOdds
// draws its shape from one of them (chosen uniformly) and the other checks
// draw as if there were none. At rapid's default 100 checks that is about
// three checks of a contract run, so a regime of 2²⁰ elements costs it a
// few launches of that size.
const RegimeOdds = 32

// WithRegimes returns lim with the regimes Shape draws from (none: the
// everyday shapes only).
func (lim Limits) WithRegimes(rs ...Regime) Limits {
	lim.regimes = nil
	if len(rs) > 0 {
		c := slices.Clone(rs)
		lim.regimes = &c
	}
	return lim
}

// Regimes returns the regimes of lim that its bounds leave non-empty, as
// Shape draws them: with their bounds closed under lim.
func (lim Limits) Regimes() []Regime {
	if lim.regimes == nil {
		return nil
	}
	var out []Regime
	for _, r := range *lim.regimes {
		if b, ok := lim.bound(r); ok {
			out = append(out, b)
		}
	}
	return out
}

// bound returns r with every bound closed under lim: rows in
// [MinRows, MaxRows], hidden in [MinHidden, MaxHidden] multiples of
// lim.HiddenMultiple, and MaxHidden·MinRows ≤ MaxElements where there is a
// cap, so that every hidden in range has a row count in range; false when
// no shape is left.
func (lim Limits) bound(r Regime) (Regime, bool) {
	r.multiple = max(1, lim.HiddenMultiple)
	r.MinRows, r.MinHidden = max(1, r.MinRows), max(1, r.MinHidden)
	if r.MaxElements <= 0 {
		r.MaxElements = lim.MaxElements
	}
	rowCap := lim.MaxRows
	if lim.RegimeMaxRows > 0 {
		rowCap = lim.RegimeMaxRows
	}
	r.MaxRows = tighter(r.MaxRows, rowCap)
	r.MaxHidden = tighter(r.MaxHidden, lim.MaxHidden)
	if r.MaxElements > 0 {
		h := r.MaxElements / r.MinRows
		if h == 0 {
			return r, false
		}
		r.MaxRows = tighter(r.MaxRows, r.MaxElements)
		r.MaxHidden = tighter(r.MaxHidden, h)
	}
	m := r.multiple
	r.MinHidden = (r.MinHidden + m - 1) / m * m
	r.MaxHidden = r.MaxHidden / m * m
	ok := r.MaxRows > 0 && r.MaxHidden > 0 && r.MinRows <= r.MaxRows && r.MinHidden <= r.MaxHidden
	return r, ok
}

// tighter returns the smaller of two bounds, where 0 (or less) is none.
func tighter(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Shape draws a row count and a row length under lim. With regimes (see
// Regime) one draw in RegimeOdds is a shape of one of them; otherwise, and
// always without regimes, hidden comes from Hidden and rows from Rows,
// drawn as "hidden" and "rows" exactly as a caller drawing the two in turn.
func Shape(t *rapid.T, lim Limits) (rows, hidden int) {
	if rs := lim.Regimes(); len(rs) > 0 {
		// The last of RegimeOdds values picks a regime, so that a failing
		// case shrinks towards the everyday shapes where they fail too.
		if i := pickRegime(t, rs, rapid.IntRange(0, RegimeOdds-1).Draw(t, "regime.odds")); i >= 0 {
			rapid.Just(rs[i].Name).Draw(t, "regime")
			rows, hidden = rs[i].draw(t)
			if lim.domain != nil {
				s := lim.Conform(t, op.Shape{Rows: rows, Hidden: hidden}, nil)
				rows, hidden = s.Rows, s.Hidden
			}
			return rows, hidden
		}
	}
	hidden = lim.DrawHidden(t, "hidden")
	rows = lim.DrawRows(t, "rows", hidden)
	if lim.domain != nil {
		s := lim.Conform(t, op.Shape{Rows: rows, Hidden: hidden}, nil)
		rows, hidden = s.Rows, s.Hidden
	}
	return rows, hidden
}

// pickRegime returns the index of the regime of rs that the value u of
// "regime.odds" (0..RegimeOdds−1) draws, or −1 for the everyday shapes.
// The values are handed out from the top: the last one to the regimes
// without Odds (one of them drawn uniformly as "regime.index"), then
// RegimeOdds/Odds values to each regime with Odds in turn, never more than
// half of them in all, so that most checks stay everyday ones.
func pickRegime(t *rapid.T, rs []Regime, u int) int {
	next := RegimeOdds - 1
	var shared []int
	for i, r := range rs {
		if r.Odds < 2 {
			shared = append(shared, i)
		}
	}
	if len(shared) > 0 {
		if u == next {
			return shared[rapid.IntRange(0, len(shared)-1).Draw(t, "regime.index")]
		}
		next--
	}
	for i, r := range rs {
		if r.Odds < 2 {
			continue
		}
		n := min(max(1, RegimeOdds/r.Odds), next-RegimeOdds/2+1)
		if n <= 0 {
			break
		}
		if u <= next && u > next-n {
			return i
		}
		next -= n
	}
	return -1
}

// draw draws a shape of r, whose bounds are closed (Limits.bound): hidden
// from r's bounds and the edge grid between them, or uniform in range;
// then rows likewise, up to what the elements allow at that hidden.
func (r Regime) draw(t *rapid.T) (rows, hidden int) {
	hidden = edgeOrUniform(EdgeHidden, r.MinHidden, r.MaxHidden, r.multiple).Draw(t, "hidden")
	hi := r.MaxRows
	if r.MaxElements > 0 {
		hi = min(hi, r.MaxElements/hidden)
	}
	return edgeOrUniform(EdgeRows, r.MinRows, hi, 1).Draw(t, "rows"), hidden
}

// edgeOrUniform draws a multiple of m in [lo, hi] (both multiples of m):
// half of the time one of lo, hi and the values of edges between them,
// otherwise one uniform in range.
func edgeOrUniform(edges []int, lo, hi, m int) *rapid.Generator[int] {
	grid := []int{lo}
	for _, e := range edges {
		if e > lo && e < hi && e%m == 0 {
			grid = append(grid, e)
		}
	}
	if hi > lo {
		grid = append(grid, hi)
	}
	uniform := rapid.Map(rapid.IntRange(lo/m, hi/m), func(k int) int { return k * m })
	return rapid.OneOf(rapid.SampledFrom(grid), uniform)
}

// WithStorage returns lim with the format each role's tensors are stored
// in (properties.Config.Storage; absent roles and nil: float32), to which
// Values, ValuesInto, Gamma and Round round what they draw.
func (lim Limits) WithStorage(s map[string]oracle.Storage) Limits {
	lim.storage = nil
	if s != nil {
		lim.storage = &s
	}
	return lim
}

// Round rounds v, a tensor of the named role (an op table name: x, gamma,
// dy, residual, …), in place to the format WithStorage gave the role:
// the values an implementation that stores it so holds, and so the ones its
// oracle must see. Float32 storage leaves v as it is.
func (lim Limits) Round(role string, v []float32) {
	if lim.storage == nil {
		return
	}
	s := (*lim.storage)[role]
	if s == oracle.StorageFloat32 {
		return
	}
	for i, x := range v {
		v[i] = s.Round(x)
	}
}

// Values is Values with the data rounded to the storage of the role the
// label names (the label up to its first '.': "x.head" is an x).
func (lim Limits) Values(t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	return lim.ValuesInto(make([]float32, rows*cols), t, label, rows, cols, dists...)
}

// ValuesInto is lim.Values with the data written to x (rows·cols
// elements, every one overwritten), for a caller that recycles buffers.
func (lim Limits) ValuesInto(x []float32, t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	var v Tensor
	if lim.steering == nil {
		v = valuesInto(x, t, label, rows, cols, dists...)
	} else {
		v = lim.steeredValues(x, t, label, rows, cols, dists...)
	}
	role, _, _ := strings.Cut(label, ".")
	lim.Round(role, v.Data)
	return v
}

// Gamma is Gamma rounded to the storage of the role label.
func (lim Limits) Gamma(t *rapid.T, label string, n int) []float32 {
	var g []float32
	if lim.steering == nil {
		g = Gamma(t, label, n)
	} else {
		g = lim.steeredGamma(t, label, n)
	}
	lim.Round(label, g)
	return g
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

// EmuLimits keep one check small enough for the CPU emulator: a quarter of
// the GPU's elements a tensor, and the GPU's rows, so that every code path a
// row count selects (a chunked backward's chunk growing past
// kernels.ChunkMinRows at 2049 rows) is drawn on the CPU as on a GPU. The
// emulator's cost is the threads it runs, a block of 256 for every row of
// most kernels, not the elements: rows beyond 64 come only from EdgeRows,
// in one draw of WideOdds where the elements allow them.
var EmuLimits = Limits{MaxRows: 4096, RandomRows: 64, MaxHidden: 16384, MaxElements: 1 << 14}

// WideOdds: a row count beyond Limits.RandomRows is drawn once in WideOdds
// draws where one fits.
const WideOdds = 32

// Cap returns lim with at most n elements a tensor, in its regimes too: for
// properties whose claim is not about size (θ, the RoPE basis) and whose
// checks cost several oracle evaluations, and for a run's own cap.
func (lim Limits) Cap(n int) Limits {
	if lim.MaxElements == 0 || lim.MaxElements > n {
		lim.MaxElements = n
	}
	if lim.regimes != nil {
		rs := slices.Clone(*lim.regimes)
		for i := range rs {
			if rs[i].MaxElements == 0 || rs[i].MaxElements > n {
				rs[i].MaxElements = n
			}
		}
		lim.regimes = &rs
	}
	return lim
}

// Hidden draws a row length: from the edge grid up to lim.MaxHidden most of
// the time, otherwise uniform in [1, lim.MaxHidden].
func Hidden(lim Limits) *rapid.Generator[int] {
	m := max(1, lim.HiddenMultiple)
	var grid []int
	for _, h := range EdgeHidden {
		if h <= lim.MaxHidden && h%m == 0 {
			grid = append(grid, h)
		}
	}
	random := rapid.IntRange(1, max(1, lim.MaxHidden/m))
	if m > 1 {
		random = rapid.Map(random, func(k int) int { return k * m })
	}
	if len(grid) == 0 {
		return random
	}
	return rapid.OneOf(rapid.SampledFrom(grid), rapid.SampledFrom(grid), random)
}

// Rows draws a row count for rows of length hidden under lim: an edge row
// count or one uniform in MinRows..RandomRows (1 when MinRows is unset) and, once in WideOdds draws where one
// fits the elements, an edge row count beyond RandomRows.
func Rows(lim Limits, hidden int) *rapid.Generator[int] {
	lo, random, _, in, wide := rowsRange(lim, hidden)
	common := rapid.IntRange(lo, random)
	if len(in) > 0 {
		common = rapid.OneOf(rapid.SampledFrom(in), common)
	}
	if len(wide) == 0 {
		return common
	}
	return rapid.Custom(func(t *rapid.T) int {
		// The last of WideOdds values picks a wide count, so that rows
		// shrink towards the common ones.
		if rapid.IntRange(0, WideOdds-1).Draw(t, "wide") == WideOdds-1 {
			return rapid.SampledFrom(wide).Draw(t, "rows")
		}
		return common.Draw(t, "rows")
	})
}

// rowsRange returns what Rows draws from for rows of length hidden: the
// common counts lo..random and the edge counts among them (in), and the
// wide edge counts in random+1..hi.
func rowsRange(lim Limits, hidden int) (lo, random, hi int, in, wide []int) {
	hi = lim.MaxRows
	if lim.MaxElements > 0 && hidden > 0 && hi*hidden > lim.MaxElements {
		hi = max(1, lim.MaxElements/hidden)
	}
	lo = max(1, min(lim.MinRows, hi))
	random = hi
	if lim.RandomRows > 0 {
		random = max(lo, min(hi, lim.RandomRows))
	}
	for _, r := range EdgeRows {
		switch {
		case r < lo:
		case r <= random:
			in = append(in, r)
		case r <= hi:
			wide = append(wide, r)
		}
	}
	return lo, random, hi, in, wide
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

// Position is Position within lim.MaxPosition: a drawn position p becomes
// p mod MaxPosition, so that every draw is valid (the edge positions below
// the limit are kept as they are).
func (lim Limits) Position() *rapid.Generator[int] {
	if lim.MaxPosition <= 0 {
		return Position()
	}
	m := lim.MaxPosition
	return rapid.Map(Position(), func(p int) int { return p % m })
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

// Values draws a rows×cols tensor from one of dists (FiniteDists when none
// is given). The elements come from a generator seeded by a drawn seed
// (tensorRand): rapid shrinks the distribution, scale and seed, and the
// counterexample stays a few numbers long.
func Values(t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	return valuesInto(make([]float32, rows*cols), t, label, rows, cols, dists...)
}

// valuesInto is Values with the data written to x (len rows·cols).
func valuesInto(x []float32, t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	if len(dists) == 0 {
		dists = FiniteDists
	}
	d := rapid.SampledFrom(dists).Draw(t, label+".dist")
	s := rapid.Float64Range(-6, 3).Draw(t, label+".log10scale")
	seed := rapid.Uint64().Draw(t, label+".seed")
	FillTensor(x, d, s, seed, rows, cols)
	return Tensor{Dist: d, Scale: s, Seed: seed, Data: x}
}

// MakeTensor builds the tensor Values would draw for (d, s, seed).
func MakeTensor(d Dist, s float64, seed uint64, rows, cols int) Tensor {
	x := make([]float32, rows*cols)
	FillTensor(x, d, s, seed, rows, cols)
	return Tensor{Dist: d, Scale: s, Seed: seed, Data: x}
}

// FillTensor writes MakeTensor's data into x (len rows·cols), every
// element: the tensor of (d, s, seed) in a buffer the caller recycles.
func FillTensor(x []float32, d Dist, s float64, seed uint64, rows, cols int) {
	r := tensorRand{seed}
	scale := math.Pow(10, s)
	for i := 0; i < rows; i++ {
		row := x[i*cols : (i+1)*cols]
		switch d {
		case Normal:
			r.fillNormal(row, scale)
		case MixedScale:
			r.fillNormal(row, math.Pow(10, -6+9*r.float64()))
		case Constant:
			c := float32(r.norm() * scale)
			for j := range row {
				row[j] = c
			}
		case Zero:
			clear(row)
		case Subnormal:
			r.fillNormal(row, 0x1p-130)
		case Huge:
			r.fillNormal(row, 0x1p120)
		case Special:
			for j := range row {
				row[j] = float32(r.norm() * scale)
				switch r.Uint64() & 15 { // math/rand/v2's IntN(16)
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

// tensorRand is the generator behind tensors and γ: wyrand (Wang Yi's
// wyhash PRNG: a Weyl sequence s += 0xa0761d6478bd642f, output
// hi ⊕ lo of the 128-bit product s·(s ⊕ 0xe7037ed1a0b428db); it passes
// BigCrush and PractRand) seeded with the drawn seed, and the math/rand/v2
// Rand methods the generators use (Float64, NormFloat64 — Marsaglia and
// Tsang's ziggurat over Go's tables —, IntN of a power of two),
// re-implemented so that the common path of the normal sampler runs with
// the state in a register and a branch-free |j|.
//
// It is a rand.Source, and its methods yield exactly what
// rand.New(&tensorRand{seed}) yields (TestTensorStreamMatchesMathRand,
// TestNormalSamplerMatchesMathRand): the distributions are math/rand/v2's,
// only the uniform source differs. It replaced math/rand/v2's PCG (a
// 128-bit LCG with the DXSM output, five multiplications a draw), which made
// drawing tensors the largest single cost of a value check on a GPU host;
// wyrand takes one 64×64→128 multiplication and its state chain is one
// addition, so a normal tensor is drawn in about half the time. A value
// is a function of (distribution, scale, seed) and of this code only, so a
// failure reproduces from its rapid seed on any Go release.
type tensorRand struct{ s uint64 }

const (
	wyInc = 0xa0761d6478bd642f
	wyXor = 0xe7037ed1a0b428db
)

// wyStep advances the state and returns the next output.
func wyStep(s uint64) (ns, out uint64) {
	s += wyInc
	hi, lo := bits.Mul64(s, s^wyXor)
	return s, hi ^ lo
}

// Uint64 is the next 64 random bits (rand.Source).
func (r *tensorRand) Uint64() uint64 {
	var u uint64
	r.s, u = wyStep(r.s)
	return u
}

// float64 is Rand.Float64.
func (r *tensorRand) float64() float64 { return float64(r.Uint64()<<11>>11) / (1 << 53) }

// norm is Rand.NormFloat64 (Marsaglia and Tsang's ziggurat).
func (r *tensorRand) norm() float64 {
	u := r.Uint64()
	j := int32(u)
	i := u >> 32 & 0x7f
	x := float64(j) * float64(zigW[i])
	if m := j >> 31; uint32((j^m)-m) < zigK[i] {
		return x
	}
	return r.normSlow(j, i, x)
}

// fillNormal writes float32(norm()·scale) to every element of dst.
func (r *tensorRand) fillNormal(dst []float32, scale float64) {
	s := r.s
	for k := range dst {
		var u uint64
		s, u = wyStep(s)
		j := int32(u)
		i := u >> 32 & 0x7f
		x := float64(j) * float64(zigW[i])
		if m := j >> 31; uint32((j^m)-m) >= zigK[i] { // rare: the strip's edge or the tail
			r.s = s
			x = r.normSlow(j, i, x)
			s = r.s
		}
		dst[k] = float32(x * scale)
	}
	r.s = s
}

// normSlow finishes a NormFloat64 draw (j, i, x) that fell outside its
// strip's rectangle: the tail for strip 0, else the wedge test, drawing
// again on rejection.
//
//go:noinline
func (r *tensorRand) normSlow(j int32, i uint64, x float64) float64 {
	const rn = 3.442619855899
	for {
		if i == 0 {
			for {
				x = -math.Log(r.float64()) * (1.0 / rn)
				y := -math.Log(r.float64())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return rn + x
			}
			return -rn - x
		}
		if wedgeAccepts(i, x, float32(r.float64())) {
			return x
		}
		u := r.Uint64()
		j = int32(u)
		i = u >> 32 & 0x7f
		x = float64(j) * float64(zigW[i])
		if m := j >> 31; uint32((j^m)-m) < zigK[i] {
			return x
		}
	}
}

// wedgeAccepts is the ziggurat's wedge test for strip i ≥ 1 and uniform
// u: fn[i] + u·(fn[i−1] − fn[i]) < float32(math.Exp(−x²/2)), the decision
// math/rand/v2 makes, mostly without the exponential: wedgeLo and wedgeHi
// bracket float32(math.Exp(−x²/2)) over the cell of |x| (width 2^−wedgeBits),
// and only a left side between them needs math.Exp.
func wedgeAccepts(i uint64, x float64, u float32) bool {
	l := zigF[i] + u*(zigF[i-1]-zigF[i])
	if k := int(math.Abs(x) * (1 << wedgeBits)); k < len(wedgeLo) {
		switch {
		case l < wedgeLo[k]:
			return true
		case l >= wedgeHi[k]:
			return false
		}
	}
	return l < float32(math.Exp(-.5*x*x))
}

// wedgeLo[k] ≤ float32(math.Exp(−.5·x·x)) ≤ wedgeHi[k] for every float64 x
// with k·h ≤ |x| < (k+1)·h, h = 2^−wedgeBits, over the wedges' range
// |x| < 2^31·zigW[i] ≤ 3.45 (strips i ≥ 1). e^(−t²/2) decreases in t ≥ 0,
// so e^(−b²/2) ≤ e^(−x²/2) ≤ e^(−a²/2) for a = k·h, b = (k+1)·h, both
// exact, as are their squares and halves (k < 2^12). The computed value
// strays from e^(−x²/2) by the rounding of −.5·x·x (relative 2^−53 of
// |z| ≤ 6, so a factor within 1 ± 2^−49) and math.Exp's error (under an
// ulp), as does each bound's math.Exp: the margin 2^−40 covers them all.
// Rounding to float32 is monotone, so the float32 of each bound brackets
// the float32 of the value, and a left side l < wedgeLo[k] is below it,
// one ≥ wedgeHi[k] is not (TestWedgeBrackets). With h = 1/1024 the bounds
// leave math.Exp to a few percent of the wedge tests.
var wedgeLo, wedgeHi = wedgeTables()

const wedgeBits = 10

func wedgeTables() (lo, hi []float32) {
	top := 0.0
	for _, w := range zigW[1:] {
		top = max(top, float64(w)*(1<<31))
	}
	n := int(top*(1<<wedgeBits)) + 1
	lo, hi = make([]float32, n), make([]float32, n)
	for k := range n {
		a, b := float64(k)/(1<<wedgeBits), float64(k+1)/(1<<wedgeBits)
		lo[k] = float32(math.Exp(-.5*b*b) * (1 - 0x1p-40))
		hi[k] = float32(math.Exp(-.5*a*a) * (1 + 0x1p-40))
	}
	return lo, hi
}

// gammaStream separates γ's stream from the tensors' (any constant that is
// not a small multiple of wyInc away from 0 will do).
const gammaStream = 0x9e3779b97f4a7c15

// Gamma draws a weight vector of length n: ones, or normal around 1, or a
// general normal tensor, from tensorRand seeded with the drawn seed
// xor gammaStream (so that γ and a tensor drawn with the same seed, as
// shrinking makes them, are not the same numbers).
func Gamma(t *rapid.T, label string, n int) []float32 {
	kind := rapid.SampledFrom(gammaKinds).Draw(t, label+".kind")
	seed := rapid.Uint64().Draw(t, label+".seed")
	return makeGamma(kind, seed, n)
}

var gammaKinds = []string{"ones", "around-one", "normal"}

// makeGamma is the γ Gamma draws as (kind, seed).
func makeGamma(kind string, seed uint64, n int) []float32 {
	r := tensorRand{seed ^ gammaStream}
	g := make([]float32, n)
	switch kind {
	case "ones":
		for i := range g {
			g[i] = 1
		}
	case "around-one":
		for i := range g {
			g[i] = float32(1 + 0.1*r.norm())
		}
	default:
		r.fillNormal(g, 1)
	}
	return g
}

// F64 widens a float32 slice exactly, for the float64 oracle.
func F64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// The ziggurat's tables, from Go's math/rand/v2 (normal.go; Copyright 2009
// The Go Authors, BSD-style license): kn, wn and fn.
var zigK = [128]uint32{
	0x76ad2212, 0x0, 0x600f1b53, 0x6ce447a6, 0x725b46a2,
	0x7560051d, 0x774921eb, 0x789a25bd, 0x799045c3, 0x7a4bce5d,
	0x7adf629f, 0x7b5682a6, 0x7bb8a8c6, 0x7c0ae722, 0x7c50cce7,
	0x7c8cec5b, 0x7cc12cd6, 0x7ceefed2, 0x7d177e0b, 0x7d3b8883,
	0x7d5bce6c, 0x7d78dd64, 0x7d932886, 0x7dab0e57, 0x7dc0dd30,
	0x7dd4d688, 0x7de73185, 0x7df81cea, 0x7e07c0a3, 0x7e163efa,
	0x7e23b587, 0x7e303dfd, 0x7e3beec2, 0x7e46db77, 0x7e51155d,
	0x7e5aabb3, 0x7e63abf7, 0x7e6c222c, 0x7e741906, 0x7e7b9a18,
	0x7e82adfa, 0x7e895c63, 0x7e8fac4b, 0x7e95a3fb, 0x7e9b4924,
	0x7ea0a0ef, 0x7ea5b00d, 0x7eaa7ac3, 0x7eaf04f3, 0x7eb3522a,
	0x7eb765a5, 0x7ebb4259, 0x7ebeeafd, 0x7ec2620a, 0x7ec5a9c4,
	0x7ec8c441, 0x7ecbb365, 0x7ece78ed, 0x7ed11671, 0x7ed38d62,
	0x7ed5df12, 0x7ed80cb4, 0x7eda175c, 0x7edc0005, 0x7eddc78e,
	0x7edf6ebf, 0x7ee0f647, 0x7ee25ebe, 0x7ee3a8a9, 0x7ee4d473,
	0x7ee5e276, 0x7ee6d2f5, 0x7ee7a620, 0x7ee85c10, 0x7ee8f4cd,
	0x7ee97047, 0x7ee9ce59, 0x7eea0eca, 0x7eea3147, 0x7eea3568,
	0x7eea1aab, 0x7ee9e071, 0x7ee98602, 0x7ee90a88, 0x7ee86d08,
	0x7ee7ac6a, 0x7ee6c769, 0x7ee5bc9c, 0x7ee48a67, 0x7ee32efc,
	0x7ee1a857, 0x7edff42f, 0x7ede0ffa, 0x7edbf8d9, 0x7ed9ab94,
	0x7ed7248d, 0x7ed45fae, 0x7ed1585c, 0x7ece095f, 0x7eca6ccb,
	0x7ec67be2, 0x7ec22eee, 0x7ebd7d1a, 0x7eb85c35, 0x7eb2c075,
	0x7eac9c20, 0x7ea5df27, 0x7e9e769f, 0x7e964c16, 0x7e8d44ba,
	0x7e834033, 0x7e781728, 0x7e6b9933, 0x7e5d8a1a, 0x7e4d9ded,
	0x7e3b737a, 0x7e268c2f, 0x7e0e3ff5, 0x7df1aa5d, 0x7dcf8c72,
	0x7da61a1e, 0x7d72a0fb, 0x7d30e097, 0x7cd9b4ab, 0x7c600f1a,
	0x7ba90bdc, 0x7a722176, 0x77d664e5,
}
var zigW = [128]float32{
	1.7290405e-09, 1.2680929e-10, 1.6897518e-10, 1.9862688e-10,
	2.2232431e-10, 2.4244937e-10, 2.601613e-10, 2.7611988e-10,
	2.9073963e-10, 3.042997e-10, 3.1699796e-10, 3.289802e-10,
	3.4035738e-10, 3.5121603e-10, 3.616251e-10, 3.7164058e-10,
	3.8130857e-10, 3.9066758e-10, 3.9975012e-10, 4.08584e-10,
	4.1719309e-10, 4.2559822e-10, 4.338176e-10, 4.418672e-10,
	4.497613e-10, 4.5751258e-10, 4.651324e-10, 4.7263105e-10,
	4.8001775e-10, 4.87301e-10, 4.944885e-10, 5.015873e-10,
	5.0860405e-10, 5.155446e-10, 5.2241467e-10, 5.2921934e-10,
	5.359635e-10, 5.426517e-10, 5.4928817e-10, 5.5587696e-10,
	5.624219e-10, 5.6892646e-10, 5.753941e-10, 5.818282e-10,
	5.882317e-10, 5.946077e-10, 6.00959e-10, 6.072884e-10,
	6.135985e-10, 6.19892e-10, 6.2617134e-10, 6.3243905e-10,
	6.386974e-10, 6.449488e-10, 6.511956e-10, 6.5744005e-10,
	6.6368433e-10, 6.699307e-10, 6.7618144e-10, 6.824387e-10,
	6.8870465e-10, 6.949815e-10, 7.012715e-10, 7.075768e-10,
	7.1389966e-10, 7.202424e-10, 7.266073e-10, 7.329966e-10,
	7.394128e-10, 7.4585826e-10, 7.5233547e-10, 7.58847e-10,
	7.653954e-10, 7.719835e-10, 7.7861395e-10, 7.852897e-10,
	7.920138e-10, 7.987892e-10, 8.0561924e-10, 8.125073e-10,
	8.194569e-10, 8.2647167e-10, 8.3355556e-10, 8.407127e-10,
	8.479473e-10, 8.55264e-10, 8.6266755e-10, 8.7016316e-10,
	8.777562e-10, 8.8545243e-10, 8.932582e-10, 9.0117996e-10,
	9.09225e-10, 9.174008e-10, 9.2571584e-10, 9.341788e-10,
	9.427997e-10, 9.515889e-10, 9.605579e-10, 9.697193e-10,
	9.790869e-10, 9.88676e-10, 9.985036e-10, 1.0085882e-09,
	1.0189509e-09, 1.0296151e-09, 1.0406069e-09, 1.0519566e-09,
	1.063698e-09, 1.0758702e-09, 1.0885183e-09, 1.1016947e-09,
	1.1154611e-09, 1.1298902e-09, 1.1450696e-09, 1.1611052e-09,
	1.1781276e-09, 1.1962995e-09, 1.2158287e-09, 1.2369856e-09,
	1.2601323e-09, 1.2857697e-09, 1.3146202e-09, 1.347784e-09,
	1.3870636e-09, 1.4357403e-09, 1.5008659e-09, 1.6030948e-09,
}
var zigF = [128]float32{
	1, 0.9635997, 0.9362827, 0.9130436, 0.89228165, 0.87324303,
	0.8555006, 0.8387836, 0.8229072, 0.8077383, 0.793177,
	0.7791461, 0.7655842, 0.7524416, 0.73967725, 0.7272569,
	0.7151515, 0.7033361, 0.69178915, 0.68049186, 0.6694277,
	0.658582, 0.6479418, 0.63749546, 0.6272325, 0.6171434,
	0.6072195, 0.5974532, 0.58783704, 0.5783647, 0.56903,
	0.5598274, 0.5507518, 0.54179835, 0.5329627, 0.52424055,
	0.5156282, 0.50712204, 0.49871865, 0.49041483, 0.48220766,
	0.4740943, 0.46607214, 0.4581387, 0.45029163, 0.44252872,
	0.43484783, 0.427247, 0.41972435, 0.41227803, 0.40490642,
	0.39760786, 0.3903808, 0.3832238, 0.37613547, 0.36911446,
	0.3621595, 0.35526937, 0.34844297, 0.34167916, 0.33497685,
	0.3283351, 0.3217529, 0.3152294, 0.30876362, 0.30235484,
	0.29600215, 0.28970486, 0.2834622, 0.2772735, 0.27113807,
	0.2650553, 0.25902456, 0.2530453, 0.24711695, 0.241239,
	0.23541094, 0.22963232, 0.2239027, 0.21822165, 0.21258877,
	0.20700371, 0.20146611, 0.19597565, 0.19053204, 0.18513499,
	0.17978427, 0.17447963, 0.1692209, 0.16400786, 0.15884037,
	0.15371831, 0.14864157, 0.14361008, 0.13862377, 0.13368265,
	0.12878671, 0.12393598, 0.119130544, 0.11437051, 0.10965602,
	0.104987256, 0.10036444, 0.095787846, 0.0912578, 0.08677467,
	0.0823389, 0.077950984, 0.073611505, 0.06932112, 0.06508058,
	0.06089077, 0.056752663, 0.0526674, 0.048636295, 0.044660863,
	0.040742867, 0.03688439, 0.033087887, 0.029356318,
	0.025693292, 0.022103304, 0.018592102, 0.015167298,
	0.011839478, 0.008624485, 0.005548995, 0.0026696292,
}
