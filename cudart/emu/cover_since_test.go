package emu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestCoverageSince checks that Since reports what the launches after a
// Mark set, those already set before included, and nothing of earlier
// launches.
func TestCoverageSince(t *testing.T) {
	cov := NewCoverage()
	e := newEnvSrc(t, "cover.ptx", []byte(coverPTX), Config{Coverage: cov})
	since := func(mark uint64) []string {
		var out []string
		cov.Since(mark, func(k string, pc int, held bool) { out = append(out, fmt.Sprint(pc, held)) })
		slices.Sort(out)
		return out
	}
	x := e.in([]float32{-1, 2, 3, 4})
	y := e.buf(cudart.U32, 4)
	m0 := cov.Mark()
	e.mustLaunch("cover", 1, 32, cudart.In(x), cudart.Out(y), cudart.ScalarU32(4))
	first := since(m0)
	// The exit branch both ways, the mov's guard both ways (x[0] < 0), the
	// large-n branch taken (@!%p3: n ≤ 1000).
	if len(first) != 5 {
		t.Fatalf("after the first launch: %v, want 5 outcomes", first)
	}
	m1 := cov.Mark()
	if m1 != m0+1 || len(since(m1)) != 0 {
		t.Fatalf("mark %d after one launch from %d; since it: %v, want none", m1, m0, since(m1))
	}
	// n = 2: lanes 0, 1 go on (x −1, 2), the rest exit; the same outcomes
	// as before, all reported again since m1.
	e.mustLaunch("cover", 1, 32, cudart.In(x), cudart.Out(y), cudart.ScalarU32(2))
	if got := since(m1); !slices.Equal(got, first) {
		t.Errorf("since the second launch: %v, want %v", got, first)
	}
}
