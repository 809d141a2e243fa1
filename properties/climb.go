package properties

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// The climb of one rapid loop (climber.hill): the few worst inputs so
// far, and per class of neighbour move how often it was tried and how
// often it beat the input it moved from.
//
// The elites are the worst inputs of up to nElites niches, a niche being
// the input's categorical draws (tensors' distributions, γ's kind), which
// no continuous move changes: a climb stuck where the bound is tight
// whatever the kernel does (subnormal inputs) keeps another region to
// climb in. Every check, random or climbing, whose ratio beats its niche's
// elite, or the worst elite's when its niche has none, takes that place.
//
// A climbing check moves, with odds 3/4, the worst elite that has not gone
// staleRestart climbs without a child beating it (then any elite; when all
// are stale, their counts restart). It applies one move, or two with odds
// 1/4, each of a class drawn with weight (wins+1)/(tries+2), the
// rule-of-succession estimate of the class's odds of beating its parent:
// classes that raise the ratio on this property are drawn more, and none
// drops out.
type hill struct {
	elites      []elite // worst ratio first
	tries, wins [gen.NumMoves]int
}

type elite struct {
	in    []gen.Value
	niche string
	ratio float64
	stale int // climbs from it since one last beat it
}

const (
	nElites      = 4
	staleRestart = 4
)

// step is a climbing check's plan: the input it wants, the ratio of the
// elite it moved from and the classes of its moves.
type step struct {
	want   []gen.Value
	parent float64
	from   string // the parent's niche
	moves  []gen.Move
}

// next plans a climbing check, with choices from r; ok false: no elite yet
// or nothing to move.
func (h *hill) next(r func() uint64) (s step, ok bool) {
	if len(h.elites) == 0 {
		return step{}, false
	}
	i := slices.IndexFunc(h.elites, func(e elite) bool { return e.stale < staleRestart })
	if i < 0 {
		for j := range h.elites {
			h.elites[j].stale = 0
		}
		i = 0
	}
	if r()%4 == 0 {
		i = int(r() % uint64(len(h.elites)))
	}
	e := h.elites[i]
	s = step{want: e.in, parent: e.ratio, from: e.niche}
	n := 1
	if r()%4 == 0 {
		n = 2
	}
	for range n {
		cs := gen.Moves(s.want)
		if len(cs) == 0 {
			break
		}
		c := h.draw(cs, r)
		w, moved := gen.Neighbour(s.want, c, r)
		if moved {
			s.want = w
			s.moves = append(s.moves, c)
		}
	}
	return s, len(s.moves) > 0
}

// draw draws a class from cs with weight (wins+1)/(tries+2).
func (h *hill) draw(cs []gen.Move, r func() uint64) gen.Move {
	w := make([]float64, len(cs))
	sum := 0.0
	for i, c := range cs {
		w[i] = float64(h.wins[c]+1) / float64(h.tries[c]+2)
		sum += w[i]
	}
	x := float64(r()>>11) / (1 << 53) * sum
	for i, c := range cs {
		if x < w[i] {
			return c
		}
		x -= w[i]
	}
	return cs[len(cs)-1]
}

// observe records a check's ratio: s is its plan when it climbed (nil:
// random), made its steerable draws.
func (h *hill) observe(s *step, made []gen.Value, ratio float64) {
	if s != nil {
		beat := ratio > s.parent
		for _, c := range s.moves {
			h.tries[c]++
			if beat {
				h.wins[c]++
			}
		}
		if j := slices.IndexFunc(h.elites, func(e elite) bool { return e.niche == s.from }); j >= 0 && !beat {
			h.elites[j].stale++
		}
	}
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) || ratio <= 0 {
		return
	}
	n := niche(made)
	j := slices.IndexFunc(h.elites, func(e elite) bool { return e.niche == n })
	switch {
	case j >= 0 && ratio <= h.elites[j].ratio:
		return
	case j >= 0:
		h.elites = slices.Delete(h.elites, j, j+1)
	case len(h.elites) == nElites && ratio <= h.elites[nElites-1].ratio:
		return
	case len(h.elites) == nElites:
		h.elites = h.elites[:nElites-1]
	}
	i := slices.IndexFunc(h.elites, func(e elite) bool { return e.ratio < ratio })
	if i < 0 {
		i = len(h.elites)
	}
	h.elites = slices.Insert(h.elites, i, elite{in: made, niche: n, ratio: ratio})
}

// niche spells the categorical draws of made.
func niche(made []gen.Value) string {
	var b strings.Builder
	for _, v := range made {
		if strings.HasSuffix(v.Key, ".dist") || strings.HasSuffix(v.Key, ".kind") {
			fmt.Fprintf(&b, "%s[%d]=%d ", v.Key, v.N, v.U)
		}
	}
	return b.String()
}

// best returns the worst ratio so far (0: none).
func (h *hill) best() float64 {
	if len(h.elites) == 0 {
		return 0
	}
	return h.elites[0].ratio
}
