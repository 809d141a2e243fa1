package properties

import (
	"math"
	"testing"

	"github.com/ptxprop/ptxprop/properties/gen"
)

func inputOf(dist uint64, scale, eps float64, seed uint64) []gen.Value {
	return []gen.Value{{Key: "hidden", F: 33}, {Key: "eps", F: eps}, {Key: "x.dist", U: dist},
		{Key: "x.log10scale", F: scale}, {Key: "x.seed", U: seed}}
}

// TestHillElites: one elite per niche (the categorical draws), the worst
// first, at most nElites, a niche's elite replaced only by a worse ratio.
func TestHillElites(t *testing.T) {
	var h hill
	for i, r := range []float64{0.5, 0.7, 0.6, 0.9, 0.2, 0.95} {
		h.observe(nil, inputOf(uint64(i), 0, 1e-5, 1), r)
	}
	h.observe(nil, inputOf(1, 0, 1e-5, 2), 0.65) // niche 1 holds 0.7
	h.observe(nil, inputOf(3, 0, 1e-5, 2), 0.99) // niche 3 beaten
	var got []float64
	for _, e := range h.elites {
		got = append(got, e.ratio)
	}
	want := []float64{0.99, 0.95, 0.7, 0.6}
	if len(got) != len(want) {
		t.Fatalf("elites %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("elites %v, want %v", got, want)
		}
	}
	if h.best() != 0.99 || h.elites[0].in[4].U != 2 {
		t.Errorf("best %v from %v, want 0.99 from seed 2", h.best(), h.elites[0].in)
	}
}

// TestHillLearnsMoves: a class whose moves beat their parents is drawn
// more often than one whose moves never do.
func TestHillLearnsMoves(t *testing.T) {
	var h hill
	h.observe(nil, inputOf(0, 0, 1e-5, 1), 0.5)
	for range 20 {
		h.observe(&step{parent: 0.5, moves: []gen.Move{gen.MoveScale}}, inputOf(0, 0, 1e-5, 1), 0.6)
		h.observe(&step{parent: 0.5, moves: []gen.Move{gen.MoveSeed}}, inputOf(0, 0, 1e-5, 1), 0.4)
	}
	r := splitmix{1}
	n := map[gen.Move]int{}
	for range 2000 {
		n[h.draw([]gen.Move{gen.MoveScale, gen.MoveSeed}, r.next)]++
	}
	if n[gen.MoveScale] < 5*n[gen.MoveSeed] || n[gen.MoveSeed] == 0 {
		t.Errorf("drawn: scale %d, seed %d; want scale (21/22 of its tries won) far more often, seed still drawn", n[gen.MoveScale], n[gen.MoveSeed])
	}
}

// peak is a synthetic err/tol over an RMSNorm-like input: a trap (ratio
// 0.98 on distribution 6, like subnormal inputs where the bound is tight
// whatever the kernel does) and a narrow peak, 1.1 where 2·scale = log10 ε,
// falling off within a decade or two, with a little noise from the seed.
func peak(in []gen.Value) float64 {
	var dist, seed uint64
	var s, eps float64
	for _, v := range in {
		switch v.Key {
		case "x.dist":
			dist = v.U % 7
		case "x.log10scale":
			s = min(3, max(-6, v.F))
		case "eps":
			eps = min(1e-2, max(1e-8, v.F))
		case "x.seed":
			seed = v.U
		}
	}
	if dist == 6 {
		return 0.98
	}
	k := 2*s - math.Log10(eps)
	r := splitmix{seed}
	return 1.1*math.Exp(-k*k/2) + 0.2*float64(r.next()>>11)/(1<<53)
}

// climbRun is a loop of checks on peak: each draws at random from the
// generators' ranges or, when g climbs it, from the hill; it returns the
// checks until one exceeds 1 (0: none in budget).
func climbRun(g *Targeting, seed uint64, budget int) int {
	var h hill
	r := splitmix{seed}
	unif := func(lo, hi float64) float64 { return lo + (hi-lo)*float64(r.next()>>11)/(1<<53) }
	for i := range budget {
		var st *step
		in := inputOf(r.next()%7, unif(-6, 3), math.Pow(10, unif(-8, -2)), r.next())
		if g != nil && g.climbs(i) {
			cr := splitmix{seed ^ uint64(i)*0x9e3779b97f4a7c15}
			if p, ok := h.next(cr.next); ok {
				in, st = p.want, &p
			}
		}
		ratio := peak(in)
		if ratio > 1 {
			return i + 1
		}
		h.observe(st, in, ratio)
	}
	return 0
}

// TestHillClimbsToNarrowPeak: on a narrow peak behind a trap, climbing
// half the checks kills in more loops than drawing them all at random, at
// the same budget (measured: 190 of 200 loops against 179).
func TestHillClimbsToNarrowPeak(t *testing.T) {
	g, _ := NewTargeting(0.5)
	const budget, loops = 40, 200
	kills := map[bool]int{}
	for seed := uint64(1); seed <= loops; seed++ {
		for _, climb := range []bool{false, true} {
			var tg *Targeting
			if climb {
				tg = g
			}
			if climbRun(tg, seed, budget) > 0 {
				kills[climb]++
			}
		}
	}
	t.Logf("kills in %d loops of %d checks: random %d, climbing %d", loops, budget, kills[false], kills[true])
	if kills[true] <= kills[false] {
		t.Errorf("climbing killed in %d loops, random alone %d: want more", kills[true], kills[false])
	}
}
