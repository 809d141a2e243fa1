package suite

// Branch coverage: on the emulator, with -ptxprop.coverage (the default),
// the run's devices, private ones included, share one emu.Coverage, and
// the report lists, for every kernel it names, the branch directions and
// blocks the run executed, each uncovered direction with the setp that
// decides it and, for ptxprop's own kernels, the reason their descriptor
// gives for it being unreachable (kernels.Kernel.Unreachable).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/reports"
)

// addCoverage puts the coverage the run's emulators recorded for rep's
// kernels into rep.
func (r *runner) addCoverage(rep *reports.Report) {
	if r.cfg.cov == nil {
		return
	}
	for _, k := range rep.Kernels {
		if k.PTXSHA256 == "" || k.Entry == "" {
			continue
		}
		if kc, ok := r.cfg.cov.Kernel(k.PTXSHA256, k.Entry); ok {
			rep.Coverage = append(rep.Coverage, coverageOf(k, kc, descriptor(k)))
		}
	}
}

// descriptor returns the descriptor of our kernel k when k is launched
// with its committed PTX, whose lines the descriptor's explanations name;
// nil otherwise.
func descriptor(k reports.Kernel) *kernels.Kernel {
	if k.Origin != reports.KernelOurs {
		return nil
	}
	d, ok := kernels.Lookup(k.Name)
	if !ok {
		return nil
	}
	if sum := sha256.Sum256(d.PTX); hex.EncodeToString(sum[:]) != k.PTXSHA256 {
		return nil
	}
	return d
}

// coverageOf converts what the emulator recorded for kernel k, with the
// unreachable directions d explains (d may be nil).
func coverageOf(k reports.Kernel, kc emu.KernelCoverage, d *kernels.Kernel) reports.Coverage {
	c := reports.Coverage{Kernel: k.Name}
	c.Covered, c.Branches = kc.Directions()
	c.BlocksCovered, c.Blocks = kc.BlocksCovered()
	c.GuardsCovered, c.Guards = kc.GuardOutcomes()
	for _, b := range kc.Blocks {
		if !b.Covered {
			c.UncoveredBlocks = append(c.UncoveredBlocks, b.Line)
		}
	}
	for _, b := range kc.Branches {
		for _, dir := range []struct {
			name    string
			covered bool
		}{{"taken", b.Taken}, {"not taken", b.NotTaken}} {
			if dir.covered {
				continue
			}
			u := reports.UncoveredBranch{Line: b.Line, Direction: dir.name, Guard: b.Guard, Condition: b.Condition, ConditionLine: b.ConditionLine}
			if d != nil {
				u.Unreachable = d.UnreachableReason(b.Line, dir.name)
			}
			c.Uncovered = append(c.Uncovered, u)
		}
	}
	return c
}

// CoverageChecks is the least number of checks per contract run at which
// a complete run's coverage is judged: the count CI runs the suite at
// (.ci/run), where every direction not explained as unreachable is
// reached. A run of fewer checks reaches the rare ones by chance — a row
// length drawn once in a few hundred checks — so its coverage is
// reported, not judged.
const CoverageChecks = 1000

// coverageGaps returns what is wrong with the coverage of ptxprop's own
// kernels in rep, a complete run's report: a kernel no launch recorded, a
// branch direction left uncovered that its descriptor neither explains
// (Unreachable) nor lists as reached by chance (CoverageGaps), and an explanation of a direction that is no branch of
// the PTX or that the run took. It returns nothing, and why, for a run
// that cannot judge: not on the emulator with coverage on, partial or
// sharded.
func (r *runner) coverageGaps(rep *reports.Report) (gaps []string, skip string) {
	switch {
	case r.cfg.cov == nil:
		return nil, "no coverage recorded (-ptxprop.coverage=false, or not on the emulator)"
	case rep.Run.Backend != reports.BackendEmu:
		// The GPU's launches record nothing; what the emulator ran beside
		// them (PARITY-001) is not the suite's coverage.
		return nil, fmt.Sprintf("the run's backend is %s: only a run on the emulator covers every kernel", rep.Run.Backend)
	case r.shard != nil:
		return nil, "a shard covers part of the work"
	case rep.Partial():
		return nil, "the run is partial (some prediction did not run)"
	case rep.Run.RapidChecks < CoverageChecks:
		return nil, fmt.Sprintf("the run has %d checks per contract run; coverage is judged at %d or more, where every reachable direction is reached",
			rep.Run.RapidChecks, CoverageChecks)
	}
	for _, k := range rep.Kernels {
		d := descriptor(k)
		if d == nil {
			continue
		}
		c := rep.KernelCoverage(k.Name)
		if c == nil {
			gaps = append(gaps, fmt.Sprintf("%s: no launch on the emulator recorded its coverage", k.Name))
			continue
		}
		for _, u := range c.Unexplained() {
			if !d.KnownGap(u.Line, u.Direction) { // reached by chance (CoverageGaps): a miss is no failure
				gaps = append(gaps, fmt.Sprintf("%s (%s): %s is uncovered and kernel %s's Unreachable does not explain it", k.Name, k.PTX, u, k.Name))
			}
		}
		uncovered := map[string]bool{}
		for _, u := range c.Uncovered {
			uncovered[fmt.Sprint(u.Line, u.Direction)] = true
		}
		for _, u := range d.Unreachable {
			if !uncovered[fmt.Sprint(u.Line, u.Direction)] {
				gaps = append(gaps, fmt.Sprintf("%s (%s): Unreachable names line %d %s, which the run took or which is no branch direction", k.Name, k.PTX, u.Line, u.Direction))
			}
		}
	}
	return gaps, ""
}
