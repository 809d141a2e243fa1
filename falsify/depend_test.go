package falsify

import (
	"testing"

	"github.com/ptxprop/ptxprop/properties"
)

// neighbour-row-zero computes outputs bit-identical to the shipped
// kernel's (min(|x|, 0) is +0 for every float), so only the dependence
// prediction can kill it: DEPEND-001 kills it, and no other prediction the
// run probes does.
func TestNeighbourRowZeroKilledByDependence(t *testing.T) {
	s := getSession(t)
	var ms []Mutant
	for _, n := range NamedMutants() {
		if n.Name == "neighbour-row-zero" {
			ms = append(ms, n)
		}
	}
	if len(ms) != 1 {
		t.Fatal("no named mutant neighbour-row-zero")
	}
	r := runMutants(t, s, ms, func(Result) {})[0]
	if !r.Killed() || r.KilledBy != properties.Dependence {
		t.Fatalf("neighbour-row-zero: %s, killed by %q (%s), want killed by %s", r.Status, r.KilledBy, r.Reason, properties.Dependence)
	}
	for _, p := range r.Runs {
		if p.Prediction != properties.Dependence && p.Status == "falsified" {
			t.Errorf("%s (%s) killed a mutant whose outputs are bit-identical", p.Prediction, p.Contract)
		}
		t.Logf("%s (%s): %s after %d checks", p.Prediction, p.Contract, p.Status, p.Checks)
	}
	t.Logf("killed by %s after %d checks in %v: %s", r.KilledBy, r.Checks, r.Duration, r.Failure)
}
