package suite

import (
	"fmt"

	"github.com/ptxprop/ptxprop/properties"
)

// checkShares refuses targeted and guided shares that together exceed the
// checks: a check is random, climbs or is guided.
func checkShares(c Config) error {
	if c.Targeted+c.Guided > 1 {
		return fmt.Errorf("-ptxprop.targeted=%v and -ptxprop.guided=%v: their sum must be at most 1", c.Targeted, c.Guided)
	}
	return nil
}

// guidance returns the run's coverage-guided generation: nil without a
// share or without the coverage it is guided by (not on the emulator, or
// -ptxprop.coverage=false). Every contract run of the run shares the
// Guidance; each keeps its own corpus.
func guidance(c Config) *properties.Guidance {
	if c.Guided <= 0 || c.cov == nil {
		return nil
	}
	g, err := properties.NewGuidance(c.Guided, c.cov)
	if err != nil {
		return nil // refused by checkShares and the setting before a run
	}
	return g
}
