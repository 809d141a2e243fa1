package falsify

import (
	"fmt"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// Kill is one contract run of Killers: the run, and the failure when it
// killed the mutant.
type Kill struct {
	ProbeRun
	Failure string
}

// Killed reports whether the run killed the mutant (falsified, or a
// failure that did not replay).
func (k Kill) Killed() bool {
	return k.Status == outcome.Falsified || k.Status == outcome.Inconclusive
}

// Killers runs every contract run of mutant m's probes, not stopping at
// the first kill as Run does, and returns each: which predictions kill m
// and which pass it. It costs every probe's whole budget; Run gives the
// verdict. An error: m does not build or load.
func (s *Session) Killers(m Mutant) ([]Kill, error) {
	t, err := m.build()
	if err != nil {
		return nil, fmt.Errorf("%s does not build: %w", m, err)
	}
	if t.close != nil {
		defer t.close()
	}
	if t.check != nil {
		if err := t.check(s.dev); err != nil {
			return nil, fmt.Errorf("%s does not load: %w", m, err)
		}
	}
	if t.setup != nil {
		defer t.setup(&s.cfg)()
	}
	e := &env{orig: t.orig, mut: t.mut, tr: s.tracer(t.mutated, false)}
	var ks []Kill
	for i, p := range t.probes {
		pr, o := s.probe(m, p, e, i)
		k := Kill{ProbeRun: pr}
		if k.Killed() {
			k.Failure = o.Reason
		}
		ks = append(ks, k)
	}
	return ks, nil
}
