package emu

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestParallelReusesState runs one launch whose CTAs write disjoint words
// three times on a Backend: each run must again be parallel (state kept
// from the one before — page structures, private pages, summaries — must
// come back clean, or it reads as a conflict) and give the same words.
func TestParallelReusesState(t *testing.T) {
	e := newEnvSrc(t, "chain.ptx", []byte(chainPTX), Config{})
	e.b.workers = 4
	for run := 1; run <= 3; run++ {
		p := e.in(make([]int32, 65))
		e.mustLaunch("chain", 64, 32, cudart.InOut(p), cudart.ScalarI32(0))
		for c, got := range e.i32s(p)[:64] {
			if got != 1 {
				t.Fatalf("run %d: p[%d] = %d, want 1", run, c, got)
			}
		}
		if e.b.parallelRuns != run {
			t.Fatalf("run %d: %d launches ran in parallel, want %d", run, e.b.parallelRuns, run)
		}
	}
}
