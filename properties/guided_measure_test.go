package properties_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// firstCover watches a run's Coverage: after each check (each Since call
// of guided generation) it notes, for every branch direction of kernel k
// not covered before, the check (from 1) that covered it.
type firstCover struct {
	*emu.Coverage
	sum, entry string
	checks     int
	first      map[string]int // "line direction" → check
}

func newFirstCover(k *kernels.Kernel) *firstCover {
	s := sha256.Sum256(k.PTX)
	return &firstCover{Coverage: emu.NewCoverage(), sum: hex.EncodeToString(s[:]), entry: k.Name, first: map[string]int{}}
}

func (f *firstCover) Since(mark uint64, fn func(string, int, bool)) {
	f.Coverage.Since(mark, fn)
	f.checks++
	kc, ok := f.Coverage.Kernel(f.sum, f.entry)
	if !ok {
		return
	}
	for _, b := range kc.Branches {
		for _, d := range []struct {
			name string
			on   bool
		}{{"taken", b.Taken}, {"not taken", b.NotTaken}} {
			key := fmt.Sprintf("%d %s", b.Line, d.name)
			if _, ok := f.first[key]; d.on && !ok {
				f.first[key] = f.checks
			}
		}
	}
}

// coverRun runs RMS-FWD-001 on a fresh emulator for checks checks from
// seed, guided at share, and returns when each branch direction of k was
// first covered and the checks that reported their coverage.
func coverRun(t *testing.T, k *kernels.Kernel, share float64, seed uint64, checks int) (map[string]int, int) {
	t.Helper()
	fc := newFirstCover(k)
	opts := cudart.DefaultOptions()
	opts.Backend = emu.Options{Config: emu.Config{Coverage: fc.Coverage}}
	dev, err := cudart.Open("emu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	g, err := properties.NewGuidance(share, fc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := properties.Config{Device: dev, Guide: g}
	suite.RunContract("guided/measure", cfg, suite.Rapid{Checks: checks, Exact: true, Seed: seed}, func(t properties.TB) {
		properties.RMSNormForwardContract(t, kernels.RMSNormFwd)
	})
	return fc.first, fc.checks
}

// TestGuidedChecksToCover measures what coverage-guided generation buys:
// the checks RMS-FWD-001 takes to cover one branch direction of
// rmsnorm_fwd that random checks reach late or not at all within the
// budget, unguided and at share 0.3, over eight seeds; it logs the table.
// It fails when guided generation never ran (no check reported its
// coverage). Long: skipped under -short.
func TestGuidedChecksToCover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long: 8 seeds × 2 modes × 150 checks")
	}
	const budget, seeds, dir = 150, 8, "183 not taken" // @%p11 bra, on setp.le.u64 %p11, %rd2, %rd3
	var b strings.Builder
	fmt.Fprintf(&b, "checks until rmsnorm_fwd line %s is covered, RMS-FWD-001, budget %d (-: not covered)\n%-7s %-40s covered  mean\n", dir, budget, "guided", "seed 1 … 8")
	for _, share := range []float64{0, 0.3} {
		row, n, sum := "", 0, 0
		for seed := uint64(1); seed <= seeds; seed++ {
			first, checks := coverRun(t, kernels.RMSNormFwd.K, share, seed*7919, budget)
			if checks == 0 {
				t.Fatalf("share %v seed %d: no check reported its coverage", share, seed)
			}
			if c, ok := first[dir]; ok {
				row += fmt.Sprintf("%5d", c)
				n, sum = n+1, sum+c
			} else {
				row += "    -"
			}
		}
		fmt.Fprintf(&b, "%-7v %-40s %d/%d    %.1f\n", share, row, n, seeds, float64(sum)/float64(max(n, 1)))
	}
	t.Log("\n" + b.String())
}

// TestGuidedReproducible checks that a guided run is a function of its
// seed: two runs of one loop from one seed cover the same directions at
// the same checks.
func TestGuidedReproducible(t *testing.T) {
	t.Parallel()
	a, _ := coverRun(t, kernels.RMSNormFwd.K, 0.5, 4242, 40)
	b, _ := coverRun(t, kernels.RMSNormFwd.K, 0.5, 4242, 40)
	if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("two runs from one seed:\n%v\n%v", a, b)
	}
}
