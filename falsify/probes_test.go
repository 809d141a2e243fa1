package falsify

import (
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// TestEveryOperationProbed: every kernel of ours has probes, and every
// operation of the op table is probed by a prediction of its own, so a
// mutant of a new operation's kernel is not reported unkilled for want of
// a probe.
func TestEveryOperationProbed(t *testing.T) {
	for _, k := range kernels.All() {
		if len(kernelProbes(k.Name)) == 0 {
			t.Errorf("kernel %s has no probes in probeTable", k.Name)
		}
	}
	for _, o := range op.All() {
		found := false
		for _, ps := range probeTable() {
			for _, pr := range ps {
				p, ok := properties.Lookup(pr.id)
				found = found || (ok && len(p.Ops) == 1 && p.Covers(o.Name()))
			}
		}
		if !found {
			t.Errorf("no probe checks a prediction of %s", o.Name())
		}
	}
}
