package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/kernels/cost"
	"github.com/ptxprop/ptxprop/reports"
)

// costlier returns ptx with one more instruction at the head of every loop
// (every label a later branch jumps back to): a mov to a register of its
// own, which changes no result and costs one instruction per iteration.
func costlier(t *testing.T, ptx []byte) []byte {
	t.Helper()
	lines := strings.Split(string(ptx), "\n")
	label := regexp.MustCompile(`^(\$\w+):$`)
	branch := regexp.MustCompile(`\bbra(\.uni)?\s+(\$\w+);`)
	defined := map[string]int{} // label -> line
	loops := map[int]bool{}     // lines of loop heads
	for i, l := range lines {
		if m := label.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			defined[m[1]] = i
		}
		if m := branch.FindStringSubmatch(l); m != nil {
			if at, ok := defined[m[2]]; ok && at < i {
				loops[at] = true
			}
		}
	}
	if len(loops) == 0 {
		t.Fatal("the PTX has no loop")
	}
	var out []string
	for i, l := range lines {
		out = append(out, l)
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), ".reg .b32"):
			out = append(out, "\t.reg .b32 \t%rcost;")
		case loops[i]:
			out = append(out, "\tmov.u32 \t%rcost, 0;")
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// TestReportDiffFlagsCostlierKernel measures rmsnorm_fwd with the cost
// probe twice (the same counts: no changes) and once with an instruction
// planted in its loops: report diff calls that a regression and exits 1.
func TestReportDiffFlagsCostlierKernel(t *testing.T) {
	k, ok := kernels.Lookup("rmsnorm_fwd")
	if !ok {
		t.Fatal("no rmsnorm_fwd")
	}
	measure := func(k *kernels.Kernel) string {
		costs, err := cost.Measure(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(t, func(r *reports.Report) {
			r.Kernels = []reports.Kernel{{Name: k.Name, Origin: reports.KernelUser}}
			r.Costs = costs
		})
	}
	before, again := measure(k), measure(k)
	planted := measure(k.WithPTX(costlier(t, k.PTX)))
	runCases(t, []cliCase{
		{[]string{"report", "diff", before, again}, 0, "no changes", ""},
		{[]string{"report", "diff", before, planted}, 1, fmt.Sprintf("regression   cost %s rows=", k.Name), ""},
		{[]string{"report", "diff", planted, before}, 0, fmt.Sprintf("improvement  cost %s rows=", k.Name), ""},
	})
}
