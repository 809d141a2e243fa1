package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/reports"
)

// TestCoverageGaps checks the suite's coverage check on a report of one of
// our kernels: it passes when every uncovered direction is explained, and
// fails on an unexplained one and on an explanation of a direction the run
// took.
func TestCoverageGaps(t *testing.T) {
	d, ok := kernels.Lookup("rmsnorm_fwd")
	if !ok || len(d.Unreachable) == 0 {
		t.Fatal("rmsnorm_fwd has no Unreachable entries to test with")
	}
	sum := sha256.Sum256(d.PTX)
	k := reports.Kernel{Name: d.Name, Origin: reports.KernelOurs, PTX: path.Join("kernels", d.PTXFile), Entry: d.Entry, PTXSHA256: hex.EncodeToString(sum[:])}
	report := func(uncovered []kernels.Unreachable) *reports.Report {
		c := reports.Coverage{Kernel: k.Name, Branches: 1000, Covered: 1000 - len(uncovered)}
		for _, u := range uncovered {
			c.Uncovered = append(c.Uncovered, reports.UncoveredBranch{Line: u.Line, Direction: u.Direction, Unreachable: d.UnreachableReason(u.Line, u.Direction)})
		}
		return &reports.Report{Run: reports.Run{Backend: reports.BackendEmu, RapidChecks: CoverageChecks}, Kernels: []reports.Kernel{k}, Coverage: []reports.Coverage{c}}
	}
	r := &runner{cfg: Config{cov: emu.NewCoverage()}}
	all := append([]kernels.Unreachable{}, d.Unreachable...)
	if gaps, skip := r.coverageGaps(report(all)); len(gaps) > 0 || skip != "" {
		t.Errorf("every uncovered direction explained: gaps %q, skip %q", gaps, skip)
	}
	extra := append(all, kernels.Unreachable{Line: 99999, Direction: "taken"})
	if gaps, _ := r.coverageGaps(report(extra)); len(gaps) != 1 || !strings.Contains(gaps[0], "line 99999") {
		t.Errorf("an unexplained direction: gaps %q, want one naming line 99999", gaps)
	}
	if gaps, _ := r.coverageGaps(report(all[1:])); len(gaps) != 1 || !strings.Contains(gaps[0], "which the run took") {
		t.Errorf("an Unreachable direction covered: gaps %q, want one", gaps)
	}
	if _, skip := (&runner{}).coverageGaps(report(all)); skip == "" {
		t.Error("a run without coverage judged coverage")
	}
	if gaps, _ := r.coverageGaps(&reports.Report{Run: reports.Run{Backend: reports.BackendEmu, RapidChecks: CoverageChecks}, Kernels: []reports.Kernel{k}}); len(gaps) != 1 {
		t.Errorf("a kernel without coverage: gaps %q, want one", gaps)
	}
	// A run of fewer checks reaches rare directions by chance: reported,
	// not judged.
	few := report(extra)
	few.Run.RapidChecks = CoverageChecks - 1
	if gaps, skip := r.coverageGaps(few); len(gaps) > 0 || !strings.Contains(skip, "judged at 1000") {
		t.Errorf("a run of %d checks judged coverage: gaps %q, skip %q", few.Run.RapidChecks, gaps, skip)
	}
	// A GPU run records coverage only where the emulator ran beside the
	// GPU (PARITY-001): no verdict on the suite's coverage.
	gpu := report(extra)
	gpu.Run.Backend = reports.BackendGPU
	if gaps, skip := r.coverageGaps(gpu); len(gaps) > 0 || skip == "" {
		t.Errorf("a GPU run judged coverage: gaps %q, skip %q", gaps, skip)
	}
}
