package properties_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// TestOursCoverEveryOperation: the implementations the generic predictions
// run over (ours, derived from kernels.Implementations) include one of
// every operation of the op table, each taken by that operation's own
// predictions, so that an operation added with our kernel but left out of
// kernels.Implementations fails here rather than go unchecked by batch
// independence, permutation, determinism and parity.
func TestOursCoverEveryOperation(t *testing.T) {
	for _, o := range op.All() {
		found := false
		for _, p := range properties.InOrder() {
			if len(p.Ops) != 1 || p.Pair != nil || !p.Covers(o.Name()) {
				continue
			}
			for _, impl := range ours(properties.BatchIndependence) {
				found = found || p.Takes(properties.Subject{Impl: impl})
			}
		}
		if !found {
			t.Errorf("ours has no implementation of %s", o.Name())
		}
	}
}
