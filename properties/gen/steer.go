package gen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"
)

// Steering lets a search choose the values of a check's steerable draws:
// the shape (Hidden, Rows, Shape), ε (Limits.Eps), θ (Limits.Theta),
// positions (Limits.Position) and tensors (Limits.Values, Limits.Gamma:
// distribution, scale, seed and single elements). A check registered with
// Begin records every steerable value it draws in its Steer (Made), and
// draws the values its Steer asks for (Want) in place of rapid's, each
// brought back into the generator's range first; the underlying rapid
// draws are made either way, so the rest of the check draws from the same
// bits. Limits without Steering (WithSteering(nil)) draw as rapid alone
// does. A Steering is safe for concurrent use by the checks of parallel
// rapid loops.
type Steering struct {
	mu   sync.Mutex
	live map[*rapid.T]*Steer
}

// NewSteering returns a Steering with no check registered.
func NewSteering() *Steering { return &Steering{live: map[*rapid.T]*Steer{}} }

// Begin registers st as the Steer of the check drawing from t, until End.
func (s *Steering) Begin(t *rapid.T, st *Steer) {
	s.mu.Lock()
	s.live[t] = st
	s.mu.Unlock()
}

// End forgets the check drawing from t.
func (s *Steering) End(t *rapid.T) {
	s.mu.Lock()
	delete(s.live, t)
	s.mu.Unlock()
}

func (s *Steering) of(t *rapid.T) *Steer {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[t]
}

// WithSteering returns lim with its steerable draws steered by s (nil:
// none, the generators rapid's alone).
func (lim Limits) WithSteering(s *Steering) Limits {
	lim.steering = s
	return lim
}

// Value is one steerable draw of a check: the Nth draw (from 0) of its
// Key in the check. Key is the generator's name ("hidden", "rows", "eps",
// "theta", "pos") or a tensor's label and a part ("x.dist", "x.log10scale",
// "x.seed", "gamma.kind", "gamma.seed", "x.off": the tensor's view offset
// (DrawOffsets), and "x.poke": one element of the
// Nth tensor labelled x multiplied by F, at U mod its length). Integers and
// scales are F, seeds and indices U.
type Value struct {
	Key string
	N   int
	F   float64
	U   uint64
}

func (v Value) String() string {
	switch {
	case strings.HasSuffix(v.Key, ".poke"):
		return fmt.Sprintf("%s[%d]: element %d ×%.3g", v.Key, v.N, v.U, v.F)
	case strings.HasSuffix(v.Key, ".seed"), strings.HasSuffix(v.Key, ".dist"), strings.HasSuffix(v.Key, ".kind"), strings.HasSuffix(v.Key, ".off"):
		return fmt.Sprintf("%s[%d]=%d", v.Key, v.N, v.U)
	}
	return fmt.Sprintf("%s[%d]=%.6g", v.Key, v.N, v.F)
}

// Steer is one check's steerable draws: Want, the values it is to draw
// (by key and occurrence; a draw Want does not name is rapid's), and
// Made, the values it drew, in order, pokes included.
type Steer struct {
	Want []Value
	Made []Value
	seen map[string]int
}

// next returns the occurrence of key about to be drawn and the value Want
// gives it.
func (st *Steer) next(key string) (n int, w Value, ok bool) {
	if st.seen == nil {
		st.seen = map[string]int{}
	}
	n = st.seen[key]
	st.seen[key] = n + 1
	for _, v := range st.Want {
		if v.Key == key && v.N == n {
			return n, v, true
		}
	}
	return n, Value{}, false
}

// steerF returns the float the check drawing from t draws for key: v
// (rapid's), or its Steer's wanted value brought into range by fix; and
// records it.
func (lim Limits) steerF(t *rapid.T, key string, v float64, fix func(float64) float64) float64 {
	st := lim.steering.of(t)
	if st == nil {
		return v
	}
	n, w, ok := st.next(key)
	if ok && !math.IsNaN(w.F) {
		v = fix(w.F)
	}
	st.Made = append(st.Made, Value{Key: key, N: n, F: v})
	return v
}

// steerU is steerF for a seed or an index below n (n 0: any).
func (lim Limits) steerU(t *rapid.T, key string, v uint64, n uint64) uint64 {
	st := lim.steering.of(t)
	if st == nil {
		return v
	}
	k, w, ok := st.next(key)
	if ok && (n == 0 || w.U < n) {
		v = w.U
	}
	st.Made = append(st.Made, Value{Key: key, N: k, U: v})
	return v
}

// poke applies the pokes the Steer of t wants on the Nth tensor labelled
// label, data x (of scale 10^scale, for an element that is zero), and
// records them.
func (lim Limits) poke(t *rapid.T, label string, x []float32, scale float64) {
	st := lim.steering.of(t)
	if st == nil || len(x) == 0 {
		return
	}
	key := label + ".poke"
	n := st.seen[label+".seed"] - 1 // this tensor's occurrence: its seed was just drawn
	for _, w := range st.Want {
		if w.Key != key || w.N != n || math.IsNaN(w.F) || math.IsInf(w.F, 0) {
			continue
		}
		i := w.U % uint64(len(x))
		v := float64(x[i]) * w.F
		if x[i] == 0 {
			v = math.Pow(10, scale) * w.F
		}
		if math.Abs(v) > math.MaxFloat32/4 {
			continue // would leave the tensor's finite range
		}
		x[i] = float32(v)
		st.Made = append(st.Made, w)
	}
}

// The draws a contract makes through these methods, rather than through
// the generators they wrap, are steerable: a generator's value is made in
// a rapid.T of its own, which the Steering cannot tell from another check's.

// DrawHidden draws a row length from Hidden(lim) as label, steered as
// "hidden" within 1..MaxHidden, a multiple of HiddenMultiple.
func (lim Limits) DrawHidden(t *rapid.T, label string) int {
	m := max(1, lim.HiddenMultiple)
	h := Hidden(lim).Draw(t, label)
	return int(lim.steerF(t, "hidden", float64(h), func(w float64) float64 {
		return float64(clampInt(int(w)/m, 1, max(1, lim.MaxHidden/m)) * m)
	}))
}

// DrawRows draws a row count from Rows(lim, hidden) as label, steered as
// "rows": within Rows' range, and above its common counts only at one of
// its wide ones.
func (lim Limits) DrawRows(t *rapid.T, label string, hidden int) int {
	r := Rows(lim, hidden).Draw(t, label)
	lo, random, hi, _, wide := rowsRange(lim, hidden)
	return int(lim.steerF(t, "rows", float64(r), func(w float64) float64 {
		r := int(w)
		if r > random && !slices.Contains(wide, r) {
			r = random
		}
		return float64(clampInt(r, lo, hi))
	}))
}

// DrawEps draws ε from Eps() as label, steered as "eps" within [1e-8, 1e-2].
func (lim Limits) DrawEps(t *rapid.T, label string) float32 {
	return lim.steer32(t, "eps", Eps().Draw(t, label), 1e-8, 1e-2)
}

// DrawTheta draws θ from Theta() as label, steered as "theta" within [1e2, 1e7].
func (lim Limits) DrawTheta(t *rapid.T, label string) float32 {
	return lim.steer32(t, "theta", Theta().Draw(t, label), 1e2, 1e7)
}

// DrawPosition draws a position from lim.Position() as label, steered as
// "pos" within its range.
func (lim Limits) DrawPosition(t *rapid.T, label string) int {
	hi := 131072
	if lim.MaxPosition > 0 {
		hi = lim.MaxPosition - 1
	}
	p := lim.Position().Draw(t, label)
	return int(lim.steerF(t, "pos", float64(p), func(w float64) float64 { return float64(clampInt(int(w), 0, hi)) }))
}

func (lim Limits) steer32(t *rapid.T, key string, v, lo, hi float32) float32 {
	return float32(lim.steerF(t, key, float64(v), func(w float64) float64 { return float64(min(hi, max(lo, float32(w)))) }))
}

// clampInt returns v within [lo, hi] (hi < lo: lo).
func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }

// Mutate returns a neighbour of the steerable draws made (a check's
// Steer.Made): one move (Neighbour) of a class drawn uniformly from those
// that have something to move (Moves). r supplies the choices.
func Mutate(made []Value, r func() uint64) []Value {
	cs := Moves(made)
	if len(cs) == 0 {
		return append([]Value(nil), made...)
	}
	out, _ := Neighbour(made, cs[r()%uint64(len(cs))], r)
	return out
}

// steeredValues is valuesInto with its distribution, scale and seed
// steered as label.dist, label.log10scale and label.seed, and the elements
// the Steer pokes changed.
func (lim Limits) steeredValues(x []float32, t *rapid.T, label string, rows, cols int, dists ...Dist) Tensor {
	if len(dists) == 0 {
		dists = FiniteDists
	}
	d := rapid.SampledFrom(dists).Draw(t, label+".dist")
	d = dists[lim.steerU(t, label+".dist", uint64(slices.Index(dists, d)), uint64(len(dists)))]
	s := rapid.Float64Range(-6, 3).Draw(t, label+".log10scale")
	s = lim.steerF(t, label+".log10scale", s, func(w float64) float64 { return min(3, max(-6, w)) })
	seed := lim.steerU(t, label+".seed", rapid.Uint64().Draw(t, label+".seed"), 0)
	FillTensor(x, d, s, seed, rows, cols)
	lim.poke(t, label, x[:rows*cols], s)
	return Tensor{Dist: d, Scale: s, Seed: seed, Data: x}
}

// steeredGamma is Gamma with its kind and seed steered as label.kind and
// label.seed, and the elements the Steer pokes changed.
func (lim Limits) steeredGamma(t *rapid.T, label string, n int) []float32 {
	kind := rapid.SampledFrom(gammaKinds).Draw(t, label+".kind")
	kind = gammaKinds[lim.steerU(t, label+".kind", uint64(slices.Index(gammaKinds, kind)), uint64(len(gammaKinds)))]
	seed := lim.steerU(t, label+".seed", rapid.Uint64().Draw(t, label+".seed"), 0)
	g := makeGamma(kind, seed, n)
	lim.poke(t, label, g, 0)
	return g
}
