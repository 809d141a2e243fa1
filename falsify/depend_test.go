package falsify

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties"
)

// killersOf runs every probe of the named mutant (Session.Killers) and
// returns the runs and the predictions that killed it.
func killersOf(t *testing.T, name string) ([]Kill, []string) {
	t.Helper()
	s := getSession(t)
	if !s.dev.Capabilities().Has(cudart.CapDependence) {
		t.Skipf("DEPEND-001 needs a backend that tracks dependence (the emulator), not %s", s.dev.Info().Backend)
	}
	i := slices.IndexFunc(NamedMutants(), func(n Named) bool { return n.Name == name })
	if i < 0 {
		t.Fatalf("no named mutant %s", name)
	}
	ks, err := s.Killers(NamedMutants()[i])
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, k := range ks {
		t.Logf("%-44s %-12s %4d checks %v %.300s", k.Contract, k.Status, k.Checks, k.Duration.Round(1e6), k.Failure)
		if k.Killed() && !slices.Contains(by, k.Prediction) {
			by = append(by, k.Prediction)
		}
	}
	return ks, by
}

// neighbour-row-zero computes outputs bit-identical to the shipped
// kernel's (min(|x|, 0) is +0 for every float), so only the dependence
// prediction can kill it: every prediction that probes the RMSNorm
// forward's kernels runs on it, and DEPEND-001 alone kills it, naming the
// next row.
func TestNeighbourRowZeroKilledByDependence(t *testing.T) {
	ks, by := killersOf(t, "neighbour-row-zero")
	if !slices.Equal(by, []string{properties.Dependence}) {
		t.Fatalf("killed by %v, want by %s alone", by, properties.Dependence)
	}
	for _, k := range ks {
		if k.Killed() && !strings.Contains(k.Failure, "outside its declared dependence") {
			t.Errorf("%s: the failure does not name a read outside the declared dependence:\n%s", k.Contract, k.Failure)
		}
	}
}

// gamma-first-columns reads γ from its start for every column: y ignores
// γ[j], an input it must depend on. DEPEND-001 kills it and names the
// missing dependence (RMS-FWD kills it too: the values are wrong).
func TestGammaFirstColumnsKilledByDependence(t *testing.T) {
	ks, by := killersOf(t, "gamma-first-columns")
	if !slices.Contains(by, properties.Dependence) {
		t.Fatalf("killed by %v, not by %s", by, properties.Dependence)
	}
	for _, k := range ks {
		if k.Prediction == properties.Dependence && k.Killed() && !strings.Contains(k.Failure, "does not depend on gamma[") {
			t.Errorf("%s: the failure does not name the missing dependence on gamma:\n%s", k.Contract, k.Failure)
		}
	}
	t.Logf("killed by %v", by)
}
