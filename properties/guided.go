package properties

import (
	"fmt"
	"math"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// CoverageLog is the run's branch coverage as guided generation reads it
// (emu.Coverage): Mark numbers the launches recorded so far, and Since
// reports every guard outcome (a branch direction, a guard that held or
// failed) that a launch recorded after a mark set.
type CoverageLog interface {
	Mark() uint64
	Since(mark uint64, f func(kernel string, pc int, held bool))
}

// Guidance is coverage-guided generation (Config.Guide), as Zest and
// HypoFuzz do it: each rapid loop keeps the steerable draws (package gen:
// shape, ε, θ, positions, tensors' scales and seeds, single elements) of
// every check whose launches reached a guard outcome the loop had not
// reached before, and a share of its checks, instead of drawing at random,
// draw a mutant of one of those inputs (gen.Mutate, one to three moves).
// Guided checks replace random ones, so the budget is the run's; they are
// never the checks the targeted search climbs with (Targeting.climbs), so
// the two shares add up.
//
// Which checks are guided is a function of their index, and a guided
// check's input of the loop's seed, the check's index and the loop's
// corpus. The corpus is a function of the seed where a check's window
// (from its first draw to its end) holds its own launches alone: one rapid
// loop with no other contract run launching meanwhile, as a replay runs.
// Loops that run at once may credit a check with an outcome another
// loop's check reached in the same window: that changes which inputs are
// kept, never what a check verifies.
type Guidance struct {
	// Share is the share of each loop's checks drawn from the corpus, in
	// [0, 1]; 0 only watches (what a measurement compares against).
	Share    float64
	cov      CoverageLog
	steering *gen.Steering
}

// NewGuidance returns the guided generation that spends share of the
// checks mutating inputs that reached new coverage in cov; a share outside
// [0, 1] or a nil cov is an error.
func NewGuidance(share float64, cov CoverageLog) (*Guidance, error) {
	if !(share >= 0 && share <= 1) {
		return nil, fmt.Errorf("guided share %v: want a share in [0, 1]", share)
	}
	if cov == nil {
		return nil, fmt.Errorf("guided generation needs the run's coverage (the emulator, with coverage on)")
	}
	return &Guidance{Share: share, cov: cov, steering: gen.NewSteering()}, nil
}

// steering returns the Steering the run's limits draw through: the
// targeted search's where it runs (a guided check sets the Want of the
// Steer it registered), else guided generation's; nil: none.
func (c *Config) steering() *gen.Steering {
	switch {
	case c.Target != nil && c.Target.Share > 0:
		return c.Target.steering
	case c.Guide != nil:
		return c.Guide.steering
	}
	return nil
}

// reach is one guard outcome of one kernel.
type reach struct {
	kernel string
	pc     int
	held   bool
}

// guided is one contract run's guided generation: a corpus per loop.
type guided struct {
	g      *Guidance
	target *Targeting
	mu     sync.Mutex
	loops  map[int]*guideLoop
}

func newGuided(g *Guidance, target *Targeting) *guided {
	if g == nil {
		return nil
	}
	if target != nil && target.Share <= 0 {
		target = nil
	}
	return &guided{g: g, target: target, loops: map[int]*guideLoop{}}
}

// guideLoop is one rapid loop's corpus and what it saw.
type guideLoop struct {
	seed   uint64
	calls  int // checks begun before the loop's first failure
	free   int // of those, the ones targeted search did not take
	seen   map[reach]bool
	corpus [][]gen.Value
	// failed, frozen: as climber's, where guided generation registers the
	// Steers (no targeted search): rapid's shrinking draws the failing
	// check's wanted values.
	failed bool
	frozen []gen.Value
}

// guideCheck is what begin hands to end about one call of the property.
type guideCheck struct {
	st        *gen.Steer
	own       bool // registered by guided generation, not targeted search
	guided    bool
	shrinking bool
	mark      uint64
}

func (s *guided) loop(k int, seed uint64) *guideLoop {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.loops[k]
	if !ok {
		l = &guideLoop{seed: seed, seen: map[reach]bool{}}
		s.loops[k] = l
	}
	return l
}

// turn reports whether the jth check (from 0) that targeted search leaves
// is guided: share/(1−targeted share) of them, spread evenly.
func (s *guided) turn(j int) bool {
	f := s.g.Share
	if s.target != nil {
		f /= 1 - s.target.Share
	}
	f = min(f, 1)
	return math.Floor(float64(j+1)*f) > math.Floor(float64(j)*f)
}

// begin readies the check loop k (of base seed seed) is about to run on
// rt: ch is what targeted search's begin returned (its Steer registered;
// none without targeted search, and guided generation registers one of
// its own). nil s: no guidance.
func (s *guided) begin(k int, seed uint64, rt *rapid.T, ch climbCheck) guideCheck {
	if s == nil {
		return guideCheck{}
	}
	l := s.loop(k, seed)
	gc := guideCheck{st: ch.st, shrinking: ch.shrinking}
	if gc.st == nil {
		gc.own = true
		gc.st = &gen.Steer{}
		if l.failed {
			gc.st.Want, gc.shrinking = l.frozen, true
		}
		s.g.steering.Begin(rt, gc.st)
	}
	if gc.shrinking {
		return gc
	}
	i := l.calls
	l.calls++
	if s.target == nil || !s.target.climbs(i) {
		j := l.free
		l.free++
		if s.turn(j) && len(l.corpus) > 0 && !ch.climbing {
			r := splitmix{seed ^ uint64(i)*0x9e3779b97f4a7c15 ^ 0x6a09e667f3bcc908}
			want := l.corpus[r.next()%uint64(len(l.corpus))]
			for range 1 + r.next()%3 {
				want = gen.Mutate(want, r.next)
			}
			gc.st.Want, gc.guided = want, true
		}
	}
	gc.mark = s.g.cov.Mark()
	return gc
}

// end ends a check begun with begin: failed says it failed (its draws are
// then what rapid shrinks), invalid that rapid refused its draws.
func (s *guided) end(k int, rt *rapid.T, gc guideCheck, failed, invalid bool) {
	if s == nil {
		return
	}
	if gc.own {
		s.g.steering.End(rt)
	}
	if gc.shrinking {
		return
	}
	l := s.loop(k, 0)
	if failed && gc.own {
		l.failed, l.frozen = true, gc.st.Want
	}
	novel := false
	s.g.cov.Since(gc.mark, func(kernel string, pc int, held bool) {
		r := reach{kernel, pc, held}
		if !l.seen[r] {
			l.seen[r] = true
			novel = true
		}
	})
	if novel && !invalid && s.g.Share > 0 {
		l.corpus = append(l.corpus, append([]gen.Value(nil), gc.st.Made...))
	}
}
