package properties

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// Targeting is the targeted search of a run (Config.Target), Hypothesis's
// target() for rapid, which has none: a share of every contract run's
// checks, instead of drawing at random, climbs toward a larger observed
// error/tolerance ratio. Each rapid loop keeps the inputs of its worst
// ratios so far, one per niche (the steerable draws of package gen: shape,
// ε, θ, positions, tensors' distributions, scales and seeds, single
// elements), and a climbing check draws a neighbour of one of them
// (gen.Neighbour), by move classes that learn from their success (hill,
// climb.go); a neighbour that reaches a larger ratio takes its parent's
// place. A prediction whose checks
// observe no ratio (bit-identity, say) never climbs: its checks all stay
// random. Climbing replaces random checks, so the budget is the run's.
//
// A loop's climb is a function of its base seed and its checks' ratios:
// the neighbours are chosen by a generator seeded from the loop's seed and
// the check's index, and which checks climb by their index alone, so the
// first n checks of a loop replay (-rapid.seed, -rapid.checks=n) as they
// ran wherever the kernel's results are deterministic.
type Targeting struct {
	// Share is the share of each loop's checks that climb, in [0, 1).
	Share    float64
	steering *gen.Steering
}

// NewTargeting returns the targeted search that spends share of the checks
// climbing; share 0 returns nil (none), and one outside [0, 1) an error.
func NewTargeting(share float64) (*Targeting, error) {
	if !(share >= 0 && share < 1) {
		return nil, fmt.Errorf("targeted share %v: want a share in [0, 1)", share)
	}
	if share == 0 {
		return nil, nil
	}
	return &Targeting{Share: share, steering: gen.NewSteering()}, nil
}

// climbs reports whether check i (from 0) of a loop climbs: one in every
// 1/share of the checks, spread evenly, never the first.
func (g *Targeting) climbs(i int) bool {
	return i > 0 && math.Floor(float64(i+1)*g.Share) > math.Floor(float64(i)*g.Share)
}

// search is one contract run's targeted search: a climber per rapid loop.
type search struct {
	g        *Targeting
	mu       sync.Mutex
	climbers map[int]*climber
}

func newSearch(g *Targeting) *search {
	if g == nil || g.Share <= 0 {
		return nil
	}
	return &search{g: g, climbers: map[int]*climber{}}
}

// climber is one rapid loop's climb.
type climber struct {
	seed  uint64
	calls int  // checks begun before the loop's first failure
	hill  hill // the worst inputs so far and the moves' record: climb.go
	// failed: a check of the loop failed, and rapid now shrinks and
	// replays it; those calls draw frozen, the failing check's wanted
	// values, so that a failure found by climbing reproduces.
	failed bool
	frozen []gen.Value
	// what the report says
	random, targeted   outcome.Worst
	nTargeted, nBetter int
}

// climbCheck is what begin hands to end about one call of the property.
type climbCheck struct {
	st        *gen.Steer
	climbing  bool
	step      step // the climb's plan, when climbing
	shrinking bool
}

func (s *search) climber(k int, seed uint64) *climber {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.climbers[k]
	if !ok {
		c = &climber{seed: seed}
		s.climbers[k] = c
	}
	return c
}

// begin registers the check loop k (of base seed seed) is about to run on
// rt with the Steering and returns what end needs; nil s: no search.
func (s *search) begin(k int, seed uint64, rt *rapid.T) climbCheck {
	if s == nil {
		return climbCheck{}
	}
	c := s.climber(k, seed)
	var ch climbCheck
	switch {
	case c.failed:
		ch = climbCheck{st: &gen.Steer{Want: c.frozen}, shrinking: true}
	default:
		i := c.calls
		c.calls++
		ch.st = &gen.Steer{}
		if s.g.climbs(i) {
			r := splitmix{c.seed ^ uint64(i)*0x9e3779b97f4a7c15}
			if p, ok := c.hill.next(r.next); ok {
				ch.st.Want, ch.step, ch.climbing = p.want, p, true
			}
		}
	}
	s.g.steering.Begin(rt, ch.st)
	return ch
}

// end ends a check begun with begin: ratio is its worst error/tolerance
// (the failing comparison's when it failed), ctx its case, failed whether
// it failed, and replay the command that replays the loop's checks up to
// it.
func (s *search) end(k int, rt *rapid.T, ch climbCheck, ratio float64, ctx string, failed, invalid bool, replay func() string, run string) {
	if s == nil {
		return
	}
	s.g.steering.End(rt)
	if ch.shrinking {
		return
	}
	c := s.climber(k, 0)
	if ch.climbing {
		c.nTargeted++
	}
	if failed {
		c.failed, c.frozen = true, ch.st.Want
	}
	if invalid || math.IsNaN(ratio) {
		return
	}
	w := &c.random
	if ch.climbing {
		w = &c.targeted
	}
	if ratio > w.Ratio {
		in := ctx
		if ch.climbing {
			in += "; steered " + steeredValues(ch.st.Made)
		}
		*w = outcome.Worst{Ratio: ratio, Input: in, Repro: replay(), Run: run}
	}
	if ch.climbing && ratio > c.hill.best() && !math.IsInf(ratio, 0) {
		c.nBetter++
	}
	var st *step
	if ch.climbing {
		st = &ch.step
	}
	c.hill.observe(st, ch.st.Made, ratio)
}

// result returns what the search found over every loop (nil: no check
// observed a ratio).
func (s *search) result() *outcome.Search {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out *outcome.Search
	for k := range len(s.climbers) + 1 {
		c, ok := s.climbers[k]
		if !ok {
			continue
		}
		out = outcome.MergeSearch(out, &outcome.Search{Share: s.g.Share, Random: c.random, Targeted: c.targeted,
			TargetedChecks: c.nTargeted, Improved: c.nBetter})
	}
	if out == nil || (out.Random.Ratio == 0 && out.Targeted.Ratio == 0) {
		return nil
	}
	return out
}

// steeredValues spells a check's steered draws, the first dozen.
func steeredValues(vs []gen.Value) string {
	var b strings.Builder
	for i, v := range vs {
		if i == 12 {
			fmt.Fprintf(&b, " … (%d more)", len(vs)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// splitmix is SplitMix64 (Steele, Lea and Flood 2014): the climb's choices,
// a function of the loop's seed and the check's index.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
