package falsify

import (
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/ptx"
	"github.com/ptxprop/ptxprop/reports"
)

// TestVerdicts: every recorded verdict names a generic mutant once, its
// site still holds the instruction it was written for, and each
// equivalence proof holds on the committed PTX.
func TestVerdicts(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Verdicts() {
		if seen[v.Mutant] {
			t.Errorf("%s: two verdicts", v.Mutant)
		}
		seen[v.Mutant] = true
		if v.Reason == "" || v.Change == "" {
			t.Errorf("%s: a verdict gives its reason and the prediction that would have to change", v.Mutant)
		}
		if err := v.Check(); err != nil {
			t.Error(err)
		}
	}
}

// proveOn runs proof on generic mutant name.
func proveOn(t *testing.T, name string, proof func(orig, mut *ptx.Function, pc int) error) error {
	t.Helper()
	v := Verdict{Mutant: name, Proof: proof, Reason: "r", Change: "c"}
	m, err := ParseMutant(name)
	if err != nil {
		t.Fatal(err)
	}
	g := m.(Generic)
	k, _ := kernels.Lookup(g.Kernel)
	if v.Instruction, err = g.Instruction(k); err != nil {
		t.Fatal(err)
	}
	return v.Check()
}

// TestVerdictProofsRefute: each proof rejects mutants its argument does
// not cover, so that a verdict cannot pass for equivalence by being
// attached to the wrong mutant.
func TestVerdictProofsRefute(t *testing.T) {
	for _, c := range []struct {
		name  string
		proof func(orig, mut *ptx.Function, pc int) error
		want  string
	}{
		// 2 → 1: offsets 16, 8, 4, 1, 1 add lane ⊕ 1 twice and never lane ⊕ 2.
		{"rmsnorm_fwd/imm-dec@pc258.1", butterflyBasis, "not two bases"},
		// 4 → 3 with 2 and 1 still there: 3 = 2 ⊕ 1, lanes ⊕ 4 never reached.
		{"layernorm_fwd_stats/imm-dec@pc186.1", butterflyBasis, "not two bases"},
		// Not a shuffle offset at all.
		{"fused_residual_rmsnorm/imm-inc@pc26.2", butterflyBasis, "not the mov of an immediate"},
		// and.b64 r, ptr, 15 → 16: not a comparison.
		{"layernorm_fwd/imm-inc@pc18.2", constantAlignment, "not an equality test"},
		// hidden & 3 tested against 1: not a pointer's alignment.
		{"layernorm_fwd/imm-inc@pc15.2", constantAlignment, "not ptr & 15"},
	} {
		err := proveOn(t, c.name, c.proof)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: proof gave %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestApplyVerdict: a recorded equivalence turns a rounding-level survivor
// into an equivalent mutant, never a survivor that differs by more, and a
// survivor verdict only explains.
func TestApplyVerdict(t *testing.T) {
	eq := verdicts[0]
	r := Result{Mutant: eq.Mutant, Status: reports.MutantSurvived, Reason: "rounding-level: …"}
	applyVerdict(&r, 3)
	if r.Status != reports.MutantEquivalent || !strings.Contains(r.Reason, "proved") {
		t.Errorf("rounding-level survivor with a proof: %s (%s)", r.Status, r.Reason)
	}
	r = Result{Mutant: eq.Mutant, Status: reports.MutantSurvived, Reason: "gap: …"}
	applyVerdict(&r, 1000)
	if r.Status != reports.MutantSurvived || !strings.Contains(r.Reason, "contradicts") {
		t.Errorf("gap-level survivor with a proof: %s (%s)", r.Status, r.Reason)
	}
	r = Result{Mutant: eq.Mutant, Status: reports.MutantKilled}
	applyVerdict(&r, 0)
	if r.Status != reports.MutantKilled {
		t.Errorf("killed mutant with a verdict became %s", r.Status)
	}
	var sv Verdict
	for _, v := range verdicts {
		if !v.Equivalent() {
			sv = v
		}
	}
	r = Result{Mutant: sv.Mutant, Status: reports.MutantSurvived, Reason: "rounding-level: …"}
	applyVerdict(&r, 3)
	if r.Status != reports.MutantSurvived || !strings.Contains(r.Reason, "to kill it") {
		t.Errorf("survivor verdict: %s (%s)", r.Status, r.Reason)
	}
}
