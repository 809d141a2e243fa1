package falsify

import (
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// An unmodified copy of a kernel, run as a mutant is (differential mode,
// the session's instruction budget and watchdog), passes every contract
// that probes it: a kill of a real mutant is then the mutant's doing, not
// the harness's (an instruction budget smaller than the original's
// launches, or the original's launches seen by a contract that watches
// its device).
func TestOriginalSurvives(t *testing.T) {
	s := getSession(t)
	for _, name := range []string{"rmsnorm_fwd_rms", "layernorm_fwd_stats"} {
		t.Run(name, func(t *testing.T) {
			k, ok := kernels.Lookup(name)
			if !ok {
				t.Fatalf("no kernel %s", name)
			}
			// A comment makes it another module with the same code, as a
			// mutant is.
			copyK := k.WithPTX(append(slices.Clone(k.PTX), "\n// an unmodified copy\n"...))
			orig, mut := defaults(), setWith(copyK)
			tr := &tracer{mutated: launchOf(copyK), diff: true, ref: s.dev}
			e := &env{orig: &orig, mut: &mut, tr: tr}
			m := Generic{Kernel: name, Op: 0, PC: -1, Arg: -1}
			for i, p := range kernelProbes(name) {
				pr, o := s.probe(m, p, e, i)
				switch o.Status {
				case outcome.Falsified, outcome.Inconclusive, outcome.Errored:
					t.Errorf("%s (%s) on an unmodified %s: %s after %d checks: %s", p.id, p.name, name, o.Status, pr.Checks, firstLine(o.Reason))
				}
			}
			if n, calls, differing, _, first := tr.snapshot(); n == 0 || calls == 0 || differing > 0 {
				t.Errorf("%d launches, %d calls compared, %d differing (%s): want launches and no difference", n, calls, differing, first)
			}
		})
	}
}
