package falsify

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/ptx"
)

// subtleMutants are PTX edits of the RMSNorm forward whose extra error is
// a few ulp, and only where the mean of squares M and ε stand in some
// relation: the mutants targeted search is for. They are not in
// NamedMutants: they exist to measure the search (TestTargetedChecksToKill).
var subtleMutants = []struct {
	name, what string
	edit       func(k *kernels.Kernel, fn *ptx.Function) error
}{
	{"mean-4ulp", "the mean of squares scaled by 1+2⁻²⁰: about 4 ulp of y where M ≫ ε", func(k *kernels.Kernel, fn *ptx.Function) error {
		_, div, add, err := rmsTail(k, fn)
		if err != nil {
			return err
		}
		m := div.in.Operands[0]
		add.insertBefore(ins("mul.rn.f32", m, m, f32imm(1+0x1p-20)))
		return nil
	}},
	{"eps-constant", "ε scaled by 1+2⁻²⁰ (a slightly wrong constant): about 4 ulp of y where M ≪ ε", func(k *kernels.Kernel, fn *ptx.Function) error {
		eps, _, add, err := rmsTail(k, fn)
		if err != nil {
			return err
		}
		add.insertBefore(ins("mul.rn.f32", ptx.Reg(eps), ptx.Reg(eps), f32imm(1+0x1p-20)))
		return nil
	}},
	{"eps-tiny-rows", "ε + 2⁻¹⁸·min(M, ε) in place of ε: at most about 4 ulp of y, and only where M is near ε", func(k *kernels.Kernel, fn *ptx.Function) error {
		eps, div, add, err := rmsTail(k, fn)
		if err != nil {
			return err
		}
		m, t := div.in.Operands[0], add.in.Operands[0] // t, the add's result, is free before it
		add.insertBefore(ins("min.f32", t, m, ptx.Reg(eps)),
			ins("fma.rn.f32", ptx.Reg(eps), t, f32imm(0x1p-18), ptx.Reg(eps)))
		return nil
	}},
}

// TestTargetedChecksToKill measures what the targeted search buys: each
// subtle mutant under RMS-FWD-001 at the same check budget, with the
// search off and at share 0.2, over ten seeds; it logs the table of
// checks-to-kill and fails when targeting kills fewer of the runs than
// random checks alone. Long: skipped under -short.
func TestTargetedChecksToKill(t *testing.T) {
	if testing.Short() {
		t.Skip("long: the subtle mutants × 10 seeds × 2 modes")
	}
	const budget, seeds = 60, 10
	dev, err := cudart.Open("emu", cudart.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "checks to kill under RMS-FWD-001, budget %d checks (-: survived)\n%-14s %-9s %s\n", budget, "mutant", "targeted", "seed 1 … 10                        kills  mean checks of kills")
	totals := map[float64]int{}
	for _, m := range subtleMutants {
		var ks []*kernels.Kernel
		for _, name := range rmsFwdKernels {
			k, err := edited(name, m.edit)
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			ks = append(ks, k)
		}
		var impl properties.RMSNormForwarder
		for _, i := range setWith(ks...) {
			if f, ok := i.(properties.RMSNormForwarder); ok {
				impl = f
				break
			}
		}
		for _, share := range []float64{0, 0.2} {
			target, _ := properties.NewTargeting(share)
			kills, sum := 0, 0
			row := ""
			for seed := uint64(1); seed <= seeds; seed++ {
				cfg := properties.Config{Device: dev, Target: target}
				q := suite.RunContract("targeted/"+m.name, cfg, suite.Rapid{Checks: budget, Exact: true, NoFailFile: true,
					ShrinkTime: time.Millisecond, Seed: seedFor(seed, m.name, "rms")}, func(t properties.TB) {
					properties.RMSNormForwardContract(t, impl)
				})
				o := q.Outcomes()[properties.RMSFwd]
				if o.Status == outcome.Falsified {
					kills++
					sum += o.Checks
					row += fmt.Sprintf("%4d", o.Checks)
				} else {
					row += "   -"
				}
			}
			mean := math.NaN()
			if kills > 0 {
				mean = float64(sum) / float64(kills)
			}
			totals[share] += kills
			fmt.Fprintf(&b, "%-14s %-9v %s  %2d/%d  %.1f\n", m.name, share, row, kills, seeds, mean)
		}
	}
	t.Log("\n" + b.String())
	if totals[0.2] < totals[0] {
		t.Errorf("targeted search killed %d runs, random checks alone %d", totals[0.2], totals[0])
	}
}
