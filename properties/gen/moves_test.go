package gen

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// seq is a deterministic source of choices for Neighbour (SplitMix64).
func seq(seed uint64) func() uint64 {
	s := seed
	return func() uint64 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
}

// aCase is the steerable draws of an RMSNorm check.
var aCase = []Value{
	{Key: "hidden", F: 33}, {Key: "rows", F: 7}, {Key: "eps", F: 1e-5},
	{Key: "x.dist", U: 0}, {Key: "x.log10scale", F: -2}, {Key: "x.seed", U: 42},
	{Key: "gamma.kind", U: 1}, {Key: "gamma.seed", U: 7},
}

// changed returns the indices where a and b differ, and whether b has
// values a lacks.
func changed(a, b []Value) (idx []int, appended bool) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			idx = append(idx, i)
		}
	}
	return idx, len(b) > len(a)
}

// TestNeighbourMovesOneClass: each class changes what it names, by a step
// within its documented range, and nothing else.
func TestNeighbourMovesOneClass(t *testing.T) {
	dec := func(a, b float64) float64 { return math.Abs(math.Log10(b / a)) }
	for seed := uint64(1); seed <= 300; seed++ {
		for c := range NumMoves {
			out, ok := Neighbour(aCase, c, seq(seed))
			if !ok {
				t.Fatalf("%v: nothing moved in a case that has it", c)
			}
			idx, app := changed(aCase, out)
			keys := func() []string {
				var ks []string
				for _, i := range idx {
					ks = append(ks, aCase[i].Key)
				}
				return ks
			}()
			switch c {
			case MoveShape:
				if len(idx) > 1 || app || (len(idx) == 1 && !slices.Contains([]string{"hidden", "rows"}, keys[0])) {
					t.Fatalf("shape moved %v (appended %v)", keys, app)
				}
				if len(idx) == 1 && out[idx[0]].F < 1 {
					t.Fatalf("shape moved %s to %v < 1", keys[0], out[idx[0]].F)
				}
			case MoveScale:
				if len(idx) != 1 || keys[0] != "x.log10scale" || app {
					t.Fatalf("scale moved %v", keys)
				}
				if d := math.Abs(out[idx[0]].F - aCase[idx[0]].F); d < 0.03-1e-12 || d > 1.5+1e-12 {
					t.Fatalf("scale step %v decades, want 0.03…1.5", d)
				}
			case MoveParam:
				if len(idx) != 1 || keys[0] != "eps" || app {
					t.Fatalf("param moved %v", keys)
				}
				if d := dec(aCase[idx[0]].F, out[idx[0]].F); d < 0.03-1e-9 || d > 1+1e-9 {
					t.Fatalf("eps step %v decades, want 0.03…1", d)
				}
			case MovePair:
				if len(idx) != 2 || keys[0] != "eps" || keys[1] != "x.log10scale" || app {
					t.Fatalf("pair moved %v", keys)
				}
				de := math.Log10(out[2].F / aCase[2].F)
				ds := out[4].F - aCase[4].F
				if math.Abs(de+ds) > 1e-9 {
					t.Fatalf("pair moved eps by %v decades and the scale by %v: want opposite steps", de, ds)
				}
			case MoveSeed:
				if len(idx) != 1 || (keys[0] != "x.seed" && keys[0] != "gamma.seed") || app {
					t.Fatalf("seed moved %v", keys)
				}
			case MoveKind:
				if len(idx) != 1 || (keys[0] != "x.dist" && keys[0] != "gamma.kind") || app || out[idx[0]].U >= 8 {
					t.Fatalf("kind moved %v to %v", keys, out)
				}
			case MovePoke:
				if len(idx) != 0 || !app || len(out) != len(aCase)+1 {
					t.Fatalf("poke moved %v, appended %v", keys, app)
				}
				p := out[len(out)-1]
				if (p.Key != "x.poke" && p.Key != "gamma.poke") || math.Abs(p.F) < 1e-3 || math.Abs(p.F) > 1e3 {
					t.Fatalf("poke %v", p)
				}
			}
		}
	}
}

// TestNeighbourSteps: the steps reach both ways and both ends of their
// ranges, so a climb can go down as well as up, finely and coarsely.
func TestNeighbourSteps(t *testing.T) {
	var up, down, fine, coarse bool
	for seed := uint64(1); seed <= 500; seed++ {
		out, _ := Neighbour(aCase, MoveScale, seq(seed))
		d := out[4].F - aCase[4].F
		up, down = up || d > 0, down || d < 0
		fine, coarse = fine || math.Abs(d) < 0.1, coarse || math.Abs(d) > 1
	}
	if !up || !down || !fine || !coarse {
		t.Errorf("scale steps: up %v down %v fine (<0.1) %v coarse (>1) %v; want all", up, down, fine, coarse)
	}
	var grow, shrink bool
	for seed := uint64(1); seed <= 500; seed++ {
		out, _ := Neighbour(aCase, MoveShape, seq(seed))
		for _, i := range []int{0, 1} {
			grow, shrink = grow || out[i].F > aCase[i].F, shrink || out[i].F < aCase[i].F
		}
	}
	if !grow || !shrink {
		t.Errorf("shape steps: grow %v shrink %v; want both", grow, shrink)
	}
}

// TestMovesOf: the classes offered are those with something to move.
func TestMovesOf(t *testing.T) {
	if got := Moves(aCase); len(got) != int(NumMoves) {
		t.Errorf("Moves(an RMSNorm case) = %v, want every class", got)
	}
	onlyTheta := []Value{{Key: "theta", F: 1e4}, {Key: "pos", F: 7}}
	if got, want := Moves(onlyTheta), []Move{MoveParam}; !slices.Equal(got, want) {
		t.Errorf("Moves(θ and a position) = %v, want %v", got, want)
	}
	if got := Moves(nil); len(got) != 0 {
		t.Errorf("Moves(nil) = %v, want none", got)
	}
	if _, ok := Neighbour(onlyTheta, MovePair, seq(1)); ok {
		t.Errorf("a pair move with no tensor reported a move")
	}
}

// TestSteerDrawsWanted: a check registered with a Steering draws the
// values its Steer wants, brought into range, and records what it drew;
// one not registered draws as rapid alone.
func TestSteerDrawsWanted(t *testing.T) {
	s := NewSteering()
	lim := EmuLimits.WithSteering(s)
	rapid.Check(t, func(rt *rapid.T) {
		st := &Steer{Want: []Value{{Key: "eps", F: 3e-4}, {Key: "hidden", F: 1e9}, {Key: "x.log10scale", F: -40}}}
		s.Begin(rt, st)
		defer s.End(rt)
		eps := lim.DrawEps(rt, "eps")
		h := lim.DrawHidden(rt, "hidden")
		x := lim.Values(rt, "x", 1, h)
		if eps != float32(3e-4) {
			t.Fatalf("eps %v, want the wanted 3e-4", eps)
		}
		if h != lim.MaxHidden {
			t.Fatalf("hidden %d, want the wanted 1e9 brought to MaxHidden %d", h, lim.MaxHidden)
		}
		if x.Scale != -6 {
			t.Fatalf("x's scale 10^%v, want the wanted 10^-40 brought to 10^-6", x.Scale)
		}
		if len(st.Made) < 5 || st.Made[0] != (Value{Key: "eps", F: float64(float32(3e-4))}) {
			t.Fatalf("Made = %v, want eps first, as drawn", st.Made)
		}
	})
	rapid.Check(t, func(rt *rapid.T) {
		if e := lim.DrawEps(rt, "eps"); e == float32(3e-4) {
			t.Fatalf("an unregistered check drew the last Steer's eps")
		}
	})
}
