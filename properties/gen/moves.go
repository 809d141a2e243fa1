package gen

import (
	"math"
	"strings"
)

// Move is a class of neighbour moves for a search that climbs from a
// check's steerable draws (Steer.Made). The classes are kept apart so that
// a search can learn which of them pay on the property at hand (a shape
// move where the error lives on one branch, a magnitude move where it
// lives where the mean of squares meets ε) and draw those more often.
type Move int

// The move classes.
const (
	// MoveShape moves one shape dimension (hidden, rows): ±1, ±up to 8,
	// doubled or halved.
	MoveShape Move = iota
	// MoveScale moves one tensor's log10 scale by ±0.03…1.5 decades
	// (log-uniform: fine steps as often as coarse ones).
	MoveScale
	// MoveParam moves one scalar parameter: ε or θ by a factor
	// 10^±(0.03…1), a position by up to ±64, doubled or halved.
	MoveParam
	// MovePair moves a tensor's log10 scale and ε or θ's log10 by one
	// step of 0.03…1 decades in opposite directions: the magnitudes and
	// the parameter toward or away from each other.
	MovePair
	// MoveSeed replaces one tensor's seed: the same distribution and
	// scale, other values (other roundings).
	MoveSeed
	// MovePoke multiplies one more element of a tensor by ±10^U(−3, 3).
	MovePoke
	// MoveKind replaces one tensor's distribution, γ's kind or a tensor's
	// view offset: a jump to another region, which no continuous move reaches (subnormal inputs,
	// say, where the bound is tight whatever the kernel does).
	MoveKind
	// NumMoves is the number of classes.
	NumMoves
)

var moveNames = [NumMoves]string{"shape", "scale", "param", "pair", "seed", "poke", "kind"}

func (m Move) String() string {
	if m >= 0 && m < NumMoves {
		return moveNames[m]
	}
	return "move?"
}

// movable sorts the draws of made by what a move may change: shape
// dimensions, tensors' scales, scalar parameters (ε, θ), positions and
// tensors' seeds (indices into made).
type movable struct{ shape, scale, param, pos, seed, kind []int }

func movablesOf(made []Value) movable {
	var m movable
	for i, v := range made {
		switch {
		case v.Key == "hidden" || v.Key == "rows":
			m.shape = append(m.shape, i)
		case v.Key == "eps" || v.Key == "theta":
			m.param = append(m.param, i)
		case v.Key == "pos":
			m.pos = append(m.pos, i)
		case strings.HasSuffix(v.Key, ".log10scale"):
			m.scale = append(m.scale, i)
		case strings.HasSuffix(v.Key, ".seed"):
			m.seed = append(m.seed, i)
		case strings.HasSuffix(v.Key, ".dist"), strings.HasSuffix(v.Key, ".kind"), strings.HasSuffix(v.Key, ".off"):
			m.kind = append(m.kind, i)
		}
	}
	return m
}

// Moves returns the classes that have something to move in made, in
// class order.
func Moves(made []Value) []Move {
	m := movablesOf(made)
	var out []Move
	for c, ok := range [NumMoves]bool{
		MoveShape: len(m.shape) > 0,
		MoveScale: len(m.scale) > 0,
		MoveParam: len(m.param)+len(m.pos) > 0,
		MovePair:  len(m.scale) > 0 && len(m.param) > 0,
		MoveSeed:  len(m.seed) > 0,
		MovePoke:  len(m.seed) > 0,
		MoveKind:  len(m.kind) > 0,
	} {
		if ok {
			out = append(out, Move(c))
		}
	}
	return out
}

// Neighbour returns made with one move of class c applied, and whether
// made had anything for c to move (if not, made's copy unchanged). r
// supplies the choices (uniform 64-bit values); the generators bring the
// result back into their ranges when it is drawn.
func Neighbour(made []Value, c Move, r func() uint64) ([]Value, bool) {
	out := append([]Value(nil), made...)
	m := movablesOf(made)
	unif := func() float64 { return float64(r()>>11) / (1 << 53) }
	pick := func(is []int) *Value { return &out[is[r()%uint64(len(is))]] }
	sign := func() float64 { return float64(1 - 2*int(r()&1)) }
	// step is a signed log-uniform step in [lo, hi] decades.
	step := func(lo, hi float64) float64 {
		return sign() * math.Pow(10, math.Log10(lo)+(math.Log10(hi)-math.Log10(lo))*unif())
	}
	switch c {
	case MoveShape:
		if len(m.shape) == 0 {
			return out, false
		}
		v := pick(m.shape)
		switch r() % 4 {
		case 0:
			v.F += sign()
		case 1:
			v.F += sign() * float64(1+r()%8)
		case 2:
			v.F *= 2
		default:
			v.F = math.Floor(v.F / 2)
		}
		v.F = max(1, v.F)
	case MoveScale:
		if len(m.scale) == 0 {
			return out, false
		}
		pick(m.scale).F += step(0.03, 1.5)
	case MoveParam:
		n := len(m.param) + len(m.pos)
		if n == 0 {
			return out, false
		}
		if k := int(r() % uint64(n)); k < len(m.param) {
			out[m.param[k]].F *= math.Pow(10, step(0.03, 1))
			break
		}
		v := pick(m.pos)
		switch r() % 3 {
		case 0:
			v.F += float64(int(r()%129) - 64)
		case 1:
			v.F *= 2
		default:
			v.F = math.Floor(v.F / 2)
		}
		v.F = max(0, v.F)
	case MovePair:
		if len(m.scale) == 0 || len(m.param) == 0 {
			return out, false
		}
		d := step(0.03, 1)
		pick(m.scale).F += d
		pick(m.param).F *= math.Pow(10, -d)
	case MoveSeed:
		if len(m.seed) == 0 {
			return out, false
		}
		pick(m.seed).U = r()
	case MovePoke:
		if len(m.seed) == 0 {
			return out, false
		}
		t := made[m.seed[r()%uint64(len(m.seed))]]
		f := math.Pow(10, -3+6*unif())
		if r()&1 == 1 {
			f = -f
		}
		out = append(out, Value{Key: strings.TrimSuffix(t.Key, ".seed") + ".poke", N: t.N, F: f, U: r()})
	case MoveKind:
		if len(m.kind) == 0 {
			return out, false
		}
		// Another of the first eight indices; the generator keeps its own
		// draw for one beyond its list.
		v := pick(m.kind)
		if strings.HasSuffix(v.Key, ".off") { // a tensor's view offset (DrawOffsets)
			v.U = moveOffset(v.U, r)
			break
		}
		v.U = (v.U + 1 + r()%7) % 8
	default:
		return out, false
	}
	return out, true
}
